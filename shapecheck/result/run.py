"""Results as every renderer takes them: a ``RunResult`` holds one ``ContractRun`` (a contract, its verify-style
``Report``, and what the run judged of its suppressions) per contract. verify, gate, fuzz and ref check all
produce one, so text, JSON, JUnit, SARIF and GitHub output exist for every command.

Torch-free: renderers import this without loading torch or z3.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from ..contract import suppressions
from ..contract.spec import ContractInfo
from ..findings import Finding, SourceLoc, Verdict
from ..kernel.sources import INSTALLED, Installed, KernelSource
from .report import Report


@dataclass(frozen=True)
class ExpiredSuppression:
    """A ``[[suppress]]`` table past its ``expires`` date: it no longer suppresses anything."""

    rule: str
    reason: str
    expires: str
    location: SourceLoc  # the contract file, at the table's header
    matched: int  # violations of this run it would have suppressed (they count again)


@dataclass
class ContractRun:
    contract: ContractInfo  # a loaded contract's ``info``, or the result cache's copy of it
    report: Report
    kernel_note: str = ""  # why the kernel is not the one asked for (--meta-source without this op)
    stale: list[Finding] = field(default_factory=list)  # SC008, located at the [[suppress]] table
    expired: list[ExpiredSuppression] = field(default_factory=list)
    error: str = ""  # bad input that kept this contract from running (its op unknown, its kernel not loadable)
    judged: bool = False  # the gate judged its suppressions: its JSON has kernel_note, stale and expired ones

    def to_json(self) -> dict[str, Any]:
        """Its report's JSON document, with the gate's own fields when the gate judged it."""
        doc = self.report.to_json()
        if self.judged:
            doc["kernel_note"] = self.kernel_note or None
            doc["stale_suppressions"] = [v.to_json() for v in self.stale]
            doc["expired_suppressions"] = [
                {"rule": e.rule, "reason": e.reason, "expires": e.expires, "matched": e.matched,
                 "location": {"file": e.location.file, "line": e.location.line}} for e in self.expired]
        return doc

    @functools.cached_property
    def suppress_locs(self) -> list[SourceLoc]:
        """Per ``[[suppress]]`` table, by index: its header in the contract file (recorded when it loaded)."""
        return [SourceLoc(self.contract.file, s.line or 1, f"suppress[{s.index}]", "[[suppress]]")
                for s in self.contract.suppressions]

    def suppressed_at(self, v: Finding) -> SourceLoc:
        """The ``[[suppress]]`` table that suppressed ``v`` (the first in force that matches, as in verify)."""
        for s in suppressions.in_force(self.contract.suppressions):
            if suppressions.matches(s, v) and s.index < len(self.suppress_locs):
                return self.suppress_locs[s.index]
        return SourceLoc(self.contract.file, 1)

    @property
    def verdict(self) -> Verdict:
        return Verdict.FAIL if self.stale else self.report.verdict


@dataclass
class RunResult:
    """What one command run found, for every renderer: one ``ContractRun`` per contract checked."""

    runs: list[ContractRun]
    total_contracts: int  # in the whole set, all shards
    shard: tuple[int, int]
    seconds: float
    torch_version: str
    source: KernelSource = INSTALLED
    command: str = "gate"  # gate | verify | fuzz | ref check: names the tool run in every format
    native: Any = None  # the command's own report (fuzz, ref check): its text and JSON are its own

    @property
    def meta_source(self) -> str | None:
        """The kernel file the run checked (JSON ``meta_source``); None for the installed torch."""
        return None if isinstance(self.source, Installed) else str(self.source)

    @property
    def verdict(self) -> Verdict:
        verdicts = {r.verdict for r in self.runs}
        if Verdict.FAIL in verdicts:
            return Verdict.FAIL
        if Verdict.INCONCLUSIVE in verdicts:
            return Verdict.INCONCLUSIVE
        return Verdict.PASS

    @property
    def errors(self) -> list[ContractRun]:
        return [r for r in self.runs if r.error]

    @property
    def exit_code(self) -> int:
        """The verdict's code, or 2 when a contract could not run (bad input the others did not stop)."""
        return 2 if self.errors else self.verdict.exit_code


GateResult = RunResult  # the gate's name for it
