"""Every counterexample is replayed before it is reported: the kernel runs at the reported point with static
sizes under FakeTensorMode (and at the other side of a guard), and the run must show the reported behaviour.

- SC002: the output differs from the contract's there;
- SC001: both sides reach the guard's line (the kernel's own bytecode, or torch's shape logic it calls
  from that line), where the guard's value differs;
- SC003: the specialised value differs between the two points;
- SC004 and SC007: the kernel raises there, at static sizes or run as torch.export runs it (backed sizes).

A finding that does not reproduce is never reported as a violation: it becomes SC005, "did not reproduce
at ...", with what the replay saw.
"""

from __future__ import annotations

import contextlib
import contextvars
import linecache
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from types import FrameType
from typing import TYPE_CHECKING, Protocol, cast

from ..contract.model import BoundCase
from ..edges import TorchObject
from ..errors import ExprError, said
from ..findings import Finding, SourceLoc
from ..kernel.sources import Kernel
from ..logic import expr as E
from ..rules import RuleCode
from ..trace.arguments import layout_at
from ..trace.run import call_args, concrete_size, kernel_failure
from .obligations import moved_to

if TYPE_CHECKING:
    from _typeshed import TraceFunction

    from .._torch.attribution import Own
    from ..logic.solver import Solver

#: what ran, in order: (file, line, bytecode offset or -1 for a line of torch's shape logic, the kernel line)
Step = tuple[str, int, int, int]


class MakeEmpty(Protocol):
    """Makes a fake tensor of ``shape`` and dtype ``dtype`` (a name), with ``strides`` (None: contiguous) and a
    storage ``offset``."""

    def __call__(self, shape: Sequence[int], dtype: str, strides: Sequence[int] | None = None,
                 offset: int = 0) -> TorchObject: ...


#: findings about what the kernel returned, not replayed, but placed at the line it returned from (``_returned``)
RETURNED = frozenset({RuleCode.OUTPUT_DTYPE_MISMATCH, RuleCode.OUTPUT_LAYOUT_MISMATCH,
                      RuleCode.META_ACCEPTS_REJECTED_INPUT})
REPLAYED = frozenset({RuleCode.GUARD_ON_DYNAMIC_DIM, RuleCode.OUTPUT_SHAPE_MISMATCH, RuleCode.VALUE_SPECIALIZATION,
                      RuleCode.ASSERT_NARROWS_RANGE, RuleCode.KERNEL_ERROR})


@dataclass(frozen=True)
class Run:
    """The kernel at one point of the domain, with static sizes."""

    outputs: tuple[tuple[int | None, ...] | int | None, ...]  # shapes (None: a size the data decides), ints, or None
    error: str | None  # the exception it raised
    steps: tuple[Step, ...]  # what ran, in order (``static_run``)
    made_at: tuple[SourceLoc | None, ...] = ()  # per output: the kernel line that made it, if known
    # per output: a tensor's dtype name, strides and element count (None for another output)
    layouts: tuple[tuple[str, tuple[int, ...], int] | None, ...] = ()


def run_at(kernel: Kernel, case: BoundCase, point: dict[str, int], *, follow: bool = True,
           shallow: bool = False) -> Run:
    """The kernel at ``point`` with static sizes. ``follow``: record what ran and where each output was made
    (a line tracer: several times slower); without it, only the outputs or the error. ``shallow``: the tracer
    paused inside each torch function the kernel calls (``static_run``)."""
    if kernel.via_op and kernel.direct is not None:
        # the candidate's own code, called directly: each tensor it makes is seen to come from its line (torch's
        # dispatch, which reaches it in its slot, hides its calls from a torch function mode); a --meta-source
        # function's direct call registers it as its file does (kernel.resolved)
        kernel = replace(kernel, fn=kernel.direct, via_op=False)
    def make_args(empty):
        return call_args(kernel, case, lambda a: empty(E.evaluate(cast(E.TupleE, a.shape), point), a.dtype,
                                                       *layout_at(a, point)),
                         lambda a: concrete_size(a, point))

    from ..trace.run import own_code

    result, error, steps, origin = static_run(kernel.fn, make_args, own_code(kernel), follow=follow, shallow=shallow)
    outs = result if isinstance(result, (tuple, list)) else (result,)
    if error is not None:
        return Run((), error, tuple(steps))
    return Run(tuple(_value(x) for x in outs), None, tuple(steps), tuple(origin(x) for x in outs),
               tuple(_layout(x) for x in outs))


