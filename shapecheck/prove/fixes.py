"""Fix suggestions for violations, by kind, from what exploration found (a verify.CaseRun)."""

from __future__ import annotations

from dataclasses import replace

from ..findings import Finding
from ..logic import expr as E
from ..logic.simplify import shown
from ..logic.solver import Outcome, Solver
from ..rules import RuleCode
from ..trace.run import OutputKind
from .obligations import Leaf
from .pathmap import unpin


def suggest_fixes(run, findings: list[Finding], solver: Solver) -> list[Finding]:
    """A pass: ``findings`` of the case explored in ``run``, each with a ``fix`` suggestion (new findings)."""
    return [replace(v, fix=_suggest(v, run, solver, findings)) for v in findings]


def _suggest(v: Finding, run, solver: Solver, findings: list[Finding]) -> str:
    if v.code == RuleCode.OUTPUT_SHAPE_MISMATCH and v.expected is not None:
        return f"return the contract's shape on path {v.path}: {shown(v.expected)}"
    if v.code in (RuleCode.GUARD_TORCH_CANNOT_DISCHARGE, RuleCode.OUTPUT_LAYOUT_MISMATCH,
                  RuleCode.DYNAMIC_SIZE_RANGE):  # a fix the finding chose for itself, else the rule's
        return v.fix or v.rule.fix
    if v.code == RuleCode.GUARD_IN_TORCH_HELPER and v.message.startswith("the helper "):
        # a helper of the kernel's file (a --meta-source copy's own, beside the function registered), not torch's:
        # its branch is the kernel's to change, as SC001's is
        return "the helper is the kernel file's own, not torch's: " + _branch_fix(v, run, solver, findings)
    if v.code != RuleCode.GUARD_ON_DYNAMIC_DIM:
        return v.rule.fix
    if v.fix:  # the export-style run's branch, which no trace explored (``helper_guards._own_branch``)
        return v.fix
    return _branch_fix(v, run, solver, findings)


def _branch_fix(v: Finding, run, solver: Solver, findings: list[Finding]) -> str:
    """The fix of a branch of the kernel's own code on a dynamic dim."""
    formulas = _path_independent(run, solver)
    if formulas is not None:
        said = "; ".join(f"output {i} = {f}" for i, f in formulas)
        these = "that path-independent shape" if len(formulas) == 1 else "those path-independent shapes"
        minmax = " (torch.sym_min / torch.sym_max for a min or max of sizes: Python's min() and max() compare, " \
                 "and a comparison of sizes is a branch)" if any(w in f for _, f in formulas for w in ("min(", "max(")) \
            else ""
        return (f"the branch is unnecessary for shapes: every explored branch returns {said}; return {these} "
                f"without branching{minmax}" + _empty_caution(v, run, solver))
    if _sides_agree(v, run, solver):
        return (f"the branch on {v.expr} changes no output: its two sides return the same shapes under the same "
                "other conditions; remove it (the outputs differ by other branches of this case)"
                + _empty_caution(v, run, solver))
    return _narrowest_dims(v, run, solver, findings)


def _empty_caution(v: Finding, run, solver: Solver) -> str:
    """Where the guard holds only where a size is 0 (``A0 * A1 == 0``): the other side's code may not hold
    there (a modulo by that size: _refs' roll without its ``numel() == 0`` return raises ZeroDivisionError), and
    removing the branch would be that bug."""
    if v.node is None or not v.dims:
        return ""
    zero = E.disj([E.Cmp("==", E.Var(d), E.Const(0)) for d in v.dims])
    if solver.implies([run.case.domain, v.node], zero).outcome != Outcome.PROVED:
        return ""
    return (f"; but {v.expr} holds only where a size is 0, and the other side's code may not hold there (a "
            "division or modulo by that size): remove the branch only if it does; else keep it as "
            "guard_or_false(...) (torch.fx.experimental.symbolic_shapes: the branch at plain sizes, no guard under "
            "symbolic ones; verify checks both sides), or start the dims' ranges at 1")


def _sides_agree(v: Finding, run, solver: Solver) -> bool:
    """True when every pair of finished traces that differ only in this guard's side returns the same
    outputs (proved over the rest of their region), and there is at least one such pair."""
    return _sides(v, run, solver) is Outcome.PROVED


