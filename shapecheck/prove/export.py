"""Agreement with torch.export: export a small module that calls the op with a case's arguments, with the
contract's dynamic dims as ``torch.export.Dim``s over the contract ranges, under the kernel being checked.

A disagreement with shapecheck's verdict is explained, never silent: export assumes sizes 0 and 1 away
(``Dim(min=1)`` behaves as ``min=2``), knows nothing of the contract's output shapes, and follows the
example sizes' path.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import cast

from .._torch import core as C
from ..contract.model import BoundArg, BoundCase
from ..edges import JSON, TorchObject
from ..errors import InternalError, ShapecheckError
from ..findings import Finding, Verdict
from ..kernel.binding import rebind, schema_signature
from ..kernel.sources import Kernel
from ..logic import expr as E
from ..logic.solver import Decision, Outcome, Sat, Solver, restrict
from ..result.report import CaseResult
from ..rules import RuleCode
from ..trace.arguments import layout_at
from ..trace.run import call_args
from .premises import modulo_step, quotient

EXAMPLE_ELEMENTS = 2**26  # an export example's input larger than this is not built (the run says why)
#: export again at other example sizes: (whether export succeeded, None: not comparable; its message)
Retry = Callable[[dict[str, int]], tuple[bool | None, str]]


class _ExampleTooLarge(Exception):
    pass


def _example_tensor(name: str, shape: list[int], dtype: TorchObject, strides: Sequence[int] | None = None,
                    offset: int = 0) -> TorchObject:
    """An export example's input: random values (zeros for bool), at most ``EXAMPLE_ELEMENTS`` elements, in
    the contract's layout (``strides`` and storage ``offset``; None: contiguous)."""
    import torch

    if math.prod(shape) > EXAMPLE_ELEMENTS:
        raise _ExampleTooLarge(f"not run: the example input {name} would be {tuple(shape)} ({math.prod(shape)} elements, "
                        f"over {EXAMPLE_ELEMENTS})")
    if strides is not None or offset:
        from .._torch.layout import contiguous_strides, storage_extent

        strides = strides if strides is not None else contiguous_strides(shape)
        return _example_tensor(name, [storage_extent(shape, strides, offset)], dtype).as_strided(shape, strides, offset)
    return torch.zeros(shape, dtype=dtype) if dtype == torch.bool else torch.randn(shape).to(dtype)


@dataclass(frozen=True)
class ExportResult:
    ran: bool
    succeeded: bool | None
    agrees: bool | None
    message: str
    explanation: str = ""
    example: dict[str, int] | None = None
    ints: str = ""  # how sizes only int arguments carry were passed to export ("" where there are none)

    def to_json(self) -> dict[str, JSON]:
        return {"ran": self.ran, "succeeded": self.succeeded, "agrees": self.agrees, "message": self.message,
                "explanation": self.explanation or None, "example": self.example, "int_sizes": self.ints or None}


def equal_classes(case: BoundCase, solver: Solver) -> dict[str, str]:
    """Dim -> representative, for dims the domain forces equal (export wants one ``Dim`` for them)."""
    rep: dict[str, str] = {}
    dyn = [d.name for d in case.dims if d.dynamic]
    for i, a in enumerate(dyn):
        if a in rep:
            continue
        rep[a] = a
        for b in dyn[i + 1:]:
            if b not in rep and solver.implies([case.domain], E.Cmp("==", E.Var(a), E.Var(b))).outcome == Outcome.PROVED:
                rep[b] = a
    return rep


@dataclass(frozen=True)
class DimSpec:
    """How one dynamic dim is given to torch.export: its own ``Dim(rep, min, max)`` (shared by dims the domain
    forces equal), or derived from another dim's ``Dim`` as ``a * base + b`` (``Ci == 4 * C``)."""

    rep: str
    lo: int
    hi: int
    base: str | None = None
    a: int = 1
    b: int = 0

    def text(self) -> str:
        if self.base is None:
            return f"Dim('{self.rep}', min={self.lo}, max={self.hi})"
        return f"{self.a} * {self.base}" + (f" + {self.b}" if self.b > 0 else f" - {-self.b}" if self.b else "")