#: the concrete runs of the case being verified, by (kernel, case, point): the least point, an SC018's
#: confirmation and each fallback's other side often ask for the same point (half of them on the SDPA-MPS contract)
_CONCRETE: contextvars.ContextVar[dict[tuple[int, int, tuple[tuple[str, int], ...]],
                                       tuple[Kernel, BoundCase, Run | None]] | None] = contextvars.ContextVar(
    "concrete_runs", default=None)


@contextlib.contextmanager
def concrete_runs() -> Iterator[None]:
    """Within it, ``run_concrete`` runs the kernel once per point (a static run is the same at the same sizes)."""
    token = _CONCRETE.set({})
    try:
        yield
    finally:
        _CONCRETE.reset(token)


def run_concrete(kernel: Kernel, case: BoundCase, point: dict[str, int]) -> Run | None:
    """``run_at`` without following what runs; None where the inputs cannot be made on concrete sizes (a constant
    size near int64's largest: ``least.runnable`` screens the dims only). Within ``concrete_runs``, once a point."""
    memo = _CONCRETE.get()
    key = (id(kernel), id(case), tuple(sorted(point.items())))
    if memo is not None and key in memo and memo[key][0] is kernel and memo[key][1] is case:
        return memo[key][2]
    try:
        run: Run | None = run_at(kernel, case, point, follow=False)
    except RuntimeError:
        run = None
    if memo is not None:  # the kernel and case are held, so their ids are not reused while the memo lives
        memo[key] = (kernel, case, run)
    return run


def _value(x: TorchObject) -> tuple[int | None, ...] | int | None:
    """A kernel output at static sizes: a tensor's shape as a tuple (None for a size that depends on the data),
    an int, else None."""
    import torch

    from .._torch import core as C

    if isinstance(x, torch.Tensor):
        return tuple(C.constant_of(d) for d in x.shape)
    if isinstance(x, (int, torch.SymInt)) and not isinstance(x, bool):
        return C.constant_of(x)
    return None


def _layout(x: TorchObject) -> tuple[str, tuple[int, ...], int] | None:
    """A tensor output's dtype name, strides and element count at static sizes; None for anything else (or a
    size the data decides)."""
    import torch

    if not isinstance(x, torch.Tensor):
        return None
    try:
        return str(x.dtype).removeprefix("torch."), tuple(int(s) for s in x.stride()), int(x.numel())
    except Exception:  # noqa: BLE001 - an unbacked size (a data-dependent output): no layout to compare
        return None


def _shape_logic() -> tuple[str, ...]:
    """torch's shape logic, followed line by line in a replay (a guard inside a helper the kernel calls);
    FakeTensor's dispatch machinery is not followed."""
    from .._torch import core as C

    return tuple(os.path.join(C.TORCH_DIR, p) for p in ("_refs", "_decomp", "_meta_registrations.py",
                                                        os.path.join("nn", "functional.py")))


