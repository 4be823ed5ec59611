"""SC022: guards that torch's own helpers install under torch.export, found by running the kernel as export runs
it (``_torch.backed``: backed sizes at the example, the contract's dims as ``Dim`` ranges) and asking torch's
own constraint check (``produce_guards_verbose``), on the case's export example (``prove.export``'s).

verify's trace has unbacked sizes: a ``guard_or_false`` inside torch's helper (``_broadcast_in_dim_meta``,
``should_expand``, the contiguity checks) answers its fallback there and installs nothing, but with backed sizes,
as export traces, the same call installs a guard at the example's value. When torch's check then rejects the
Dim ranges, each such guard that does not hold on the whole domain (z3, sizes from 2 as export has them) is a
finding of its own rule, at the kernel line that called into torch: the line is the kernel's, the guard torch's.
A helper's ``guard_or_*`` that export settles without a guard is never a finding (native_group_norm's
``N != 1``: export traces from 2 up).
"""

from __future__ import annotations

import math
import weakref
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

from ..contract.model import BoundArg, BoundCase, BoundPath
from ..edges import TorchObject
from ..findings import Finding
from ..kernel.sources import Kernel, NotApplicable
from ..logic import expr as E
from ..logic.solver import Decision, Solver, restrict
from ..rules import RuleCode
from ..trace.run import call_args, first_line, missing_name, own_code
from .composite import Composites, composite_axes, composite_bounds, linear_item
from .export import DimSpec, equal_classes, example_sizes, export_dims
from .torch_decides import FIX_GUARD

if TYPE_CHECKING:
    from .._torch.backed import BackedGuard, BackedRun
    from .torch_decides import TorchView

_EXPORT_MIN = 2  # export's backed sizes start at 2 (0 and 1 are specialised)


FIX_CHECK = ("the check holds for every size of the contract (z3 proves it), but torch cannot see it from the Dim "
             "ranges, and with export's sizes torch._check installs a guard: drop the check, or state it in a form "
             "torch's value ranges follow (torch.sym_min/torch.sym_max instead of floor division and comparison)")

FIX_HINTED = ("decide the branch the same way on every size, whether or not it has a value (torch.export traces with "
              "backed sizes, which have one; a symbolic trace's do not), or state the condition as a contract "
              "precondition")

#: an input of the example larger than this is not built (the run is skipped: --confirm-export says why)
EXAMPLE_ELEMENTS = 2**22


class _TooLarge(Exception):
    pass


class _Later:
    """An int(s) argument built from dims: filled from the inputs' backed sizes once they exist."""

    def __init__(self, arg: BoundArg) -> None:
        self.arg = arg