def _sides(v: Finding, run, solver: Solver) -> Outcome:
    """Whether the guard's two sides return the same outputs: PROVED for every pair of finished traces that differ
    only in its side (at least one pair); REFUTED where a pair's outputs differ; UNKNOWN otherwise (no pair: a side
    never finished; a size made from data)."""
    if v.node is None:
        return Outcome.UNKNOWN
    g, ng = v.node, E.negate(v.node)
    pairs = 0
    for a in run.leaves:
        if g not in a.pc:
            continue
        rest = [c for c in a.pc if c != g]
        for b in run.leaves:
            if ng not in b.pc or [c for c in b.pc if c != ng] != rest:
                continue
            pairs += 1
            outs_a, outs_b = a.trace.outputs, b.trace.outputs
            if len(outs_a) != len(outs_b):
                return Outcome.REFUTED
            for x, y in zip(outs_a, outs_b):
                if x.kind is not OutputKind.TENSOR or y.kind is not OutputKind.TENSOR \
                        or not _of_dims(x.shape, run.case.contract.dim_names) \
                        or not _of_dims(y.shape, run.case.contract.dim_names):
                    return Outcome.UNKNOWN  # (a data-dependent size of each side's own: not comparable by z3)
                if len(x.shape.items) != len(y.shape.items):
                    return Outcome.REFUTED
                eq = E.conj([E.compare("==", i, j) for i, j in zip(x.shape.items, y.shape.items)])
                said = solver.implies([run.case.domain, *rest], eq).outcome
                if said is not Outcome.PROVED:
                    return said
    return Outcome.PROVED if pairs else Outcome.UNKNOWN


def _path_independent(run, solver: Solver) -> list[tuple[int, str]] | None:
    """For every tensor output, the one formula that every finished trace's output equals on its own region:
    (index, formula) each, or None where an output has none (hunt 68: lu_unpack's ``min(m, n)`` gives output 0
    the same shape on both sides and outputs 1 and 2 not, so returning output 0's shape fixes nothing)."""
    counts = {len(leaf.trace.outputs) for leaf in run.leaves}
    if len(run.leaves) < 2 or len(counts) != 1:
        return None
    out: list[tuple[int, str]] = []
    for i in range(counts.pop()):
        kinds = {leaf.trace.outputs[i].kind for leaf in run.leaves}
        if kinds == {OutputKind.OTHER}:
            continue  # None (or a float) on every side: nothing of the dims to return
        formula = _path_independent_output(run, solver, i)
        if formula is None:
            return None
        out.append((i, formula))
    return out or None


def _path_independent_output(run, solver: Solver, i: int) -> str | None:
    """A single formula of output ``i`` (a tensor's shape, or an int) that every finished trace equals on its own
    region, if one exists."""
    case = run.case
    order = list(case.contract.dim_names)
    outs: list[tuple[Leaf, E.Node]] = []
    for leaf in run.leaves:
        out = leaf.trace.outputs[i]
        value = unpin(out, leaf.pc, order).shape if out.kind is OutputKind.TENSOR else \
            out.scalar if out.kind is OutputKind.INT else None
        if value is None or not _of_dims(value, order):
            return None  # (a size the kernel made from data, ``?u2 + 1``: no formula of the dims states it)
        outs.append((leaf, value))
    tensor = isinstance(outs[0][1], E.TupleE)
    candidates: list[E.Node] = [v for _, v in outs]
    candidates += [o for p in case.paths if len(p.outputs) > i and (o := p.outputs[i]) is not None
                   and isinstance(o, E.TupleE) is tensor]
    for cand in dict.fromkeys(candidates):
        ok = True
        for leaf, value in outs:
            if isinstance(value, E.TupleE) and isinstance(cand, E.TupleE):
                if len(value.items) != len(cand.items):
                    ok = False
                    break
                eq = E.conj([E.compare("==", a, b) for a, b in zip(value.items, cand.items)])
            elif isinstance(value, E.TupleE) or isinstance(cand, E.TupleE):
                ok = False
                break
            else:
                eq = E.compare("==", value, cand)
            if solver.implies([case.domain, *leaf.pc], eq).outcome != Outcome.PROVED:
                ok = False
                break
        if ok:
            return shown(cand)
    return None


def _of_dims(shape: E.Node, dims) -> bool:
    """Whether a traced shape reads the contract's dims only (no size the kernel made from data)."""
    return E.free_names(shape) <= set(dims)


