"""The audit's record of one op, typed: what ``audit.run.audit_op`` returns and the result cache stores and
reads back (``codec``): each key's meaning is in ``audit.run``'s docstring."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class AuditLoc(TypedDict):
    file: str
    line: int
    function: str
    text: str


#: one finding of an op's record ("class" is a keyword, hence the functional form); ``variant``: the arguments
#: beyond the first inputs under which it shows ("" for the first inputs)
AuditFinding = TypedDict("AuditFinding", {"code": str, "class": str, "expr": str, "location": AuditLoc | None,
                                          "counterexample": dict[str, int], "witness": dict[str, int] | None,
                                          "message": str, "variant": NotRequired[str],
                                          "baselined": NotRequired[str]})


class AuditEager(TypedDict):
    """The fake against the eager kernel on one op: ``status`` is ``compared``, ``rejected`` (the eager kernel
    took none of the inputs tried), ``none`` (no eager kernel on the device), ``off`` or ``crashed``."""

    device: str
    status: str
    points: int
    compared: int
    formula_points: int
    crashes: int
    evidence: str


class _AuditVariantKeys(TypedDict):
    args: str
    status: str  # traced | fake-rejects | both-reject | eager-only
    traces: int


class AuditVariant(_AuditVariantKeys, total=False):
    finished: int  # of a traced variant: its traces that returned
    compared: int  # of a traced variant: the points its outputs were compared with the eager kernel's at


class AuditRequire(TypedDict):
    expr: str
    location: AuditLoc | None
    evidence: str


class AuditPath(TypedDict):
    when: str
    outputs: list[str | None]


class AuditOtherMode(TypedDict):
    """Plain FakeTensorMode's kernel where torch.export runs another: its name, the runs that reach it, the
    points it ran at and was compared with the eager kernel, and its disagreements (``counted``: --both-modes)."""

    kernel: str
    modes: str
    points: int
    compared: int
    counted: bool
    findings: list[AuditFinding]


class _AuditRecordKeys(TypedDict):
    op: str
    kernel: str
    definition: AuditLoc | None
    inputs: str | None
    example: str
    status: str
    findings: list[AuditFinding]
    requires: list[AuditRequire]
    notes: list[str]
    traces: int
    seconds: float


class AuditRecord(_AuditRecordKeys, total=False):
    """One op's record, as the result cache reads it back (the module docstring says what each key means); the
    keys here may be absent (a record of an op that was not run has none of them)."""

    kernel_kind: str
    paths: list[AuditPath]
    eager: AuditEager
    variants: list[AuditVariant]
    cached: bool
    partial: bool  # explored only in part (a trace bound, z3 or a translation stopped it): never clean
    failure: str  # of an op not run for a reason of its input (BAD_INPUT, exit 2) or of shapecheck (INTERNAL, 4)
    finished: int  # the traces that returned: none, and nothing of the outputs was traced (never clean)
    other_mode: AuditOtherMode  # plain FakeTensorMode's own kernel, where it is not torch.export's