def helper_guards(kernel: Kernel, case: BoundCase, solver: Solver) -> list[Finding]:
    """The case's SC022 findings (none where export accepts the example's run, or cannot be modelled)."""
    if kernel.mode == "fake" or not case.contract.guard_free or not any(d.dynamic for d in case.dims):
        return []  # plain FakeTensorMode's kernel is never exported; a contract that allows guards
    specs, sizes = _example(case, solver)
    if sizes is None:
        return []
    # A screen first: the same run with inputs made from backed sizes directly (``from_tensor``, export's way
    # of making them, is most of this run's cost). Only where it sees a guard of torch's helpers that restricts
    # a dim, or the kernel raising, is the run made again exactly as export makes its inputs, and reported from
    # that run. The screen's inputs must install no guard of their own (else it proves nothing: the exact run).
    screen = _backed_run(kernel, case, solver, sizes, specs, screen=True)
    if screen is None:
        return []  # an input the example makes too large to build: torch.export's own run says why
    if screen[1] is None and not screen[0].outputs_recorded:
        # an output size of 0 or 1 at the least example: torch.export's record of the outputs would pin it to 1
        # there, and at any example where it is 2 or more guards it against 1; run where it is 2 or more
        sizes, screen = _where_outputs_grow(kernel, case, solver, specs, sizes, screen)
    run, error, clean = screen
    from .torch_decides import TorchView

    view = TorchView(case, solver)  # its ranges cost z3 queries: one for the screen and the exact run
    ge2 = _as_export_sizes(case, run, sizes, specs)
    if clean and error is None and not _restricting_guards(run, case, solver, ge2) \
            and not _undischarged(run, case, view, ge2):
        # the kernel's own branches alone (the regressed SDPA kernel's ``L <= 8``) need no run with export's inputs:
        # no constraint check's refusal is read for them, and the screen's inputs installed no guard, so its
        # branches are the exact run's (half this check's cost where the kernel branches)
        return [_own_branch(case, solver, node, g, sizes, ge2) for node, g in _own_branches(run, case, solver, ge2)]
    exact = _backed_run(kernel, case, solver, sizes, specs, screen=False)
    if exact is None:
        return []
    run, error, _ = exact
    if error is not None:
        return _raised_as_exported(kernel, case, error, sizes)
    ge2 = _as_export_sizes(case, run, sizes, specs)
    out = [_cannot_discharge(case, node, g, sizes) for node, g in _undischarged(run, case, view, ge2)]
    out += [_own_branch(case, solver, node, g, sizes, ge2) for node, g in _own_branches(run, case, solver, ge2)]
    groups = _restricting_guards(run, case, solver, ge2)
    if not groups:
        return out  # no guard of torch's helpers restricts a dim: nothing more to report, whatever export's check says
    refusal = run.export_verdict()  # torch's own constraint check (the costlier half of this run)
    dims = case.point_dims
    at = ", ".join(f"{k}={v}" for k, v in sizes.items())
    refusal = None if refusal is None else _in_dim_names(refusal, run.axes)
    from .._torch.backed import OUTPUT_METADATA

    for found in groups.values():
        node, g = found[0]
        # torch.export records the outputs' metadata after its constraint check: it keeps such a guard as a check
        # of the exported program's inputs, whatever that check said
        gdims = tuple(sorted(set().union(*(E.free_names(n) for n, _ in found))))
        outcome = _outcome(None if g.origin.startswith(OUTPUT_METADATA) else refusal,
                           [E.free_names(n) for n, _ in found])
        cex = restrict(solver.small_model([case.domain, *ge2, E.negate(node)]) or {}, dims)
        wit = restrict(solver.small_model([case.domain, *ge2, node]) or {}, dims)
        line = f", reached from the kernel's line {g.kernel_line.line}," if g.kernel_line else ""
        texts = "; ".join(E.to_text(n) for n, _ in found)
        out.append(Finding(
            code=RuleCode.GUARD_IN_TORCH_HELPER, case=case.id, expr=E.to_text(node), node=node, dims=gdims, location=g.kernel_line,
            counterexample=cex, witness=wit,
            message=f"{g.origin}{line} installs the guard{'s' if len(found) > 1 else ''} {texts} when "
                    f"torch.export traces the op (backed sizes at the example {at}), and "
                    f"{'they do' if len(found) > 1 else 'it does'} not hold on the whole range of "
                    f"{', '.join(gdims)}: {outcome}. The guard is "
                    f"{_whose(g.origin)}, not a line of the kernel's own"))
    return out


def _whose(origin: str) -> str:
    """Whose guard it is, from ``attribution.origin``'s words: a helper outside torch (one of a ``--meta-source``
    file's own, beside the function it registers) is not torch's."""
    return "that helper's" if origin.startswith("the helper ") else "torch's"


GROWN = 16  # the least value of each dynamic dim at the example tried where the least one gave an output 0 or 1


