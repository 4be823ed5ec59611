"""One op's kernel traced on its inputs with every dim an unbacked size, and what the audit's exploration of it
records (``OpAudit``, its ``Finding``s): the part of ``audit.explore`` that runs torch once per region."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._torch import audit as CA
from .._torch import core as C
from ..findings import SourceLoc
from ..kernel.sources import Kernel
from ..logic import expr as E
from ..trace.run import (
    Failed,
    Guarded,
    Trace,
    facts_so_far,
    fallbacks_of,
    finished_trace,
    first_line,
    guard_trace,
    kernel_failure,
    missing_name,
    own_code,
)
from .classify import CLASSES
from .inputs import OpInputs, materialize

MIN_SIZE, MAX_SIZE = 0, 2**31 - 1  # every dim's range: any size torch can index


@dataclass
class Finding:
    cls: str  # an audit_classify.CLASSES key
    expr: str
    loc: SourceLoc | None
    counterexample: dict[str, int]
    witness: dict[str, int] | None
    message: str

    @property
    def code(self) -> str:
        return CLASSES[self.cls]


@dataclass
class OpAudit:
    inputs: OpInputs
    findings: list[Finding] = field(default_factory=list)
    requires: list[tuple[str, SourceLoc | None, str]] = field(default_factory=list)  # (expr, line, evidence)
    notes: list[str] = field(default_factory=list)  # what was left unresolved (a z3 unknown, the trace bound)
    traces: int = 0
    leaves: int = 0
    paths: list[dict] = field(default_factory=list)  # the first finished traces: {"when", "outputs"} in dim names
    points: list[dict[str, int]] = field(default_factory=list)  # both sides of each guard (for the eager check)


def trace_inputs(kernel: Kernel, inputs: OpInputs, assumptions: list[E.Node]) -> Trace:
    """The kernel on ``inputs`` with every dim an unbacked size in [MIN_SIZE, MAX_SIZE], under assumptions."""
    with C.TraceEnv(own_code(kernel)) as env:  # a torch kernel's own code objects too (its guard_or_* answers)
        syms = {d: env.size(MIN_SIZE, MAX_SIZE) for d, _ in inputs.dims()}
        names = {C.symbol_of(s): n for n, s in syms.items()}
        for a in assumptions:
            C.assume(a, syms)
        env.mark_baseline()
        args, kwargs = materialize(inputs, lambda dims, _e, dtype, _f: CA.empty([syms[d] for d in dims], dtype),
                                   lambda d, _e: syms[d])
        try:
            result = kernel.fn(*args, **kwargs)
        except C.GuardError as exc:
            t = guard_trace(exc, names, kernel)
            loc = CA.audit_frame(list(t.frames), kernel.located_in)
            if isinstance(t, Guarded):
                return Guarded(t.guard, t.guard_raw, loc, t.is_specialization, t.frames, t.guard_expr,
                               facts=facts_so_far(env, names))
            return Failed(t.error, loc, frames=t.frames)
        except C.DATA_ERRORS as exc:
            frames = C.exception_frames(exc)
            return Failed(f"data-dependent: {type(exc).__name__}: {first_line(exc)}",
                          CA.audit_frame(frames, kernel.located_in), frames=tuple(frames))
        except BaseException as exc:  # noqa: BLE001 - the kernel's own error: judged by the explorer
            if not kernel_failure(exc):
                raise
            frames = C.exception_frames(exc)
            return Failed(f"{type(exc).__name__}: {first_line(exc)}", CA.audit_frame(frames, kernel.located_in),
                          missing_name(exc), tuple(frames), fallbacks_of(env, names))
        return finished_trace(env, result, names, kernel.located_in, None, locate=CA.audit_frame)
