"""verify's results as data: ``PathCheck``, ``CaseResult``, ``Report`` (findings are ``findings.Finding``), and
their JSON form (``to_json``). ``render.text`` shows them to people."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ..codec import TRANSIENT
from ..edges import JSON
from ..findings import Finding, PathId, PathStatus, Verdict


class JsonDocument(Protocol):
    """What a report needs of a result it carries for this run only (``CaseResult.path_map``, ``export``): its
    JSON document. The types are ``prove``'s, a later layer; the renderers, later still, name them."""

    def to_json(self) -> dict[str, JSON]: ...


@dataclass(frozen=True)
class PathCheck:
    path: PathId
    status: PathStatus


@dataclass(frozen=True)
class ShownObligation:
    """An obligation discharged in a case, as ``verify op --show-obligations`` prints it (``prove.obligations``
    builds it)."""

    kind: str  # guard | value | assert | range | replacement | output
    what: str  # what is proved
    premises: tuple[str, ...]  # besides the domain
    line: str  # FILE:LINE of the kernel, or ""
    key: str  # the contract key it comes from
    status: PathStatus  # proved | refuted | unknown

    def to_json(self) -> dict[str, JSON]:
        return {"kind": self.kind, "what": self.what, "premises": list(self.premises), "line": self.line or None,
                "contract": self.key, "status": self.status}


CRASHED = "crashed: "  # the start of a crashed case's ``skipped``: "crashed: the process died of SIGSEGV"


@dataclass(frozen=True)
class CaseResult:
    case: str
    verdict: Verdict
    traces: int = 0
    meta_paths: int = 0
    paths: tuple[PathCheck, ...] = ()
    skipped: str = ""
    truncated: bool = False
    shared_with: str = ""  # its first violating guard was explored in that case first: traced on its regions
    path_map: JsonDocument | None = field(default=None, metadata=TRANSIENT)  # prove.pathmap.PathMap with --explore
    export: JsonDocument | None = field(default=None, metadata=TRANSIENT)  # prove.export.ExportResult (--confirm-export)
    outputs: tuple[tuple[str, ...], ...] = ()  # the symbolic output shapes of the finished traces
    notes: tuple[str, ...] = ()  # remarks that do not change the verdict (a data-dependent size's precision)
    obligations: tuple[ShownObligation, ...] = ()  # with --show-obligations only

    @property
    def crashed(self) -> bool:
        """The case's process died while it was checked (prove/crashes.py): not checked, and a finding."""
        return self.skipped.startswith(CRASHED)

    def to_json(self) -> dict[str, JSON]:
        extra = {} if self.path_map is None else {"explore": self.path_map.to_json()}
        if self.export is not None:
            extra["export"] = self.export.to_json()
        return extra | {"case": self.case, "verdict": self.verdict.value, "traces": self.traces,
                "meta_paths": self.meta_paths, "truncated": self.truncated, "skipped": self.skipped or None,
                "shared_with": self.shared_with or None,
                "paths": {str(p.path): p.status.value for p in self.paths}, "outputs": [list(o) for o in self.outputs]} | ({"notes": list(self.notes)} if self.notes else {}) | (
                {"obligations": [o.to_json() for o in self.obligations]} if self.obligations else {})


@dataclass(frozen=True)
class CacheNote:
    """A report answered from the result cache: when the run that stored it ran, and the entry's key."""

    stored_at: str  # ISO time
    key: str  # the entry's key digest, as reports show it (16 hex digits)

    def to_json(self) -> dict[str, JSON]:
        return {"hit": True, "stored_at": self.stored_at, "key": self.key}


@dataclass(frozen=True)
class KernelMode:
    """One of the two kernels of an op whose ways of running differ (``prove.modes``): which ways run it, the
    kernel, and its verdict against the contract."""

    runs: str  # in words: "torch.export, torch.compile (the Python dispatcher)", "plain FakeTensorMode"
    kernel: str
    verdict: Verdict

    def to_json(self) -> dict[str, JSON]:
        return {"runs": self.runs, "kernel": self.kernel, "verdict": self.verdict.value}


@dataclass(frozen=True)
class Report:
    """verify's result for one contract (the gate's per contract). ``cache`` and ``error`` are this run's, never
    stored in the result cache."""

    op: str
    contract: str
    kernel: str
    verdict: Verdict
    cases: tuple[CaseResult, ...] = ()
    violations: tuple[Finding, ...] = ()
    seconds: float = 0.0
    torch_version: str = ""
    cache: CacheNote | None = field(default=None, metadata=TRANSIENT)  # answered from the result cache
    error: str = field(default="", metadata=TRANSIENT)  # bad input kept the contract from running (the gate)
    # where torch.export and plain FakeTensorMode run different kernels: each one's verdict
    kernel_modes: tuple[KernelMode, ...] = ()
    notes: tuple[str, ...] = ()  # which kernel torch runs, where the user should know (in words)

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"op": self.op, "contract": self.contract, "kernel": self.kernel,
                               "verdict": self.verdict.value,
               "torch": self.torch_version, "cases": [c.to_json() for c in self.cases],
               "violations": [v.to_json() for v in self.violations if not v.suppressed],
               "suppressed": [v.to_json() for v in self.violations if v.suppressed],
               "seconds": round(self.seconds, 3)}
        if self.kernel_modes:
            out["kernel_modes"] = [m.to_json() for m in self.kernel_modes]
        if self.notes:
            out["notes"] = list(self.notes)
        if self.cache is not None:
            out["cache"] = self.cache.to_json()
        if self.error:
            out["error"] = self.error
        return out
