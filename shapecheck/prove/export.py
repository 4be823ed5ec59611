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
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import cast

from .._torch import core as C
from ..contract.model import BoundArg, BoundCase
from ..edges import JSON, TorchObject
from ..errors import InternalError, ShapecheckError, said
from ..findings import Finding, Verdict
from ..kernel.binding import rebind, schema_signature
from ..kernel.sources import Kernel
from ..logic import expr as E
from ..logic.solver import Outcome, Sat, Solver, kept, restrict
from ..result.report import CaseResult
from ..trace.arguments import layout_at
from ..trace.run import call_args
from .composite import Bounds, Composites, composite_axes, composite_bounds, linear_item
from .export_why import CONSTRAINT_REPORT, KEPT_GUARD, RunAt, conjuncts, explain, first_line
from .premises import implied_steps, modulo_step, quotient

EXAMPLE_ELEMENTS = 2**26  # an export example's input larger than this is not built (the run says why)
#: export again at other example sizes: (whether export succeeded, None: not comparable; its message)


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
    # where export succeeded: the contract's least point with a size below 2, when the exported program refuses it
    # (export's 0/1 assumption: its Dims start at 2), and the program's error there
    refuses: dict[str, int] | None = None
    refusal: str = ""
    # the program refuses the point with its sizes below 2 raised to 2 as well: a guard it keeps refuses it (a
    # finding names it), not its 0/1 assumption alone
    refused_from_two: bool = False

    def to_json(self) -> dict[str, JSON]:
        return {"ran": self.ran, "succeeded": self.succeeded, "agrees": self.agrees, "message": self.message,
                "explanation": self.explanation or None, "example": self.example, "int_sizes": self.ints or None,
                "program_refuses": None if self.refuses is None else {"at": self.refuses, "error": self.refusal,
                                                                       "from_two": self.refused_from_two}}


def equal_classes(case: BoundCase, solver: Solver) -> dict[str, str]:
    """Dim -> representative, for dims the domain forces equal (export wants one ``Dim`` for them)."""
    rep: dict[str, str] = {}
    dyn = [d.name for d in case.dims if d.dynamic]
    apart = [E.Cmp("!=", E.Var(a), E.Var(b)) for i, a in enumerate(dyn) for b in dyn[i + 1:]]
    if len(dyn) < 2 or solver.satisfiable([case.domain, *apart]).sat is Sat.SAT:
        return {a: a for a in dyn}  # a model with every pair apart: no two are forced equal (one query, not one a pair)
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

    def step_dim(xm: str, km: int, rm: int) -> None:
        """X % k == r as the derived Dim k * X_k + r, X_k a root Dim of its own; on the Dim X shares (its class's,
        or the root of no input that X == C0 made X's), where X has one already."""
        xm = classes.get(xm, xm)
        while xm in derived and derived[xm][1:] == (1, 0):
            xm = derived[xm][0]
        if xm not in roots or xm in derived:
            return
        lo = solver.extreme([case.domain], xm, lowest=True)
        hi = solver.extreme([case.domain], xm, lowest=False)
        if lo is not None and hi is not None:
            q, qlo, qhi = quotient(xm, km, rm, lo, hi)
            if qlo < qhi and q not in case.contract.dim_names and q not in quotients:
                quotients[q] = DimSpec(q, qlo, qhi)
                derived[xm] = (q, km, rm)

    for c in conjuncts(case.domain):
        step = modulo_step(c) if modulo else None
        if step is not None:
            step_dim(*step)
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
            if classes.get(y, y) == x.name:  # X == Y of one class: one Dim already, not a Dim derived from itself
                continue
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
    # a step the requires imply without writing it (A1 even, from B0 == 2 * (A1 // 2) and A1 == B0)
    for step in implied_steps(case.domain, dyn, solver) if modulo else ():
        step_dim(*step)
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
            while base in derived:  # a Dim derived from a derived one: export takes it from the root
                root, a2, b2 = derived[base]
                base, a, b = root, a * a2, a * b2 + b
            out[name] = DimSpec(rep, lo, hi, base, a, b)
        else:
            out[name] = DimSpec(rep, lo, hi)
    return out


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
    # an input size written as a formula of dynamic dims from 2 too, where the domain allows: at 1 export would
    # specialise it (diagonal_scatter's src of min(A, B - 2) at A = 2, B = 3, hunt 42: the program took a src of
    # length 1 alone, and --confirm-export said it agreed)
    sized: list[E.Node] = [E.Cmp(">=", item, E.Const(2)) for a in case.args if a.shape is not None
                           for item in a.shape.items if not isinstance(item, (E.Var, E.Const)) and E.free_names(item)]
    if sized and solver.satisfiable(conds + sized).sat is Sat.SAT:
        conds = conds + sized
    reps = sorted(set(classes.values()))
    pairs: list[E.Node] = [E.Cmp("!=", E.Var(a), E.Var(b)) for i, a in enumerate(reps) for b in reps[i + 1:]]
    conds = kept(solver, conds, pairs)  # (one query where all fit)
    # an input size written as a formula apart from the dims and the other formulas too (hunt 59: _fft_c2r's
    # ``L // 2 + 1`` equal to B at B = 2, L = 3, and export said "B and self_size1 must always be equal")
    formulas = list(dict.fromkeys(c.left for c in sized if isinstance(c, E.Cmp)))
    terms: list[E.Node] = [E.Var(r) for r in reps]
    apart: list[E.Node] = [E.Cmp("!=", f, t) for i, f in enumerate(formulas) for t in terms + formulas[:i]]
    conds = kept(solver, conds, apart[:_APART])
    model = solver.small_model(conds)
    return None if model is None else restrict(model, [d.name for d in case.dims])