def static_run(fn: TorchObject, make_args: Callable[[MakeEmpty], tuple[list[TorchObject], dict[str, TorchObject]]],
               own: Own | Iterable[str], *, follow: bool = True, shallow: bool = False,
               ) -> tuple[TorchObject, str | None, list[Step], Callable[[TorchObject], SourceLoc | None]]:
    """Call ``fn`` under a static FakeTensorMode. ``make_args(empty)`` gives (args, kwargs), with
    ``empty(shape, dtype_name)`` making a fake tensor. Returns (result, error or None, steps, origin): the
    steps are the bytecode offsets the kernel's own code (``own``: a ``_torch.core.Own``, or its files) ran and
    the lines of torch's shape logic, each with the kernel line active at the time, in order; ``origin(x)`` is
    the kernel line that made the output tensor ``x`` (or None). ``shallow``: the tracer is paused while a torch
    function the kernel called runs (two thirds of a followed run's time is the tracer's call events in torch's
    dispatch): the steps are then a subset of the whole run's, each step the same, missing only what ran inside
    those calls (torch's shape logic, and the kernel's own code where torch's dispatch reaches it again)."""
    import torch

    from .._torch import core as C
    from .._torch.layout import strided_empty

    mine = C.Own.of(own)
    logic = _shape_logic()
    steps: list[Step] = []
    current = [0]
    made: dict[int, SourceLoc] = {}

    def local(frame: FrameType, event: str, arg: object) -> TraceFunction:
        if mine.code(frame.f_code):
            if event in ("opcode", "line"):
                current[0] = frame.f_lineno
                steps.append((frame.f_code.co_filename, frame.f_lineno, frame.f_lasti, current[0]))
        elif event == "line":
            steps.append((frame.f_code.co_filename, frame.f_lineno, -1, current[0]))
        return local

    def global_(frame: FrameType, event: str, arg: object) -> TraceFunction | None:
        if mine.code(frame.f_code):
            frame.f_trace_opcodes = True
            return local
        return local if frame.f_code.co_filename.startswith(logic) else None

    class Origins(torch.overrides.TorchFunctionMode):
        """Which kernel line made each tensor: the innermost kernel frame when a torch function returned it."""

        def __torch_function__(self, func: TorchObject, types: tuple[type, ...], args: tuple[TorchObject, ...] = (),
                               kwargs: dict[str, TorchObject] | None = None) -> TorchObject:
            if shallow:
                sys.settrace(None)
                try:
                    out = func(*args, **(kwargs or {}))
                finally:
                    sys.settrace(global_)
            else:
                out = func(*args, **(kwargs or {}))
            frame: FrameType | None = sys._getframe(1)
            while frame is not None and not mine.code(frame.f_code):
                frame = frame.f_back
            if frame is not None:
                loc = SourceLoc(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name,
                                linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip())
                for x in out if isinstance(out, (tuple, list)) else (out,):
                    if isinstance(x, torch.Tensor):
                        made[id(x)] = loc
            return out

    result, error = None, None
    previous = sys.gettrace()
    with C.static_fake_mode(shape_env=True) as mode:  # a data-dependent output is a size, as in export
        args, kwargs = make_args(lambda shape, dtype, strides=None, offset=0:
                                 strided_empty(list(shape), C.DTYPES[dtype], strides, offset, mode=mode))
        if follow:
            sys.settrace(global_)
        try:
            with Origins() if follow else contextlib.nullcontext():
                result = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - the kernel raised (or exited) here: what the replay observes
            if not kernel_failure(exc):
                raise
            text = said(exc).strip()
            error = f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"
        finally:
            sys.settrace(previous)
    return result, error, steps, lambda x: made.get(id(x))


class Replayer:
    """Replays one case's findings; runs are cached by point. A run is first made ``shallow`` (``static_run``):
    its outputs, error and the tensors' origins are the whole run's, its steps a subset; what reads the steps
    asks for the whole run where the subset does not settle it."""

    def __init__(self, kernel: Kernel, case: BoundCase):
        self.kernel, self.case = kernel, case
        self.dims = case.point_dims
        self.runs: dict[tuple, Run] = {}
        self.whole: set[tuple] = set()

    def at(self, point: dict[str, int], *, whole: bool = False) -> Run:
        key = tuple(point.get(n) for n in self.dims)
        if key not in self.runs or (whole and key not in self.whole):
            self.runs[key] = run_at(self.kernel, self.case, point, shallow=not whole)
            if whole:
                self.whole.add(key)
        return self.runs[key]

    def complete(self, point: dict[str, int] | None) -> bool:
        return point is not None and all(n in point for n in self.dims)

    def raises_as_export_runs(self, point: dict[str, int]) -> bool:
        """Whether the kernel raises at ``point`` run as torch.export runs it: in torch's slot, under FakeTensorMode
        with backed sizes whose hints are the point (``trace.fake_run``). Some errors need sizes that are SymInts
        (``torch.empty(B, H, L)`` without a device reaches the CPU kernel, which refuses them), so static sizes
        cannot show them, while export fails on them at every size."""
        from ..kernel.sources import NotApplicable
        from ..trace.fake_run import fake_run

        try:
            return fake_run(self.kernel, self.case, point).error is not None
        except NotApplicable:
            return False

    def why_not(self, v: Finding) -> str | None:
        """None when the finding reproduces; else what the replay saw instead."""
        cex = v.counterexample
        run = self.at(cex)
        if v.code in (RuleCode.ASSERT_NARROWS_RANGE, RuleCode.KERNEL_ERROR):
            if run.error is not None or self.raises_as_export_runs(cex):
                return None
            return f"the kernel returned {_shown(run.outputs)} without raising"
        if v.code == RuleCode.OUTPUT_SHAPE_MISMATCH:
            return _output_differs(v, run)
        if v.code == RuleCode.VALUE_SPECIALIZATION:
            return _specialises(v)
        if v.code == RuleCode.GUARD_ON_DYNAMIC_DIM:
            if v.witness is None or not self.complete(v.witness):
                return "no point on the other side of the guard"
            # reached in the shallow runs is reached in the whole ones (their steps a subset): only a line not
            # seen there needs the whole runs
            return _branches(v, run, self.at(v.witness)) and _branches(v, self.at(cex, whole=True),
                                                                      self.at(v.witness, whole=True))
        return None


