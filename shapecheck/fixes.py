"""Fix suggestions for violations, by kind, from what exploration found (a verify.CaseRun)."""

from __future__ import annotations

from dataclasses import replace

from . import expr as E
from .findings import Violation
from .pathmap import unpin
from .solver import Outcome, Solver
from .trace import OutputKind


def suggest_fixes(run, solver: Solver) -> list[Violation]:
    """The run's violations, each with a ``fix`` suggestion."""
    return [replace(v, fix=_suggest(v, run, solver)) for v in run.violations]


def _suggest(v: Violation, run, solver: Solver) -> str:
    if v.code == "SC002" and v.expected is not None:
        return f"return the contract's shape on path {v.path}: {E.to_text(v.expected)}"
    if v.code == "SC016":
        return v.fix or v.rule.fix
    if v.code != "SC001":
        return v.rule.fix
    formula = _path_independent_out0(run, solver)
    if formula is not None:
        return (f"the branch is unnecessary for shapes: every explored branch returns output 0 = {formula}; "
                "return that path-independent shape without branching")
    return _narrowest_dims(v, run, solver)


def _path_independent_out0(run, solver: Solver) -> str | None:
    """A single output-0 formula that every finished trace equals on its own region, if one exists."""
    case = run.case
    order = list(case.contract.dim_names)
    outs = []
    for leaf in run.leaves:
        out = leaf.trace.outputs[0] if leaf.trace.outputs else None
        if out is None or out.kind is not OutputKind.TENSOR:
            return None
        outs.append((leaf, unpin(out, leaf.pc, order)))
    if len(outs) < 2:
        return None
    candidates = [o.shape for _, o in outs]
    candidates += [p.outputs[0] for p in case.paths if p.outputs and isinstance(p.outputs[0], E.TupleE)]
    for cand in dict.fromkeys(candidates):
        ok = True
        for leaf, out in outs:
            if len(out.shape.items) != len(cand.items):
                ok = False
                break
            eq = E.conj([E.compare("==", a, b) for a, b in zip(out.shape.items, cand.items)])
            if solver.implies([case.domain, *leaf.pc], eq).outcome != Outcome.PROVED:
                ok = False
                break
        if ok:
            return E.to_text(cand)
    return None


def _narrowest_dims(v: Violation, run, solver: Solver) -> str:
    """The widest Dim range on either side of a one-dim guard (what export would need to pass)."""
    if len(v.dims) != 1:
        return (f"the branches give different outputs, so the kernel needs to know how {', '.join(v.dims)} relate: "
                "state the relation as a contract precondition (requires), or make one of the dims static")
    name = v.dims[0]
    cond = v.node
    if cond is None:  # torch's own expression (outside the contract language): no Dim ranges to offer
        return ""
    d = run.case.contract.dim(name)
    sides = []
    for side in (cond, E.negate(cond)):
        lo = solver.extreme([run.case.domain, side], name, lowest=True)
        hi = solver.extreme([run.case.domain, side], name, lowest=False)
        if lo is not None and hi is not None:
            sides.append(f"Dim('{name}', min={lo}, max={hi})")
    if not sides:
        return ""
    return (f"the branches give different output shapes, so the branch is a genuine need; the kernel passes only "
            f"with {name} limited to one side: {' or '.join(sides)} (the contract allows [{d.min}, {d.max}])")