def export_dims(case: BoundCase, solver: Solver, classes: dict[str, str], modulo: bool = False) -> dict[str, DimSpec]:
    """The contract's ``requires`` as torch.export can state them: each dim's range over the domain (a
    minimum implied by ``H + 2 * p >= k``), equal dims one ``Dim``, and a dim the domain ties to another by
    ``X == a * Y + b`` (a >= 1) a derived Dim. With ``modulo``, ``X % k == r`` (k >= 2) makes X the derived
    Dim ``k * X_k + r`` of a root Dim of its own, ``X_k`` (``premises.quotient``). What export cannot
    express (a product of two dims) is left to the example sizes, and export may then reject the range."""
    dyn = {d.name for d in case.dims if d.dynamic}
    roots = {d.name for d in case.contract.dims if d.dynamic}  # a root Dim need not be an input's size
    derived: dict[str, tuple[str, int, int]] = {}
    quotients: dict[str, DimSpec] = {}  # X_k -> its root Dim
    for c in _conjuncts(case.domain):
        step = modulo_step(c) if modulo else None
        if step is not None and step[0] in dyn and step[0] not in derived and classes.get(step[0]) == step[0]:
            xm, km, rm = step
            lo = solver.extreme([case.domain], xm, lowest=True)
            hi = solver.extreme([case.domain], xm, lowest=False)
            if lo is not None and hi is not None:
                q, qlo, qhi = quotient(xm, km, rm, lo, hi)
                if qlo < qhi and q not in case.contract.dim_names:
                    quotients[q] = DimSpec(q, qlo, qhi)
                    derived[xm] = (q, km, rm)
            continue
        if not (isinstance(c, E.Cmp) and c.op == "=="):
            continue
        for x, other in ((c.left, c.right), (c.right, c.left)):
            if not isinstance(x, E.Var) or x.name not in dyn or x.name in derived or classes.get(x.name) != x.name:
                continue
            names = E.free_names(other)
            if len(names) != 1 or not names <= roots or x.name in names:
                continue
            (y,) = names
            lo = case.contract.dim(y).min
            try:
                f0, f1 = E.evaluate(other, {y: lo}), E.evaluate(other, {y: lo + 1})
            except Exception:  # noqa: BLE001 - not an integer expression of y: not a derived Dim
                continue
            if not isinstance(f0, int) or not isinstance(f1, int) or f1 - f0 < 1 or y in derived:
                continue
            a, b = f1 - f0, f0 - (f1 - f0) * lo
            lin = E.Cmp("==", E.Var(x.name), E.Arith("+", E.Arith("*", E.Const(a), E.Var(y)), E.Const(b)))
            if solver.implies([case.domain], lin).outcome == Outcome.PROVED:
                derived[x.name] = (classes.get(y, y), a, b)
    out: dict[str, DimSpec] = dict(quotients)
    bases = {b for b, _, _ in derived.values()}
    for name in [d.name for d in case.contract.dims if d.name in dyn or d.name in bases]:
        rep = classes.get(name, name)
        d = case.contract.dim(rep)
        least = solver.extreme([case.domain], rep, lowest=True)
        most = solver.extreme([case.domain], rep, lowest=False)
        lo, hi = (d.min if least is None else least), (d.max if most is None else most)
        if lo == hi and rep not in bases:
            continue  # one value over the domain: a static size for export (a Dim needs min < max)
        if rep in derived:
            base, a, b = derived[rep]
            out[name] = DimSpec(rep, lo, hi, base, a, b)
        else:
            out[name] = DimSpec(rep, lo, hi)
    return out


def _conjuncts(node: E.Node) -> tuple[E.Node, ...]:
    return node.args if isinstance(node, E.And) else (node,)