def _where_outputs_grow(kernel: Kernel, case: BoundCase, solver: Solver, specs: dict[str, DimSpec],
                        sizes: dict[str, int], screen: tuple[BackedRun, BaseException | None, bool]
                        ) -> tuple[dict[str, int], tuple[BackedRun, BaseException | None, bool]]:
    """Another example, each dynamic dim at least ``GROWN`` (within its Dim range and the domain), where every
    output size is 2 or more and the kernel runs: (its sizes, its screen run). The example and run given where
    none is found (the record is then left out, as before)."""
    floor = [E.Cmp(">=", E.Var(d), E.Const(min(sp.hi, max(sizes[d], GROWN)))) for d, sp in specs.items()
             if d in sizes and sp.base is None]
    bounds = [E.Cmp("<=", E.Var(d), E.Const(sp.hi)) for d, sp in specs.items() if d in sizes]
    fixed = [E.Cmp("==", E.Var(d), E.Const(v)) for d, v in sizes.items() if d not in specs]  # static dims stay
    model = None
    for grown in ([*_outputs_from_2(p), p.when] for p in case.paths):  # the contract's own output sizes from 2
        # (constant_pad_nd's W - PL - PR: every dim from 16 gave it 0, hunt 42), else the dims alone
        model = model or (solver.small_model([case.domain, *floor, *bounds, *fixed, *grown]) if floor else None)
    model = model or (solver.small_model([case.domain, *floor, *bounds, *fixed]) if floor else None)
    if not model:
        return sizes, screen
    bigger = {d: model.get(d, v) for d, v in sizes.items()}
    again = _backed_run(kernel, case, solver, bigger, specs, screen=True)
    if again is None or again[1] is not None or not again[0].outputs_recorded:
        return sizes, screen
    return bigger, again


def _outputs_from_2(p: BoundPath) -> list[E.Node]:
    """Each size of the path's stated output shapes that dims make at 2 or more (the shapes with data-dependent sizes
    and the constant sizes left out: a keepdim's 1 is no size the record guards)."""
    return [E.Cmp(">=", item, E.Const(2)) for out in p.outputs if isinstance(out, E.TupleE) for item in out.items
            if E.free_names(item)]


_Axis = tuple[str, int, int]  # (the Dim's name, least, greatest)


def _derived_axes(a: BoundArg, sizes: dict[str, int], specs: dict[str, DimSpec],
                  axis: Callable[[str, int], _Axis | None]) -> dict[int, tuple[int, int, _Axis, int]]:
    """The axes of ``a`` written ``k * X + c`` over one dynamic dim X (``(N, 2 * H)``), as --confirm-export gives
    them to torch.export (the derived Dim ``k * H`` of H's): axis -> (k, c, X's Dim, X's value). Made a
    constant, such an axis made ``same_shape`` guard ``H == 3`` where export guards nothing (a hunt's false
    SC022 on ``glu.out``)."""
    out: dict[int, tuple[int, int, _Axis, int]] = {}
    assert a.shape is not None  # a tensor argument's
    for j, item in enumerate(a.shape.items):
        lin = None if isinstance(item, E.Var) else linear_item(item)
        if lin is None or lin[1] < 1 or lin[0] not in sizes:
            continue
        sp = specs.get(lin[0])
        dyn = axis(lin[0], sizes[lin[0]]) if sp is not None and sp.base is None else None
        if dyn is not None:
            out[j] = (lin[1], lin[2], dyn, sizes[lin[0]])
    return out


#: solver -> (contract dims, domain, case dims, input shapes) -> (Dim specs, example sizes): the same for every
#: case whose domain, dims and input shapes repeat (the dtype siblings), and about a tenth of this check's cost when asked again
_EXAMPLES: weakref.WeakKeyDictionary[Solver, dict[tuple[object, ...], tuple[dict[str, DimSpec], dict[str, int] | None]]]
_EXAMPLES = weakref.WeakKeyDictionary()