def _with_located_files(kernel: Kernel, violations: list[Finding]) -> Kernel:
    """A kernel whose own code is unknown (a Python Meta kernel registered by qualified name: torch keeps no
    handle on it) replayed with the files its findings were located in, outside torch, as its own: the trace put
    them at the innermost frame outside torch, and the replay then follows those lines. A file that is not the
    kernel's is never reached, and the finding stays inconclusive. A user's kernel file (its own code is files)
    is followed into the user's helper modules its findings were located in too (``attribution.origin``)."""
    from .._torch import core as C
    from ..trace.run import own_code

    own = own_code(kernel)
    if own and not kernel.files:
        return kernel
    files = frozenset(os.path.abspath(v.location.file) for v in violations if v.location is not None
                      and not os.path.abspath(v.location.file).startswith(C.TORCH_DIR + os.sep))
    return replace(kernel, files=kernel.files | files) if files - kernel.files else kernel


def replayer(kernel: Kernel, case: BoundCase, violations: list[Finding]) -> Replayer:
    """The ``Replayer`` of a case's findings, as ``replay`` makes it (a kernel registered by qualified name
    followed through the files its findings were located in)."""
    return Replayer(_with_located_files(kernel, violations), case)


def replay(kernel: Kernel, case: BoundCase, violations: list[Finding], solver: Solver | None = None) -> list[Finding]:
    """The case's findings, each that does not reproduce at its counterexample turned into SC005. An SC002 that
    does not reproduce at z3's point is tried at up to OTHER_POINTS other points where it holds (``solver``):
    a point whose static run takes another branch of torch's than the symbolic trace did (constant_pad_nd's
    pads all 0) says nothing of the others."""
    r = replayer(kernel, case, violations)
    out = []
    for v in violations:
        if v.code not in REPLAYED or not r.complete(v.counterexample):
            out.append(_returned(v, r) if v.code in RETURNED and r.complete(v.counterexample) else v)
            continue
        if v.fallback is not None and E.evaluate(v.fallback.guard, v.counterexample) is (not v.fallback.value):
            # the output of a guard_or_* fallback side where its condition is really the other way: static sizes
            # take the condition's side (eager's), export takes the fallback's for every size; the point is
            # reproduced by the condition's value there, the fallback's outputs by the trace itself
            out.append(v)
            continue
        try:
            why = r.why_not(v)
            if why is not None and solver is not None:
                v, why = _elsewhere(v, why, r, solver)
            if why is None:
                out.append(_placed(v, r))
                continue
            run = r.at(v.counterexample)
        except Exception as err:  # a point the kernel cannot even be called with (inputs too large to build, say)
            why, run = f"the replay itself failed ({type(err).__name__}: {said(err)[:200]})", None
        if v.code == RuleCode.OUTPUT_SHAPE_MISMATCH and run is not None and run.error is not None:
            # the output is wrong in the symbolic trace and the kernel raises there at static sizes (a negative
            # size, say): a kernel error at a domain point, which the replay did show
            # at the kernel's own line that raised (the last one that ran), not its ``def``
            raised_at = _last_own_line(run, v.location) if v.location == r.kernel.definition else None
            out.append(replace(v, code=RuleCode.KERNEL_ERROR, fix="", path=None, expected=None, expr=run.error,
                               location=raised_at or v.location,
                               message=f"the kernel raised {run.error} at the counterexample (static sizes under "
                               f"FakeTensorMode; the symbolic trace returned {v.expr})"))
            continue
        returned = _returned_otherwise(v, run, r.case) if v.code == RuleCode.KERNEL_ERROR and run is not None \
            and run.error is None else None
        if returned is not None:  # the kernel returns there, an output the contract's path does not state
            out.append(returned)
            continue
        at = ", ".join(f"{k}={x}" for k, x in v.counterexample.items())
        out.append(replace(v, code=RuleCode.INCONCLUSIVE, fix="", message=f"{v.code} did not reproduce at {at}: {why} "
                           f"(static sizes under FakeTensorMode); not reported as a violation. The analysis said: "
                           f"{v.message}"))
    return out