def example_sizes(case: BoundCase, solver: Solver, classes: dict[str, str],
                  roots: tuple[str, ...] = (), specs: dict[str, DimSpec] | None = None) -> dict[str, int] | None:
    """Example sizes for export: inside the domain, each dynamic dim >= 2 (export specialises 0 and 1), the
    ``roots`` of derived Dims too (a quotient root ``X_k`` of ``specs`` through its X: X >= 2 * k + r), and
    distinct across classes where the domain allows (equal sizes would be unified), as small as possible."""
    names = {d.name for d in case.contract.dims}
    dyn = [d for d in case.dims if d.dynamic] + [case.contract.dim(r) for r in roots if r in names]
    conds = [case.domain] + [E.Cmp(">=", E.Var(d.name), E.Const(max(2, d.min))) for d in dyn]
    for name, sp in (specs or {}).items():
        if sp.base is not None and sp.base not in names:
            conds.append(E.Cmp(">=", E.Var(name), E.Const(2 * sp.a + sp.b)))
    if solver.satisfiable(conds).sat is not Sat.SAT:
        conds = [case.domain]
    reps = sorted(set(classes.values()))
    for i, a in enumerate(reps):
        for b in reps[i + 1:]:
            trial = conds + [E.Cmp("!=", E.Var(a), E.Var(b))]
            if solver.satisfiable(trial).sat is Sat.SAT:
                conds = trial
    model = solver.small_model(conds)
    return None if model is None else restrict(model, [d.name for d in case.dims])


def _export_dims(case: BoundCase, classes: dict[str, str] | None,
                 specs: dict[str, DimSpec] | None) -> dict[str, TorchObject]:
    """dim name -> its ``torch.export.Dim`` (a derived one as ``a * base + b``), for the dims ``classes`` (dim ->
    its class representative; default: every dynamic dim alone) or ``specs`` make dynamic."""
    from torch.export import Dim

    classes = classes or {d.name: d.name for d in case.dims if d.dynamic}
    if specs is None:
        specs = {n: DimSpec(r, case.contract.dim(r).min, case.contract.dim(r).max) for n, r in classes.items()}
    made = {sp.rep: Dim(sp.rep, min=sp.lo, max=sp.hi) for sp in specs.values() if sp.base is None}
    for sp in specs.values():
        if sp.base is not None and sp.base in made:
            made[sp.rep] = sp.a * made[sp.base] + sp.b
    return {name: made[sp.rep] for name, sp in specs.items() if sp.rep in made}


@dataclass
class _Inputs:
    """The exported module's inputs at some sizes: the tensors, each one's dynamic axes (axis -> Dim), the
    call's arguments (``_Slot``s for the tensors, ``_SizeSlot``s for int(s) arguments built from dims), the input
    and axis that carries each dim, and the dims only int arguments carry (each an extra input's size)."""

    tensors: list[TorchObject]
    dyn_specs: list[dict[int, TorchObject]]
    args: list[TorchObject]
    kwargs: dict[str, TorchObject]
    dim_at: dict[str, tuple[int, int]]
    missing: list[str]


