"""What ``ref check`` records (``RefFinding``, ``PathRun``) and the helpers its path and reject checks share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..contract.model import BoundCase
from ..errors import ShapecheckError, said
from ..rules import RULES, RuleCode

SIDE_CAP = 8192  # no generated dim exceeds this (sizes stay small; boundaries such as 4096 stay reachable)


@dataclass(frozen=True)
class RefFinding:
    code: RuleCode
    era: str
    path: str
    case: str
    sizes: dict[str, int]
    message: str
    suppressed: str = ""  # the reason, when a contract suppression matches

    @property
    def kind(self) -> str:
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
    text = said(err).strip().splitlines()
    return text[0][:240] if text else ""


class MetaRefuses(Exception):
    """The op's meta kernel raised on an input (``error``: what it raised)."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


def meta_outputs(case: BoundCase, sizes: dict[str, int]) -> tuple[Any, ...]:
    """The op's installed fake kernel (the one torch.export runs: ``kernel.resolved``) on ``case`` at ``sizes``,
    run as torch runs fakes (FakeTensorMode with a ShapeEnv, backed sizes at ``sizes``: ``fake_run``): its
    outputs as meta tensors (``DataDependent`` where the data decides a size). What the kernel raises comes as
    ``MetaRefuses``; what shapecheck raises while resolving the op or making the arguments (bad input, a bug)
    propagates as it is, never taken for the kernel refusing."""
    from ..contract.find import normalize_op
    from ..kernel.resolved import installed_kernel
    from ..kernel.sources import NotApplicable
    from ..trace.fake_run import fake_run

    kernel = installed_kernel(normalize_op(case.contract.op))
    try:
        run = fake_run(kernel, case, dict(sizes))
    except NotApplicable as err:  # the kernel takes no such argument: it refuses the case
        raise MetaRefuses(err) from err
    if isinstance(run.error, ShapecheckError):
        raise run.error
    if run.error is not None:  # the fake kernel itself: any exception it raises is its refusal
        raise MetaRefuses(run.error) from run.error
    return tuple(run.outputs)