_APART = 12  # at most this many formula pairs are tried one by one


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


def _inputs(kernel: Kernel, case: BoundCase, sizes: dict[str, int], dims: dict[str, TorchObject],
            bounds: Bounds | None = None) -> _Inputs:
    """The inputs of the exported module at ``sizes`` (``bounds``: ``composite_axes``'). Raises _ExampleTooLarge."""
    import torch
    from torch.export import Dim

    tensors: list[TorchObject] = []
    dyn_specs: list[dict[int, TorchObject]] = []
    dim_at: dict[str, tuple[int, int]] = {}  # dim -> (input, axis) that carries it, for int(s) arguments
    named: Composites = {}  # one Dim per composite size, whichever inputs have it
    made: dict[str, TorchObject] = {}

    def make_tensor(a):
        shape = [cast(int, E.evaluate(i, sizes)) for i in a.shape.items]
        for j, i in enumerate(a.shape.items):
            if isinstance(i, E.Var):
                dim_at.setdefault(i.name, (len(tensors), j))
        t = _example_tensor(a.name, shape, C.DTYPES[a.dtype], *layout_at(a, sizes))
        spec = {j: dims[i.name] for j, i in enumerate(a.shape.items) if isinstance(i, E.Var) and i.name in dims}
        for j, i in enumerate(a.shape.items):  # ``r * h`` at r = 2: the derived Dim 2 * h of h's root Dim
            lin = None if isinstance(i, E.Var) else linear_item(i)
            if lin is not None and lin[0] in dims and lin[1] >= 1:
                spec[j] = lin[1] * dims[lin[0]] + lin[2] if lin[2] else lin[1] * dims[lin[0]]
        for j, (name, low, high) in composite_axes(a, sizes, dims, case.contract.dim_names, bounds, named).items():
            spec[j] = made.setdefault(name, Dim(name, min=low, max=high))  # ``C * r * r``: a Dim of its own
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