def _inputs(kernel: Kernel, case: BoundCase, sizes: dict[str, int], dims: dict[str, TorchObject]) -> _Inputs:
    """The inputs of the exported module at ``sizes``. Raises _ExampleTooLarge."""
    import torch

    tensors: list[TorchObject] = []
    dyn_specs: list[dict[int, TorchObject]] = []
    dim_at: dict[str, tuple[int, int]] = {}  # dim -> (input, axis) that carries it, for int(s) arguments

    def make_tensor(a):
        shape = [cast(int, E.evaluate(i, sizes)) for i in a.shape.items]  # a composite size (C * r * r) is static here
        for j, i in enumerate(a.shape.items):
            if isinstance(i, E.Var):
                dim_at.setdefault(i.name, (len(tensors), j))
        t = _example_tensor(a.name, shape, C.DTYPES[a.dtype], *layout_at(a, sizes))
        spec = {j: dims[i.name] for j, i in enumerate(a.shape.items) if isinstance(i, E.Var) and i.name in dims}
        tensors.append(t)
        dyn_specs.append(spec)
        return _Slot(len(tensors) - 1)

    # the op is called as the op is (by its schema); the dispatcher then calls the kernel, rebound to its signature
    as_op = replace(kernel, signature=schema_signature(kernel.schema)) if kernel.schema is not None else kernel
    args, kwargs = call_args(as_op, case, make_tensor, _SizeSlot)
    missing = sorted({n for x in _flat([*args, *kwargs.values()]) if isinstance(x, _SizeSlot)
                      for n in E.free_names(x.expr) if n not in dim_at})
    for name in missing:  # a size only an int argument carries: the shape of an extra input, as users pass it
        dim_at[name] = (len(tensors), 0)
        tensors.append(torch.empty((sizes[name],)))
        dyn_specs.append({0: dims[name]} if name in dims else {})
    return _Inputs(tensors, dyn_specs, args, kwargs, dim_at, missing)


#: runs the exported program at other sizes: None when it runs, else what it raised (first line)
RunAt = Callable[[dict[str, int]], "str | None"]


def run_export(kernel: Kernel, op: TorchObject, case: BoundCase, sizes: dict[str, int],
               classes: dict[str, str] | None = None,
               specs: dict[str, DimSpec] | None = None,
               keep: list[RunAt] | None = None) -> tuple[bool | None, str, str]:
    """Export the op call at ``sizes`` with dynamic dims; True when export succeeded, None when the run
    says nothing about the kernel under test (it could not be set up, or export never called it). With the
    message, how sizes that only int arguments carry were passed ("" when there are none): each as the size of
    an extra input tensor, as a wrapper module passes them. ``keep``: where export succeeded, a function that
    runs the exported program at other sizes is appended."""
    from torch.export import export

    dims = _export_dims(case, classes, specs)
    try:
        made = _inputs(kernel, case, sizes, dims)
    except _ExampleTooLarge as why:
        return None, str(why), ""
    tensors, dyn_specs, args, kwargs, dim_at, missing = (made.tensors, made.dyn_specs, made.args, made.kwargs,
                                                         made.dim_at, made.missing)
    how = "" if not missing else (
        f"{', '.join(missing)}, carried by int arguments only, passed as the size of an extra input tensor each "
        f"(the exported module reads .size(0)): export takes a named Dim's range on a tensor's size, not on an "
        f"int input (Dim.DYNAMIC ints would narrow their range at a guard without failing)")

    Call = _call_module(op, args, kwargs, dim_at)

    reached: list[bool] = []

    def candidate(*a: TorchObject, **kw: TorchObject) -> TorchObject:
        reached.append(True)
        if kernel.schema is not None and kernel.signature is not None:
            args_, kw = rebind(kernel.schema, kernel.signature, a, kw)
            return kernel.fn(*args_, **kw)
        return kernel.fn(*a, **kw)

    slot = kernel.install if kernel.via_op else None  # the candidate in the slot torch.export runs (kernel.resolved)
    if kernel.via_op and slot is None:
        return None, ("not comparable: torch.export does not reach the candidate kernel (" + "; ".join(kernel.notes)
                      + ")"), how
    install: contextlib.AbstractContextManager[TorchObject] = slot() if slot is not None else \
        contextlib.nullcontext() if kernel.op is not None else C.candidate_installed(op, candidate)
    with install as probe, _quiet():
        try:
            program = export(Call(), (tuple(tensors),), dynamic_shapes=(tuple(dyn_specs),), strict=True)
            if kernel.op is None and not (probe.reached if kernel.via_op else reached):
                return None, ("not comparable: export never called the candidate kernel (torch reaches this "
                              "op through another kernel: " + ("; ".join(kernel.notes) or "its own fake "
                                                                "implementation") + ")"), how
            if keep is not None:
                keep.append(lambda at: _run_program(program, kernel, case, at, dims))
            return True, "export succeeded", how
        except Exception as err:  # noqa: BLE001 - export's own failure is the datum here, whatever its type
            ours = _shapecheck_error(err)
            if ours is not None:  # a failure of shapecheck's own argument filling: never "export failed"
                raise ours from err
            text = str(err).strip()
            if "Constraints violated" not in text and _CONSTRAINT_REPORT in C.exception_functions(err):
                text = (f"{text} (raised while export reported a constraint violation, in torch's "
                        f"{_CONSTRAINT_REPORT})").strip()
            return False, f"{type(err).__name__}: {text[:2000]}", how
        finally:
            C.reset_dynamo()


