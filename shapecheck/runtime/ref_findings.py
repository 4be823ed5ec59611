"""What ``ref check`` records (``RefFinding``, ``PathRun``) and the helpers its path and reject checks share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..contract.model import BoundCase

SIDE_CAP = 8192  # no generated dim exceeds this (sizes stay small; boundaries such as 4096 stay reachable)


@dataclass(frozen=True)
class RefFinding:
    code: str
    era: str
    path: str
    case: str
    sizes: dict[str, int]
    message: str
    suppressed: str = ""  # the reason, when a contract suppression matches

    @property
    def kind(self) -> str:
        from ..rules import RULES

        return RULES[self.code].name

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "kind": self.kind, "era": self.era, "path": self.path, "case": self.case,
                "sizes": self.sizes, "message": self.message, "suppressed": self.suppressed or None}


@dataclass
class PathRun:
    era: str
    path: str
    points: int = 0
    findings: list[RefFinding] = field(default_factory=list)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"era": self.era, "path": self.path, "points": self.points, "failed": len(self.findings),
                "note": self.note or None}


def first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:240] if text else ""


def meta_outputs(case: BoundCase, sizes: dict[str, int]) -> tuple[Any, ...]:
    """The op's installed fake kernel (the one torch.export runs: ``kernel.resolved``) on ``case`` at ``sizes``,
    run as torch runs fakes (FakeTensorMode with a ShapeEnv, backed sizes at ``sizes``: ``fake_run``): its
    outputs as meta tensors (``DataDependent`` where the data decides a size); raises what it raises."""
    from ..contract.find import normalize_op
    from ..kernel.resolved import installed_kernel
    from .fake_run import fake_run

    run = fake_run(installed_kernel(normalize_op(case.contract.op)), case, dict(sizes))
    if run.error is not None:
        raise run.error
    return tuple(run.outputs)