def run_export(kernel: Kernel, op: TorchObject, case: BoundCase, sizes: dict[str, int],
               classes: dict[str, str] | None = None,
               specs: dict[str, DimSpec] | None = None,
               keep: list[RunAt] | None = None, static: bool = False,
               bounds: Bounds | None = None) -> tuple[bool | None, str, str]:
    """Export the op call at ``sizes`` with dynamic dims; True when export succeeded, None when the run
    says nothing about the kernel under test (it could not be set up, or export never called it). With the
    message, how sizes that only int arguments carry were passed ("" when there are none): each as the size of
    an extra input tensor, as a wrapper module passes them. ``keep``: where export succeeded, a function that
    runs the exported program at other sizes is appended. ``static``: every dim static (no ``dynamic_shapes``):
    does export trace the op at these sizes at all?"""
    from torch.export import export

    dims = _export_dims(case, classes, specs)
    try:
        made = _inputs(kernel, case, sizes, dims, bounds)
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
            program = export(Call(), (tuple(tensors),), dynamic_shapes=None if static else (tuple(dyn_specs),),
                             strict=True)
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
            text = said(err).strip()
            if "Constraints violated" not in text and CONSTRAINT_REPORT in C.exception_functions(err):
                text = (f"{text} (raised while export reported a constraint violation, in torch's "
                        f"{CONSTRAINT_REPORT})").strip()
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
        return f"{type(err).__name__}: {first_line(said(err).strip())}"
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
    composite = composite_bounds(case, solver, set(specs))
    ok, message, ints = run_export(kernel, op, case, sizes, classes, specs, keep=kept, bounds=composite)
    if ok is None:
        return ExportResult(False, None, None, message, example=sizes, ints=ints)
    if result.verdict == Verdict.INCONCLUSIVE:
        return ExportResult(True, ok, None, message, "shapecheck was inconclusive: nothing to agree with", sizes, ints)
    agrees = ok == (result.verdict == Verdict.PASS)

    def retry(at: dict[str, int]) -> tuple[bool | None, str]:
        return run_export(kernel, op, case, at, classes, specs, bounds=composite)[:2]

    def static() -> tuple[bool | None, str]:
        return run_export(kernel, op, case, sizes, classes, specs, static=True, bounds=composite)[:2]

    why = "" if agrees else explain(case, violations, ok, message, solver, retry, sizes, kept[0] if kept else None,
                                    static)
    if ok and not agrees and KEPT_GUARD in why:  # the exported program refuses a domain point: export fails it too
        agrees = True
    least, refusal = _least_refused(case, solver, kept[0]) if ok and kept else (None, "")
    from_two = least is not None and _refused_from_two(case, least, kept[0], specs)
    if from_two and agrees and result.verdict == Verdict.PASS:
        # the program keeps a guard that refuses a point of the domain (its sizes from 2 too), and shapecheck found
        # no guard: export fails the case, shapecheck passed it (hunt 44: unfold_backward's step=2 beside step=1)
        agrees = False
        at = ", ".join(f"{k}={v}" for k, v in least.items()) if least else ""
        why = (f"not explained: the exported program refuses {at}, a point of the contract's domain, and refuses it with its sizes "
               f"below 2 raised to 2 too: a guard the program keeps, which shapecheck did not report")
    return ExportResult(True, ok, agrees, message, why, sizes, ints, least, refusal, from_two)


def _refused_from_two(case: BoundCase, at: dict[str, int], run_at: RunAt,
                      specs: dict[str, DimSpec] | None = None) -> bool:
    """Whether the program refuses ``at`` with each dynamic size below 2 raised to 2 too (where that point is in
    the case's domain): then what refuses it is a guard the program keeps, not export's 0/1 assumption. A
    derived Dim ``X = a * R + b`` has its root R raised to 2 (export's Dims start there): pixel_unshuffle's
    ``A2 = 2 * R`` at A2 = 2 is R = 1, and goes to A2 = 4, not to A2 = 2 again."""
    lifted = {k: (2 if case.contract.dim(k).dynamic and v < 2 else v) for k, v in at.items()
              if k in case.contract.dim_names} | {k: v for k, v in at.items() if k not in case.contract.dim_names}
    for name, sp in (specs or {}).items():
        if sp.base is not None and name in lifted and sp.a >= 1 and (lifted[name] - sp.b) // sp.a < 2:
            lifted[name] = 2 * sp.a + sp.b
    if lifted == at or E.evaluate(case.domain, lifted) is not True:
        return False
    error = run_at(lifted)
    return error is not None and "Guard failed" in error


def _least_refused(case: BoundCase, solver: Solver, run_at: RunAt) -> tuple[dict[str, int] | None, str]:
    """The case's least point (z3's lexicographically least model of its domain) when a dynamic size there is
    below 2 and the exported program refuses it: export assumes its Dims from 2, so a guard torch settles from
    2 up (pixel_unshuffle's ``x.size(3) // 2 != 1``) is still checked by the program, at sizes the contract
    declares. None, "" where the program runs there or no such size is in the domain."""
    model = solver.small_model([case.domain])
    if model is None:
        return None, ""
    at = restrict(model, [d.name for d in case.dims])  # the case's own dims (a rank-3 case has no N: hunt 42)
    if not any(d.dynamic and at.get(d.name, 2) < 2 for d in case.dims):
        return None, ""
    error = run_at(at)
    # a check of the program's inputs (not a runtime assert on a data-dependent size, which a finding names)
    return (at, error) if error and "Guard failed" in error else (None, "")