def _example(case: BoundCase, solver: Solver) -> tuple[dict[str, DimSpec], dict[str, int] | None]:
    """The case's Dims as export takes them and export's own example (prove.export.confirm's): a derived Dim's
    root from 2 up, as export specialises 0 and 1. None for the sizes where no example fits the domain."""
    memo = _EXAMPLES.setdefault(solver, {})
    # the inputs' shapes too: a size written as a formula is asked from 2 (``example_sizes``), and two cases of one
    # domain may give an input other formulas (unfold_backward's F = (D - size) // step + 1 of each step, hunt 44)
    key = (case.contract.dims, case.domain, case.dims, tuple(a.shape for a in case.args if a.shape is not None))
    if key not in memo:
        classes = equal_classes(case, solver)
        specs = export_dims(case, solver, classes, modulo=True)
        roots = tuple(sorted({sp.base for sp in specs.values() if sp.base}))
        memo[key] = specs, example_sizes(case, solver, classes, roots, specs)
    specs, sizes = memo[key]
    return specs, (None if sizes is None else dict(sizes))


def export_floors(case: BoundCase, solver: Solver) -> list[E.Node]:
    """Where torch.export traces the case's dynamic dims: each from 2, a derived Dim ``X = a * R + b`` from
    ``2 * a + b`` (its root R from 2 up: glu's even ``A1`` is ``2 * R``, and export specialises ``A1 == 2``, R of 1,
    as it does every size of 0 or 1). A guard of torch's helpers counts only there (fuzz's, as verify's run)."""
    specs, _ = _example(case, solver)
    out: list[E.Node] = []
    for d in case.dims:
        if d.dynamic:
            sp = specs.get(d.name)
            low = _EXPORT_MIN * sp.a + sp.b if sp is not None and sp.base is not None else _EXPORT_MIN
            out.append(E.Cmp(">=", E.Var(d.name), E.Const(low)))
    return out


def _backed_run(kernel: Kernel, case: BoundCase, solver: Solver, sizes: dict[str, int], specs: dict[str, DimSpec], *,
                screen: bool) -> tuple[BackedRun, BaseException | None, bool] | None:
    """The kernel run with backed sizes at the example ``sizes``: (the run, what the kernel raised, whether
    making the inputs installed no guard), or None where the case cannot be run so (an argument this check
    cannot build, an input too large). ``screen``: inputs from ``BackedRun.ranged`` sizes; else built as
    torch.export builds them (``from_tensor`` with ``Dim`` ranges), the run whose guards and constraint check
    are reported."""
    from .._torch import backed as B

    run = B.BackedRun(own_code(kernel))
    bounds = composite_bounds(case, solver, set(specs))
    named: Composites = {}  # one Dim per composite size, whichever inputs have it
    # a Dim -> how the exact run makes its sizes: "ranged" (one symbol per Dim and example value: the axes of an
    # input with a derived axis) or "input" (an input of its own, as torch.export makes it: a symbol per input)
    made: defaultdict[str, set[str]] = defaultdict(set)
    carried: dict[str, TorchObject] = {}  # dim -> the backed size of an input that carries it

    def axis(name: str, value: int) -> tuple[str, int, int] | None:
        sp = specs.get(name)
        return (sp.rep, sp.lo, sp.hi) if sp is not None and value >= _EXPORT_MIN else None

    def make_tensor(a: BoundArg) -> TorchObject:
        assert a.shape is not None and a.dtype is not None  # a tensor argument has both
        shape = [cast(int, E.evaluate(i, sizes)) for i in a.shape.items]
        if math.prod(shape) > EXAMPLE_ELEMENTS:
            raise _TooLarge(a.name)
        dynamic = {j: dyn for j, item in enumerate(a.shape.items)
                   if isinstance(item, E.Var) and (dyn := axis(item.name, shape[j])) is not None}
        derived = _derived_axes(a, sizes, specs, axis)
        for j, (name, low, high) in composite_axes(a, sizes, specs, case.contract.dim_names, bounds, named).items():
            if j not in derived:  # ``S1 + S2``: a Dim of its own, which the guards relate to S1 and S2
                dynamic[j] = (name, low, high)
                run.stands_for[name] = a.shape.items[j]

        def size(j: int, n: int) -> TorchObject:
            if j in dynamic:
                rep, lo, hi = dynamic[j]
                return run.ranged(rep, n, lo, hi)
            if j in derived:
                k, c, (rep, lo, hi), value = derived[j]
                return k * run.ranged(rep, value, lo, hi) + c
            return n

        for j in [*dynamic, *derived]:  # how the exact run makes each Dim's size (below)
            made[(dynamic[j] if j in dynamic else derived[j][2])[0]].add("ranged" if derived else "input")
        if screen or derived:  # an axis ``2 * H`` is export's derived Dim of H's: that size, not a constant
            fake = run.empty([size(j, n) for j, n in enumerate(shape)], a.dtype)
        else:
            fake = run.tensor(a.name, shape, a.dtype, dynamic)
        for j, item in enumerate(a.shape.items):
            if isinstance(item, E.Var):
                carried.setdefault(item.name, fake.size(j))
        return fake

    try:
        args, kwargs = call_args(kernel, case, make_tensor, _Later)
    except (NotApplicable, _TooLarge):
        return None
    for name in sorted(_later_names([*args, *kwargs.values()]) - set(carried)):
        # a size only an int argument carries: the shape of an extra input, as prove.export passes it to export
        dyn = axis(name, sizes[name])
        if dyn is not None:
            made[dyn[0]].add("input")
        if screen:
            carried[name] = sizes[name] if dyn is None else run.ranged(dyn[0], sizes[name], dyn[1], dyn[2])
        else:
            carried[name] = run.tensor(f"size_{name}", [sizes[name]], "float32", {0: dyn} if dyn else {}).size(0)
    args, kwargs = _filled(args, carried), {k: _filled(v, carried) for k, v in kwargs.items()}
    # the screen stands in for the exact run only where both give each Dim one symbol: the exact run gives a Dim
    # that a derived axis and another input both have two (unfold_backward's F = D - 2 beside an int D, hunt 44),
    # and the guards torch then installs relating them, which export keeps, the screen's one symbol never asks
    clean = run.installed() == 0 and not any(len(ways) > 1 for ways in made.values())
    _, error = run.run(kernel.fn, args, kwargs, record_outputs=True)
    return run, error, clean