def _run_program(program: TorchObject, kernel: Kernel, case: BoundCase, at: dict[str, int],
                 dims: dict[str, TorchObject]) -> str | None:
    """The exported program run at the sizes ``at`` (inputs as the export's, at those sizes): None when it
    runs, else its error's first line ("" when the inputs would be too large to build: nothing shown)."""
    try:
        made = _inputs(kernel, case, at, dims)
    except _ExampleTooLarge:
        return None
    try:
        with _quiet():
            program.module()(tuple(made.tensors))
    except Exception as err:  # noqa: BLE001 - the exported program's own failure is the datum
        return f"{type(err).__name__}: {first_line(str(err).strip())}"
    return None


def _call_module(op: TorchObject, args: list[TorchObject], kwargs: dict[str, TorchObject],
                 dim_at: dict[str, tuple[int, int]]) -> TorchObject:
    """The module torch.export traces: it calls the op on its input tensors (``_Slot``s), with each int(s)
    argument (``_SizeSlot``) computed from the sizes of the inputs that carry its dims (``dim_at``)."""
    import torch

    class Call(torch.nn.Module):
        def forward(self, inputs):
            def fill(x):
                try:
                    if isinstance(x, _SizeSlot):  # an int(s) argument: from the inputs' sizes, symbolic in export
                        return C.sym_value(x.expr, {n: inputs[t].size(ax) for n, (t, ax) in dim_at.items()})
                    if isinstance(x, list):  # a tensors argument: a list of slots
                        return [fill(i) for i in x]
                    return inputs[x.index] if isinstance(x, _Slot) else x
                except Exception as err:  # noqa: BLE001 - export would report it as its own failure
                    raise InternalError(f"filling the exported call's arguments failed: "
                                        f"{type(err).__name__}: {err}") from err

            out = op(*[fill(a) for a in args], **{k: fill(v) for k, v in kwargs.items()})
            return tuple(o for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, torch.Tensor))

    return Call


# where torch.export raises a constraint violation (a guard on a dynamic Dim); in torch 2.13 it can fail while
# formatting the violation (a StopIteration for a derived Dim), which is still the violation
_CONSTRAINT_REPORT = "_suggest_or_raise_constraint_violation"


