"""verify's results as data: ``PathCheck``, ``CaseResult``, ``Report`` (findings are ``findings.Violation``), and
their JSON form (``to_json``). ``render.text`` shows them to people."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..codec import TRANSIENT
from ..findings import Verdict, Violation


@dataclass(frozen=True)
class PathCheck:
    path: str
    status: str  # proved | refuted | unreachable | unknown | partial | unchecked


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
    path_map: Any = field(default=None, metadata=TRANSIENT)  # prove.pathmap.PathMap with --explore
    export: Any = field(default=None, metadata=TRANSIENT)  # prove.export.ExportResult with --confirm-export
    outputs: tuple[tuple[str, ...], ...] = ()  # the symbolic output shapes of the finished traces
    notes: tuple[str, ...] = ()  # remarks that do not change the verdict (a data-dependent size's precision)

    def to_json(self) -> dict[str, Any]:
        extra = {} if self.path_map is None else {"explore": self.path_map.to_json()}
        if self.export is not None:
            extra["export"] = self.export.to_json()
        return extra | {"case": self.case, "verdict": self.verdict.value, "traces": self.traces,
                "meta_paths": self.meta_paths, "truncated": self.truncated, "skipped": self.skipped or None,
                "shared_with": self.shared_with or None,
                "paths": {p.path: p.status for p in self.paths}, "outputs": [list(o) for o in self.outputs]} | ({"notes": list(self.notes)} if self.notes else {})


@dataclass
class Report:
    op: str
    contract: str
    kernel: str
    verdict: Verdict
    cases: list[CaseResult] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    seconds: float = 0.0
    torch_version: str = ""
    extra: dict[str, Any] = field(default_factory=dict, metadata=TRANSIENT)
    # where torch.export and plain FakeTensorMode run different kernels: (which runs, kernel, verdict) each
    kernel_modes: tuple[tuple[str, str, str], ...] = ()
    notes: tuple[str, ...] = ()  # which kernel torch runs, where the user should know (in words)

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code

    def to_json(self) -> dict[str, Any]:
        out = {"op": self.op, "contract": self.contract, "kernel": self.kernel, "verdict": self.verdict.value,
               "torch": self.torch_version, "cases": [c.to_json() for c in self.cases],
               "violations": [v.to_json() for v in self.violations if not v.suppressed],
               "suppressed": [v.to_json() for v in self.violations if v.suppressed],
               "seconds": round(self.seconds, 3)}
        if self.kernel_modes:
            out["kernel_modes"] = [{"runs": m, "kernel": k, "verdict": v} for m, k, v in self.kernel_modes]
        if self.notes:
            out["notes"] = list(self.notes)
        out.update(self.extra)
        return out