OTHER_POINTS = 3


def _returned_otherwise(v: Finding, run: Run, case: BoundCase) -> Finding | None:
    """An SC007 whose counterexample the kernel returns at, with static sizes: an SC002 there where an output's
    shape differs from what every path of the case whose ``when`` holds states (polar's fake raised on the
    broadcast the symbolic trace assumed away, and returns (2, 1) where the contract says (1, 1)); else None."""
    point = v.counterexample
    try:
        paths = [p for p in case.paths if E.evaluate(p.when, point) is True]
    except Exception:  # noqa: BLE001 - a when undefined at the point (a division by 0): nothing to compare
        return None
    diffs = []
    for p in paths:
        for j, node in enumerate(p.outputs):
            have = run.outputs[j] if j < len(run.outputs) else None
            if node is None or not isinstance(have, tuple) or None in have:
                continue
            try:
                want = E.evaluate(node, point)
            except Exception:  # noqa: BLE001, S112 - undefined at the point: not a difference
                continue
            if isinstance(want, tuple) and tuple(want) != have:
                diffs.append((p, j, want, have))
                break
        else:
            return None  # a path that holds here states every output the kernel returned: no violation
    if not diffs:
        return None
    p, j, want, have = diffs[0]
    at = ", ".join(f"{k}={x}" for k, x in point.items())
    return replace(v, code=RuleCode.OUTPUT_SHAPE_MISMATCH, fix="", path=p.pid, expr=f"{have} != {tuple(want)}",
                   message=f"output {j} is {have} at {at} (the kernel returns there with static sizes under "
                   f"FakeTensorMode), where path {p.id} says {tuple(want)}; the symbolic trace raised there "
                   f"instead ({v.expr})")


def _elsewhere(v: Finding, why: str, r: Replayer, solver: Solver) -> tuple[Finding, str | None]:
    """``v`` at another point of its region where it reproduces (its counterexample and message redone there),
    else ``v`` and ``why``."""
    if v.code != RuleCode.OUTPUT_SHAPE_MISMATCH or not isinstance(v.region, tuple):
        return v, why
    region, held = v.region[0], v.region[4]
    tried = [v.counterexample]
    # first where the trace's asserts hold, the kernel's answer there being an output (hunt 65: x.size(0) - 3
    # rows, wrong for every N >= 3, was an SC007 at N = 1, where the kernel raises, and the SC002 lost)
    for first in [*([True] if held != E.TRUE else []), *[False] * OTHER_POINTS]:
        other = [E.negate(E.conj([E.compare("==", E.Var(d), E.Const(x)) for d, x in p.items()])) for p in tried]
        model = solver.small_model([region, *([held] if first else []), *other])
        point = {d: model[d] for d in r.dims if d in model} if model else None
        if point is None and first:
            continue
        if point is None or not r.complete(point):
            break
        tried.append(point)
        moved = moved_to(v, point)
        if r.why_not(moved) is None:
            return moved, None
    return v, why


def _shown(outputs: tuple) -> str:
    return ", ".join("?" if o is None else str(o) for o in outputs) or "nothing"


def _output_differs(v: Finding, run: Run) -> str | None:
    if run.error is not None:
        return f"the kernel raised {run.error}"
    m = re.match(r"output (\d+)", v.expr)
    if m is None or v.expected is None:
        return None  # nothing more precise to compare: kept as found
    j = int(m.group(1))
    want = _expected_at(v.expected, v.counterexample)
    have = run.outputs[j] if j < len(run.outputs) else None
    if isinstance(want, tuple) and isinstance(have, tuple):
        if len(want) != len(have) or any(w is not None and w != h for w, h in zip(want, have)):
            return None  # another rank, or a size the contract knows that differs (or that the data decides here)
    elif have != want:
        return None
    return f"output {j} is {_shown(have) if isinstance(have, tuple) else have}, as the contract says"