def _raised_as_exported(kernel: Kernel, case: BoundCase, error: BaseException, sizes: dict[str, int]) -> list[Finding]:
    """SC007 where the kernel raises at the example as export runs it. torch's code may branch on whether sizes
    have hints (FakeTensor's conv rule checks stride and padding lengths only then), so the symbolic trace's
    unbacked sizes can pass where export's backed ones raise; where the trace raised too, verify reports it
    already (the same error text is not reported twice)."""
    from .._torch import core as C
    from ..errors import ShapecheckError

    if isinstance(error, (NotApplicable, ShapecheckError)) or missing_name(error):
        return []  # shapecheck's own (a contract the kernel cannot take), or a name this torch lacks: verify says it
    if any(a.layout is not None for a in case.args if a.kind == "tensor"):
        return []  # this run makes every input contiguous: a raise may be the layout's, not the contract's input
    text = f"{type(error).__name__}: {first_line(error)}"
    at = ", ".join(f"{k}={v}" for k, v in sizes.items())
    return [Finding(code=RuleCode.KERNEL_ERROR, case=case.id, expr=text,
                    location=C.kernel_frame(C.exception_frames(error), own_code(kernel)),
                    counterexample={d.name: sizes[d.name] for d in case.dims if d.name in sizes},
                    message=f"the kernel raised {text} when run as torch.export runs it (backed sizes at the example "
                            f"{at}); the symbolic trace, whose sizes have no hints, did not: torch's code took "
                            "another path there")]