def _intervals(solver: Solver, domain: E.Node, side: E.Node, name: str, most: int = 3) -> list[tuple[int, int]]:
    """The ranges of ``name`` where ``side`` holds on the domain, at most ``most`` of them, least first: the side
    of ``B == 1`` that is false is [0, 0] and [2, 65536], never one Dim range [0, 65536], which holds B = 1 (hunt
    53). [] where z3 cannot tell, or the side has more pieces."""
    v = E.Var(name)
    out: list[tuple[int, int]] = []
    lo = solver.extreme([domain, side], name, lowest=True)
    while lo is not None and len(out) < most:
        # the piece from lo ends before the least value past it where the side does not hold (or at the top)
        gap = solver.extreme([domain, E.negate(side), E.Cmp(">", v, E.Const(lo))], name, lowest=True)
        top = solver.extreme([domain, side] + ([E.Cmp("<", v, E.Const(gap))] if gap is not None else []), name,
                             lowest=False)
        if top is None:
            return []
        out.append((lo, top))
        if gap is None:
            return out
        lo = solver.extreme([domain, side, E.Cmp(">", v, E.Const(gap))], name, lowest=True)
    return out if lo is None else []


#: what a side of a guard fails on by itself, whatever the guard: a Dim range there would not pass either
_FAILS_ALONE = {RuleCode.OUTPUT_SHAPE_MISMATCH, RuleCode.KERNEL_ERROR, RuleCode.ASSERT_NARROWS_RANGE,
                RuleCode.OUTPUT_DTYPE_MISMATCH, RuleCode.OUTPUT_LAYOUT_MISMATCH, RuleCode.OUTPUT_PRESENCE_MISMATCH,
                RuleCode.DYNAMIC_SIZE_RANGE}


def _failing_on(side: E.Node, v: Finding, findings: list[Finding]) -> Finding | None:
    """A finding of ``v``'s case, of its own (a wrong output, a raise), whose counterexample lies on ``side``."""
    for f in findings:
        if f.case != v.case or f.code not in _FAILS_ALONE or not f.counterexample:
            continue
        try:
            if E.evaluate(side, f.counterexample) is True:
                return f
        except Exception:  # noqa: BLE001, S112 - a point the side is undefined at: not on it
            continue
    return None


def _narrowest_dims(v: Finding, run, solver: Solver, findings: list[Finding]) -> str:
    """The widest Dim range on either side of a one-dim guard (what export would need to pass), leaving out a
    side with a finding of its own (hunt 67: topk's planted ``L < 8`` side, wrong in its shape, was offered)."""
    if len(v.dims) != 1:
        differ = _sides(v, run, solver) is Outcome.REFUTED
        return (f"the branches {'give different outputs' if differ else 'are not shown to give the same outputs'}, "
                f"so the kernel {'needs' if differ else 'may need'} to know how {', '.join(v.dims)} relate: state the "
                "relation as a contract precondition (requires), or make one of the dims static")
    name = v.dims[0]
    cond = v.node
    if cond is None:  # torch's own expression (outside the contract language): no Dim ranges to offer
        return ""
    d = run.case.contract.dim(name)
    sides, failing = [], []
    for side in (cond, E.negate(cond)):
        ranges = [f"Dim('{name}', min={lo}, max={hi})" for lo, hi in _intervals(solver, run.case.domain, side, name)]
        found = _failing_on(side, v, findings)
        if found is not None and ranges:
            at = ", ".join(f"{k}={x}" for k, x in found.counterexample.items())
            failing.append(f"{' or '.join(ranges)} fails on its own ({found.code} at {at})")
        else:
            sides += ranges
    if not sides:
        return f"neither side of the branch passes as it is: {'; '.join(failing)}" if failing else ""
    # "different" only where a pair of finished traces shows it (hunt 59: one side never finished, and the shapes
    # agree there in eager and fake alike)
    why = ("the branches give different output shapes, so the branch is a genuine need" if
           _sides(v, run, solver) is Outcome.REFUTED else "the branches are not shown to give the same output shapes "
           "(a side not traced to its end, or outputs z3 cannot compare), so the branch may be a genuine need")
    return (f"{why}; the kernel passes only with {name} limited to one side: {' or '.join(sides)} (the contract "
            f"allows [{d.min}, {d.max}])" + "".join(f"; {f}" for f in failing))