def _shapecheck_error(err: BaseException | None) -> ShapecheckError | None:
    """A shapecheck error anywhere in the chain export wrapped ``err`` in (dynamo re-raises its own types)."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, ShapecheckError):
            return err
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return None


def _flat(items: list[object]) -> list[object]:
    return [y for x in items for y in (x if isinstance(x, list) else [x])]


class _Slot:
    def __init__(self, index: int):
        self.index = index


class _SizeSlot:
    """An int(s) argument built from dims (``call_args``' ``make_size``): computed from the inputs' sizes."""

    def __init__(self, arg: BoundArg):
        assert arg.expr is not None  # made only for an argument built from dims
        self.expr = arg.expr


@contextlib.contextmanager
def _quiet():
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(previous)


def confirm(case: BoundCase, result: CaseResult, violations: list[Finding], kernel: Kernel, op: TorchObject,
            solver: Solver) -> ExportResult:
    if result.skipped:
        return ExportResult(False, None, None, f"case skipped: {result.skipped}")
    classes = equal_classes(case, solver)
    specs = export_dims(case, solver, classes, modulo=True)
    sizes = example_sizes(case, solver, classes, tuple(sorted({sp.base for sp in specs.values() if sp.base})), specs)
    if sizes is None:
        return ExportResult(False, None, None, "no example sizes satisfy the domain")
    kept: list[RunAt] = []
    ok, message, ints = run_export(kernel, op, case, sizes, classes, specs, keep=kept)
    if ok is None:
        return ExportResult(False, None, None, message, example=sizes, ints=ints)
    if result.verdict == Verdict.INCONCLUSIVE:
        return ExportResult(True, ok, None, message, "shapecheck was inconclusive: nothing to agree with", sizes, ints)
    agrees = ok == (result.verdict == Verdict.PASS)

    def retry(at: dict[str, int]) -> tuple[bool | None, str]:
        return run_export(kernel, op, case, at, classes, specs)[:2]

    why = "" if agrees else explain(case, violations, ok, message, solver, retry, sizes, kept[0] if kept else None)
    return ExportResult(True, ok, agrees, message, why, sizes, ints)


def explain(case: BoundCase, violations: list[Finding], export_ok: bool, message: str, solver: Solver,
            retry: Retry | None = None, example: dict[str, int] | None = None, run_at: RunAt | None = None) -> str:
    """Why export and shapecheck disagree on a case, where the cause is established. ``retry(sizes)`` exports
    again at other example sizes, ``run_at(sizes)`` runs the exported program there (experiments that can
    establish a cause)."""
    if not export_ok:  # a cause only where export's own message and z3 establish it, else export's words
        return (_equal_dims(case, message, solver) or _raised_minimum(case, message, solver)
                or f"not explained; export said: {first_line(message)}")
    reasons = []
    # export traces a dynamic dim from 2 up, unless the domain keeps it below 2 (a static size for export)
    ge2 = [E.Cmp(">=", E.Var(d.name), E.Const(2)) for d in case.dims if d.dynamic
           and (solver.extreme([case.domain], d.name, lowest=False) or 2) >= 2]
    for v in violations:
        if v.code in (RuleCode.GUARD_ON_DYNAMIC_DIM, RuleCode.VALUE_SPECIALIZATION, RuleCode.ASSERT_NARROWS_RANGE,
                      RuleCode.GUARD_IN_TORCH_HELPER):
            cond = v.node
            kept = _kept_as_runtime_check(case, v, solver, ge2, run_at, example)
            if kept:
                reasons.append(kept)
                continue
            if cond is not None and v.code != RuleCode.VALUE_SPECIALIZATION:
                decided = solver.decide([case.domain, *ge2], cond)[0] if _is_bool(cond) else Decision.BOTH
                if decided in (Decision.TRUE, Decision.FALSE):
                    pts = [p for p in (v.witness, v.counterexample) if p]
                    seen = " and ".join(", ".join(f"{k}={p[k]}" for k in v.dims if k in p) for p in pts)
                    reasons.append(
                        f"{v.code} `{v.expr}`: export's 0/1 assumption. export treats Dim(min=1) like min=2 and "
                        f"never traces sizes 0 or 1; for every size >= 2 the guard is {decided.value}, so export sees "
                        f"no guard. shapecheck models size 1 and reaches both sides ({seen})")
                    continue
                other = _other_side(case, v, solver, ge2, retry, example)
                if other:
                    reasons.append(other)
        elif v.code == RuleCode.OUTPUT_SHAPE_MISMATCH:
            which = re.match(r"(output \d+)", v.expr)
            reasons.append(f"{v.code} on {v.path}: export has no contract, so it cannot know "
                           f"{which.group(1) if which else 'the output'} should be {_shape_text(v)}; the traced "
                           "graph is consistent with the meta kernel")
        elif v.code in (RuleCode.OUTPUT_DTYPE_MISMATCH, RuleCode.OUTPUT_LAYOUT_MISMATCH, RuleCode.OUTPUT_PRESENCE_MISMATCH):
            what = {RuleCode.OUTPUT_DTYPE_MISMATCH: "dtype", RuleCode.OUTPUT_LAYOUT_MISMATCH: "strides",
                    RuleCode.OUTPUT_PRESENCE_MISMATCH: "presence (None or a tensor)"}[v.code]
            reasons.append(f"{v.code} on {v.path}: export has no contract for an output's {what}, so it follows the "
                           "meta kernel; the traced graph is consistent with it")
        elif v.code == RuleCode.DYNAMIC_SIZE_RANGE:
            reasons.append(f"{v.code} on {v.path}: export traces the fake's range for a data-dependent size and has no "
                           "contract for the runtime's, so it succeeds; the exported program asserts the fake's range "
                           f"when it runs, and fails where the runtime gives a value outside it ({v.counterexample})")
        elif v.code == RuleCode.META_ACCEPTS_REJECTED_INPUT:
            reasons.append(f"{v.code} on {v.path}: the meta kernel accepts inputs the runtime rejects, so export "
                           "accepts them too (the finding is that export succeeds where the device would refuse)")
        elif v.code == RuleCode.KERNEL_ERROR:
            reasons.append(f"{v.code}: the kernel raised on a domain point ({v.counterexample}) export's example did "
                           "not reach")
    return "; ".join(dict.fromkeys(reasons)) or f"not explained; export said: {first_line(message)}"


#: how the exported program reports a guard it kept as a check of its inputs (torch 2.13: its guards
#: function), or a deferred runtime assertion
_PROGRAM_GUARD = re.compile(r"Guard failed|Runtime assertion failed", re.I)


def _kept_as_runtime_check(case: BoundCase, v: Finding, solver: Solver, ge2: Sequence[E.Node],
                           run_at: RunAt | None, example: dict[str, int] | None) -> str:
    """Export succeeded, but kept the guard (or the specialised value) as a check of the exported program's
    inputs rather than rejecting the Dim ranges (split's number of chunks, a floor division of two Dims): run
    at sizes >= 2 on the guard's other side, the program raises that check. Empty unless it does."""
    if run_at is None or example is None or v.node is None:
        return ""
    at_example = E.evaluate(v.node, example)
    if v.code == RuleCode.VALUE_SPECIALIZATION:
        if not isinstance(at_example, int) or isinstance(at_example, bool):
            return ""
        other: E.Node = E.Cmp("!=", v.node, E.Const(at_example))
    elif isinstance(at_example, bool) and _is_bool(v.node):
        other = E.negate(v.node) if at_example else v.node
    else:
        return ""
    point = solver.small_model([case.domain, *ge2, other])
    if point is None:
        return ""
    point = restrict(point, [d.name for d in case.dims])
    raised = run_at(point)
    if not raised or not _PROGRAM_GUARD.search(raised):
        return ""
    show = ", ".join(f"{k}={x}" for k, x in point.items())
    return (f"{v.code} `{v.expr}`: export succeeded, but kept the guard as a check of the exported program's "
            f"inputs instead of rejecting the Dim ranges; run at {show} (the guard's other side, sizes >= 2) the "
            f"program raises {raised[:300]}. The program holds only where the guard does, as shapecheck says")


def _other_side(case: BoundCase, v: Finding, solver: Solver, ge2: Sequence[E.Node], retry: Retry | None,
                example: dict[str, int] | None) -> str:
    """Export succeeded at example sizes on one side of the guard: export again at sizes >= 2 on the other
    side. If that fails, the cause is established: export followed the example's side."""
    if retry is None or example is None or not _is_bool(v.node):
        return ""
    side = E.evaluate(v.node, example)
    if not isinstance(side, bool):
        return ""
    other = E.negate(v.node) if side else v.node
    keep = [E.Cmp("==", E.Var(n), E.Const(x)) for n, x in example.items() if n not in v.dims]
    at = solver.small_model([case.domain, *ge2, other, *keep])
    if at is None:
        return ""
    at = restrict(at, [d.name for d in case.dims])
    ok, msg = retry(at)
    if ok is not False or not (_CONSTRAINT_REPORT in msg or "Constraints violated" in msg
                               or any(re.search(rf"\b{re.escape(n)}\b", msg) for n in v.dims)):
        return ""  # export's failure must name a dim of the guard: else it may have another cause
    show = lambda p: ", ".join(f"{k}={p[k]}" for k in v.dims if k in p)  # noqa: E731
    return (f"{v.code} `{v.expr}`: export followed the example sizes' side of the guard ({show(example)}: "
            f"{str(side).lower()}) and accepted it; exported again at sizes on the other side ({show(at)}), it "
            f"fails: {first_line(msg)}")


def first_line(message: str) -> str:
    return message.splitlines()[0] if message else ""


_SUGGESTED_MIN = re.compile(r"\b(\w+) = Dim\('\1', min=(\d+)")


def _raised_minimum(case: BoundCase, message: str, solver: Solver) -> str:
    """Export asks a higher minimum for a dim (its suggested fix ``X = Dim('X', min=m)``) because the contract
    relates X to other dims (``padding0 < A1``), which Dims cannot state, and export traces every other dynamic
    dim at 2 or more: z3 proves the domain and those sizes imply X >= m, and the domain allows X < m (where
    another dim is 0 or 1). Empty unless both are established."""
    names = {d.name for d in case.dims if d.dynamic}
    for x, m in _SUGGESTED_MIN.findall(message):
        if x not in names:
            continue
        least = int(m)
        others = [E.Cmp(">=", E.Var(n), E.Const(2)) for n in sorted(names - {x})]
        raised = solver.implies([case.domain, *others], E.Cmp(">=", E.Var(x), E.Const(least)))
        below = solver.small_model([case.domain, E.Cmp("<", E.Var(x), E.Const(least))])
        if raised.outcome is not Outcome.PROVED or below is None:
            continue
        related = sorted(n for n in E.free_names(case.domain) if n != x and n in names
                         and any(x in E.free_names(p) and n in E.free_names(p) for p in _conjuncts(case.domain)))
        if not related:
            continue
        at = ", ".join(f"{n}={below[n]}" for n in [x, *related] if n in below)
        return (f"export asks Dim('{x}', min={least}): the contract relates {x} to {', '.join(related)}, which "
                f"Dims cannot state, and export traces every other dynamic dim at sizes >= 2, where the domain "
                f"implies {x} >= {least} (z3); the contract also allows {x} < {least} (e.g. {at}), where one of "
                f"them is below 2. shapecheck checks the contract's whole range")
    return ""


_EQUAL = re.compile(r"The values of (\w+) = .*? and (\w+) = .*? must always be equal")


def _equal_dims(case: BoundCase, message: str, solver: Solver) -> str:
    """Export's trace needed two dims equal ("The values of X ... and Y ... must always be equal": a guard it
    installed at the example sizes) while the contract's domain allows them to differ: a relation Dims cannot
    express (``B == Bo or B == 1``). Empty unless both halves are established."""
    names = {d.name for d in case.contract.dims}
    for x, y in _EQUAL.findall(message):
        if x not in names or y not in names:
            continue
        apart = solver.small_model([case.domain, E.Cmp("!=", E.Var(x), E.Var(y))])
        if apart is None:
            continue
        at = ", ".join(f"{n}={apart[n]}" for n in (x, y))
        return (f"export's trace installed the guard {x} == {y} at the example sizes (its message: the values "
                f"of {x} and {y} must always be equal), but the contract's domain allows them to differ (e.g. "
                f"{at}), which torch.export's Dims cannot state; shapecheck traced both sides")
    return ""


def _shape_text(v: Finding) -> str:
    from ..logic.simplify import shown

    return shown(v.expected) if v.expected is not None else "the contract's shape"


def _is_bool(node: E.Node) -> bool:
    return isinstance(node, (E.Cmp, E.And, E.Or, E.Not)) or node in (E.TRUE, E.FALSE)