def _as_export_sizes(case: BoundCase, run: BackedRun, sizes: dict[str, int], specs: dict[str, DimSpec]) -> list[E.Node]:
    """The sizes export traces: a dim the run made a backed size from 2 up, every other dim (static in export:
    fixed by the domain, 0 or 1 at the example, or only in a composite size) at the example's value. A derived
    Dim ``X = a * R + b`` has its root R from 2 up in export, so X >= 2 * a + b (the run itself gives X a Dim of
    its own: a guard that holds only for R = 1, such as col2im's ``A0 // 4 == 1``, is no guard of export's)."""
    named = set(run.names.values()) | run.backed_dims
    # a dim that shares another's Dim (the domain forces them equal) or is derived from one is backed with it
    backed = named | {n for n, sp in specs.items() if sp.rep in named or (sp.base is not None and sp.base in named)}
    out: list[E.Node] = [E.Cmp(">=", E.Var(d.name), E.Const(_EXPORT_MIN)) if d.name in backed
                         else E.Cmp("==", E.Var(d.name), E.Const(sizes[d.name])) for d in case.dims if d.name in sizes]
    return out + [E.Cmp(">=", E.Var(name), E.Const(_EXPORT_MIN * sp.a + sp.b)) for name, sp in specs.items()
                  if sp.base is not None and name in backed]


def _restricting_guards(run: BackedRun, case: BoundCase, solver: Solver,
                        ge2: Sequence[E.Node]) -> dict[tuple[str, tuple[str, int] | None], list[tuple[E.Node, BackedGuard]]]:
    """(who asked, kernel line) -> the guards of torch's helpers in ``run`` that restrict a dynamic dim on the
    case's domain (sizes from 2), each once: (the guard as an expression, the guard record)."""
    groups: dict[tuple[str, tuple[str, int] | None], list[tuple[E.Node, BackedGuard]]] = {}
    for g in run.guards:
        if not g.origin:
            continue  # the kernel's own guard: verify's trace reports it (SC001, SC003, SC004, SC016)
        node = _node(run, g.expr)
        if node is None:
            continue
        if not any(case.contract.dim(n).dynamic for n in E.free_names(node) if n in case.contract.dim_names):
            continue
        if solver.decide([case.domain, *ge2], node)[0] is not Decision.BOTH:
            continue  # it holds (or fails) on the whole range: torch's own reasoning is SC016's question
        key = (g.origin, (g.kernel_line.file, g.kernel_line.line) if g.kernel_line else None)
        if all(E.to_text(node) != E.to_text(n) for n, _ in groups.get(key, [])):
            groups.setdefault(key, []).append((node, g))
    return groups


def _own_branches(run: BackedRun, case: BoundCase, solver: Solver,
                  ge2: Sequence[E.Node]) -> list[tuple[E.Node, BackedGuard]]:
    """The kernel's own branches in the run (neither a ``torch._check`` nor a ``guard_or_*``, which the trace
    reports its own way) that restrict a dynamic dim on the domain from 2 up, each once. verify's trace sees each
    branch the kernel takes on its sizes, except one it takes only where a size has a hint
    (``has_guarding_hint(n) and n <= 8``: unbacked sizes have none; hunt 47): the caller keeps those the trace did
    not report."""
    out: list[tuple[E.Node, BackedGuard]] = []
    for g in run.guards:
        if g.origin or g.assertion or g.fallback:
            continue
        node = _node(run, g.expr)
        if node is None or any(E.to_text(node) == E.to_text(n) for n, _ in out):
            continue
        if not any(case.contract.dim(n).dynamic for n in E.free_names(node) if n in case.contract.dim_names):
            continue
        if solver.decide([case.domain, *ge2], node)[0] is Decision.BOTH:
            out.append((node, g))
    return out


def _own_branch(case: BoundCase, solver: Solver, node: E.Node, g: BackedGuard, sizes: dict[str, int],
                ge2: Sequence[E.Node]) -> Finding:
    """SC001 for the kernel's own branch seen only with backed sizes: torch.export installs it as a guard and
    rejects the Dim ranges on its other side."""
    dims = case.point_dims
    gdims = tuple(sorted(E.free_names(node) & set(case.contract.dim_names)))
    at = ", ".join(f"{k}={v}" for k, v in sizes.items())
    return Finding(
        code=RuleCode.GUARD_ON_DYNAMIC_DIM, case=case.id, expr=E.to_text(node), node=node, dims=gdims,
        location=g.kernel_line, fix=FIX_HINTED,
        counterexample=restrict(solver.small_model([case.domain, *ge2, E.negate(node)]) or {}, dims),
        witness=restrict(solver.small_model([case.domain, *ge2, node]) or {}, dims),
        message=f"the kernel branches on {E.to_text(node)} when torch.export traces the op (backed sizes at the "
                f"example {at}), and it does not hold on the whole range of {', '.join(gdims)}: torch.export installs "
                "the guard and rejects the Dim ranges. verify's symbolic trace did not take this branch: the kernel "
                "decides it only where a size has a value (a hint), which the trace's unbacked sizes lack")