def _expected_at(expected: E.Node, point: dict[str, int]) -> object:
    """The contract's output at ``point``, a size it leaves to the kernel's data (an output's ``sizes`` name, as
    ``n`` in ``(A0, n)``) as None: the rank and the other sizes still compare (hunt 56: a rank-4 output against
    ``(A0, n)`` was lost to 'unbound name n')."""
    if isinstance(expected, E.TupleE):
        items: list[object] = []
        for item in expected.items:
            try:
                items.append(E.evaluate(item, point))
            except ExprError:
                items.append(None)
        return tuple(items)
    want = E.evaluate(expected, point)
    return tuple(want) if isinstance(want, list) else want


def _specialises(v: Finding) -> str | None:
    if v.node is None:
        return None  # torch's own expression, already evaluated at two real points
    at = E.evaluate(v.node, v.counterexample)
    if v.witness is None:  # a replacement or a condition: false at the counterexample
        return None if at is False or (at is not True and at is not None) else f"{v.expr} holds there"
    other = E.evaluate(v.node, v.witness)
    return None if at != other else f"{v.expr} is {at} at both points"


def _branches(v: Finding, a: Run, b: Run) -> str | None:
    """Both points reach the guard's line (the kernel's own, or torch's shape logic called from it), and the
    guard has a different value at them: the kernel decides on it there (a branch, or a value such as
    ``E in (64, 96, 128)`` that export turns into a guard)."""
    if v.location is None:
        return None
    line = v.location.line
    for run, name in ((a, "counterexample"), (b, "other side")):
        if not any(step[3] == line for step in run.steps):
            why = f" (it raised {run.error})" if run.error else ""
            return f"the kernel does not reach the guard's line {line} at the {name}{why}"
    if v.node is not None and E.evaluate(v.node, v.counterexample) == E.evaluate(v.node, v.witness or {}):
        return f"{v.expr} has the same value at both points"
    return None


def _placed(v: Finding, r: Replayer) -> Finding:
    """SC002 at the kernel line that made the output (seen in the replay), not the kernel's ``def``."""
    m = re.match(r"output (\d+)", v.expr)
    if v.code != RuleCode.OUTPUT_SHAPE_MISMATCH or m is None:
        return v
    run = r.at(v.counterexample)
    j = int(m.group(1))
    loc = run.made_at[j] if j < len(run.made_at) else None
    if loc is None and v.location == r.kernel.definition:
        # a kernel torch's dispatch calls (a torch.library fake)
        loc = _last_own_line(r.at(v.counterexample, whole=True), v.location)
    return v if loc is None else replace(v, location=loc)


def placed(kernel: Kernel, case: BoundCase, findings: list[Finding]) -> list[Finding]:
    """Findings made after the replay (a ``[[rejects]]`` region's SC021), each about what the kernel returned
    placed at the line it returned from (``_returned``)."""
    r = Replayer(kernel, case)
    return [_returned(v, r) if v.code in RETURNED and r.complete(v.counterexample) else v for v in findings]


def _returned(v: Finding, r: Replayer) -> Finding:
    """A finding about what the kernel returned (a dtype, a layout, an input it accepts), placed at its ``def``
    for want of a line: at the line it returned from at the finding's point, where a static run shows it."""
    if v.location != r.kernel.definition:
        return v
    try:
        run = r.at(v.counterexample, whole=True)
    except Exception:  # noqa: BLE001 - a point the kernel cannot be called with: the finding keeps its place
        return v
    loc = None if run.error is not None else _last_own_line(run, v.location)
    return v if loc is None else replace(v, location=loc)


def _last_own_line(run: Run, definition: SourceLoc | None) -> SourceLoc | None:
    """The kernel's own line that ran last (its return statement, where it made its outputs): the line a
    finding of a kernel called through torch's dispatch gets, which hides the calls that made each output from
    a torch function mode. None when none of its own lines ran."""
    own = [(file, line) for file, line, offset, _ in run.steps if offset >= 0]
    if not own:
        return None
    file, line = own[-1]
    function = definition.function if definition is not None and definition.file == file else ""
    return SourceLoc(file, line, function, linecache.getline(file, line).strip())
