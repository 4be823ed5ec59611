"""Results as every renderer takes them: a ``RunResult`` holds one ``ContractRun`` (a contract, its verify-style
``Report``, and what the run judged of its suppressions) per contract. The gate's is a ``RunResult``; verify's a
``VerifyRun``; fuzz's a ``FuzzRun`` and ref check's a ``RefRun``, which carry the command's own report besides
(its findings, made ``Finding``s by the report itself, fill the ``Report``). So text, JSON, JUnit, SARIF and
GitHub output exist for every command, and a renderer picks a result's own text or JSON by its type
(``render.ci.FORMATS``), never by the command's name.

Torch-free: renderers import this without loading torch or z3.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from ..contract import suppressions
from ..contract.spec import ContractInfo
from ..edges import JSON
from ..findings import Finding, SourceLoc, Verdict
from ..kernel.sources import INSTALLED, Installed, KernelSource
from ..rules import Command
from .report import CaseResult, Report


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

    def to_json(self) -> dict[str, JSON]:
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
    """What one command run found, for every renderer: one ``ContractRun`` per contract checked (the gate's)."""

    runs: list[ContractRun]
    total_contracts: int  # in the whole set, all shards
    shard: tuple[int, int]
    seconds: float
    torch_version: str
    source: KernelSource = INSTALLED
    command: ClassVar[Command] = Command.GATE  # names the tool run in every format (data, never a branch)

    @property
    def meta_source(self) -> str | None:
        """The kernel file the run checked (JSON ``meta_source``); None for the installed torch."""
        return None if isinstance(self.source, Installed) else str(self.source)

    @property
    def verdict(self) -> Verdict:
        return Verdict.worst(r.verdict for r in self.runs)

    @property
    def errors(self) -> list[ContractRun]:
        return [r for r in self.runs if r.error]

    @property
    def exit_code(self) -> int:
        """The verdict's code, or 2 when a contract could not run (bad input the others did not stop)."""
        return 2 if self.errors else self.verdict.exit_code


GateResult = RunResult  # the gate's name for it


@dataclass
class VerifyRun(RunResult):
    """``verify op``: one contract; its text and JSON are its report's own (``render.text``)."""

    command: ClassVar[Command] = Command.VERIFY

    @classmethod
    def of(cls, contract: ContractInfo, report: Report, source: KernelSource = INSTALLED) -> VerifyRun:
        return cls([ContractRun(contract, report)], 1, (1, 1), report.seconds, report.torch_version, source)


class RuntimeReport(Protocol):
    """What a ``FuzzRun`` or ``RefRun`` needs of the command's own report (``runtime.fuzz_report.FuzzReport``,
    ``runtime.refcheck.RefReport``): its verdict, its findings as ``Finding``s, and its JSON document."""

    op: str
    contract: str
    verdict: Verdict
    seconds: float

    def as_findings(self) -> tuple[Finding, ...]: ...

    def to_json(self) -> dict[str, JSON]: ...


class FuzzLike(RuntimeReport, Protocol):
    """A ``FuzzReport``: also the kernel it fuzzed and the torch version it ran."""

    kernel: str
    torch: str


def _cases(findings: tuple[Finding, ...], everything: str) -> tuple[CaseResult, ...]:
    """One case result per case with findings (fail unless every finding is suppressed); one passing entry
    named ``everything`` when there is none."""
    by_case: dict[str, list[Finding]] = {}
    for v in findings:
        by_case.setdefault(v.case, []).append(v)
    if not by_case:
        return (CaseResult(everything, Verdict.PASS),)
    return tuple(CaseResult(case, Verdict.PASS if all(v.suppressed for v in vs) else Verdict.FAIL)
                 for case, vs in by_case.items())


def _runtime_run(contract: ContractInfo, own: RuntimeReport, kernel: str, torch: str, everything: str) -> ContractRun:
    findings = own.as_findings()
    report = Report(own.op, own.contract, kernel, own.verdict, _cases(findings, everything), findings, own.seconds,
                    torch)
    return ContractRun(contract, report)


@dataclass
class FuzzRun(RunResult):
    """``fuzz op``: its own text and JSON are the ``FuzzReport``'s (``fuzz``); each shrunk failure is a finding."""

    command: ClassVar[Command] = Command.FUZZ
    fuzz: FuzzLike = field(kw_only=True)  # a runtime.fuzz_report.FuzzReport

    @classmethod
    def of(cls, contract: ContractInfo, fuzz: FuzzLike, source: KernelSource = INSTALLED) -> FuzzRun:
        run = _runtime_run(contract, fuzz, fuzz.kernel, fuzz.torch, "generated examples")
        return cls([run], 1, (1, 1), fuzz.seconds, fuzz.torch, source, fuzz=fuzz)


@dataclass
class RefRun(RunResult):
    """``ref check``: its own text and JSON are the ``RefReport``'s (``ref``); each runtime finding is a finding
    on its contract path."""

    command: ClassVar[Command] = Command.REF
    ref: RuntimeReport = field(kw_only=True)  # a runtime.refcheck.RefReport

    @classmethod
    def of(cls, contract: ContractInfo, ref: RuntimeReport, torch: str) -> RefRun:
        run = _runtime_run(contract, ref, "runtime reference", torch, "sampled inputs")
        return cls([run], 1, (1, 1), ref.seconds, torch, INSTALLED, ref=ref)