def _undischarged(run: BackedRun, case: BoundCase, view: TorchView,
                  ge2: Sequence[E.Node]) -> list[tuple[E.Node, BackedGuard]]:
    """The guards of the run, each once, that hold on the whole domain (z3, sizes from 2) but that torch cannot
    decide from the Dim ranges and that read one dim once export's derived dims are replaced: torch.export
    rejects the range over each (``TorchView.rejects``). Only those verify's trace cannot see: torch's helpers'
    guards, and the kernel's own asserts, which a backed size turns into guards (``torch._check`` is a guard
    where the size has a hint; the trace's unbacked sizes defer it as a runtime assert)."""
    from .._torch import static as CS
    from .._torch.backed import OUTPUT_METADATA

    solver = view.solver
    out: list[tuple[E.Node, BackedGuard]] = []
    for g in run.guards:
        if not (g.origin or g.assertion):
            continue  # the kernel's own branch: verify's trace asks torch about it (SC016)
        if g.origin.startswith(OUTPUT_METADATA):
            continue  # the output record runs after export's constraint check: it rejects no range, and a guard
            # that holds on the whole domain is a program input check that never fails
        node = _node(run, g.expr)
        if node is None:
            continue
        if not view.guarded_dynamic(E.free_names(node) & set(case.contract.dim_names)) \
                or any(E.to_text(node) == E.to_text(n) for n, _ in out):
            continue
        if solver.decide([case.domain, *ge2], node)[0] is not Decision.TRUE:
            continue  # a guard that restricts a dim (SC022 above, or the trace's SC001/SC004)
        try:
            if view.rejects(node, []):
                out.append((node, g))
        except CS.TorchCannotSay:
            continue  # the trace's own question says inconclusive where it matters
    return out


def _node(run: BackedRun, expr: TorchObject) -> E.Node | None:
    """A guard of ``run`` in the contract's dims: an axis of several dims that had a Dim of its own
    (``run.stands_for``) written as its expression again. None where it does not translate."""
    from .._torch import translate as T

    try:
        node = T.to_node(expr, dict(run.names))
    except T.Unsupported:
        return None
    stands = {n: cast(E.Node, run.stands_for[n]) for n in E.free_names(node) & set(run.stands_for)}
    return E.bind(node, stands) if stands else node


def _cannot_discharge(case: BoundCase, node: E.Node, g: BackedGuard, sizes: dict[str, int]) -> Finding:
    """SC016 for a guard that export installs and cannot discharge, the kernel's own assert or a helper's guard
    (named in the message): no size is wrong (no counterexample), the proof is one torch cannot make."""

    text, gdims = E.to_text(node), tuple(sorted(E.free_names(node) & set(case.contract.dim_names)))
    at = ", ".join(f"{k}={v}" for k, v in sizes.items())
    who = (f"{g.origin}{f', reached from the kernel line {g.kernel_line.line},' if g.kernel_line else ''} installs"
           if g.origin else "the kernel's torch._check becomes")
    low = [n for n in gdims if case.contract.dim(n).min < _EXPORT_MIN]  # proved from 2 up: export's sizes
    where = (f"for every size of {', '.join(gdims)} in the contract" if not low else
             f"wherever {' and '.join(f'{n} >= {_EXPORT_MIN}' for n in low)} in the contract (the sizes torch.export "
             "traces)")
    # SC016 whoever asked (the trace's own run of such a guard is SC016 too, ``torch_decides.settled_guard``): a
    # rule that followed the asker flipped with the path the trace took, and a contract's accepted SC016 read
    # as stale (hunt 57: pooling_output_shape_pad_lr's ceil-mode guard once div_rtn branched before it)
    return Finding(
        code=RuleCode.GUARD_TORCH_CANNOT_DISCHARGE,
        case=case.id, expr=text, node=node, dims=gdims, location=g.kernel_line, counterexample={},
        fix=FIX_GUARD if g.origin else FIX_CHECK,
        message=f"{who} the guard {text} when torch.export traces the op (backed sizes at the example {at}); it "
                f"holds {where} (proved by z3), but torch cannot prove it from the Dim ranges, so "
                "torch.export rejects the Dim range")


def _in_dim_names(message: str, axes: dict[tuple[str, int], str]) -> str:
    """torch's message with ``L['query'].size()[2]`` written as the dim it carries."""
    import re

    return re.sub(r"L\['(\w+)'\]\.size\(\)\[(\d+)\]",
                  lambda m: axes.get((m.group(1), int(m.group(2))), m.group(0)), message)


def _later_names(items: list[TorchObject]) -> set[str]:
    """The dims that the int(s) arguments among ``items`` are built from."""
    out: set[str] = set()
    for x in items:
        if isinstance(x, list):
            out |= _later_names(x)
        elif isinstance(x, _Later) and x.arg.expr is not None:
            out |= E.free_names(x.arg.expr)
    return out


def _filled(x: TorchObject, carried: dict[str, TorchObject]) -> TorchObject:
    from .._torch import core as C

    if isinstance(x, _Later):
        expr = x.arg.expr
        assert expr is not None  # a _Later is made for an argument built from dims
        return C.sym_value(expr, {n: carried[n] for n in E.free_names(expr)})
    if isinstance(x, list):
        return [_filled(i, carried) for i in x]
    return x


def _outcome(refusal: str | None, dims: list[set[str]]) -> str:
    """What torch.export does with the Dim ranges over the guards (``dims``: each guard's): rejects them (torch's
    line), or, where its constraint check lets a guard over two or more dims pass, keeps the guard as a check of
    the exported program's inputs, which then refuses every size on its other side (issue 22: unfold_backward's
    ``min(A0, I0 - 1) != 1`` from broadcasting)."""
    line = None if refusal is None else _first(refusal, dims)
    if line is not None:
        return f"torch.export rejects the Dim range ({line})"
    return ("torch.export accepts the Dim ranges but keeps the guard as a check of the exported program's inputs, "
            "so the program refuses the sizes on its other side (the counterexample)")


def _first(message: str, dims: list[set[str]]) -> str | None:
    """The line of torch's refusal about a guard over exactly the dims of one of the guards (``dims``: each
    guard's; else its first line, where it names no constraint violation); None where its violations are all
    about guards over other dims: torch rejected the run for another guard, and keeps this one as a check of the
    program's inputs (hunt 37: a 3-D convolution's ``max(1, D - 2) * max(1, H - 2) * max(1, W - 2) != 1`` was
    said rejected with torch's line about ``W - 2 != 1``; strict export succeeds and keeps it). Guards grouped
    at one line (``W == 5; H == 4``, linspace's steps) are refused one dim a line: a line about either is
    the refusal (hunt 65: "accepts the Dim ranges" where torch refused both)."""
    import re

    lines = [line.strip().lstrip("- ").strip() for line in message.splitlines() if line.strip()]
    found = [line for line in lines if "satisfy the generated guard" in line or "must always be equal" in line
             or "specialized" in line]
    names = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
    every = set().union(*dims)
    mine = [line for line in found if {d for d in names.findall(line) if d in every} in dims]
    if found and not mine:
        return None
    chosen = (mine or lines or ["its constraint check failed"])[0]
    return "torch: " + chosen[:300].rstrip(".")
