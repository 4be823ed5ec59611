"""``contract draft``'s output formulas against the eager kernel on every path of the draft, at points that
``ref check`` draws (each dim at the edges of its domain and drawn alone), not only the sample case at equal
sizes: there a broadcast (``max(A0, B0)``) or another case's path (embedding_bag's ``include_last_offset``) cannot
show. A formula the eager kernel contradicts at a point it accepts is not copied: a TODO says what it gave
(issue 22: a draft never copies a formula the eager kernel contradicts). The eager kernel runs in the audit's
worker process, so a kernel that crashes on a drawn point costs that point."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..logic import expr as E
from .draft_outputs import Traced

POINTS = 6  # drawn points per path


def eager_paths(name: str, contract: Any, inputs_at: Callable[[Mapping[str, Any]], Any], traced: Traced) -> bool:
    """Check every path's formulas of ``contract`` (the draft, loaded) at points of its own; ``inputs_at(values)``
    gives the op's call for a case's choice values (dims named as in the draft). Whether a formula was dropped or
    a TODO added."""
    from ..runtime.refcheck import points_for_path
    from .eager import worker

    solver = _solver(contract)
    dropped = False
    for p in contract.paths:
        outputs, tables, todos = _slots(traced, p.id)
        if outputs is None:
            continue
        refused = False
        for case, bound, sizes in points_for_path(contract, p.era, p.id, POINTS, 0, solver):
            res = worker().call(name, inputs_at(case.values), dict(sizes))
            if not res.ok:  # says nothing of a formula; inside the domain, of a requires the fake lacks
                if not refused and not res.crashed:
                    refused = dropped = True  # the text is written again with the TODO
                    at = ", ".join(f"{k}={v}" for k, v in sizes.items())
                    todos.append(f"the eager kernel refuses {at} (case {case.id}), inside the domain: "
                                 f"{res.error[:200]}: a requires the fake does not ask for (or values the "
                                 "drafted arguments cannot have); `shapecheck ref check` reports each such point")
                continue
            items = list(res.value[1]) if res.value[0] == "L" else [res.value]
            for i, node in enumerate(bound.outputs):
                if node is None or i >= len(outputs) or outputs[i] is None or i >= len(items) or items[i][0] != "T":
                    continue
                try:
                    want = E.evaluate(node, sizes)
                except Exception:  # noqa: BLE001, S112 - a formula of data-dependent sizes: not compared
                    continue
                have = tuple(items[i][1])
                if isinstance(want, tuple) and tuple(want) != have:
                    at = ", ".join(f"{k}={v}" for k, v in sizes.items())
                    todos.append(f"the eager kernel gives {list(have)} for output {i} at {at} (case {case.id}), where "
                                 f"the fake's formula {outputs[i]} gives {list(want)}: the formula is not copied")
                    outputs[i] = None
                    if i < len(tables):
                        tables[i] = None
                    dropped = True
    return dropped


CASES = 32  # cases whose sample call is tried


def refused_cases(name: str, contract: Any, inputs_at: Callable[[Mapping[str, Any]], Any], traced: Traced) -> bool:
    """Each case's call (up to ``CASES``) at the least point of its domain with every dim at 2 or more, against
    the eager kernel: the cases it refuses there (conv1d's ``has_bias = true`` with the fake's rank-2 bias, an
    option the CPU kernel lacks) are one TODO, since their paths check a call the op never takes. Whether one
    was added."""
    from ..logic.solver import restrict
    from .eager import worker

    solver = _solver(contract)
    refused: list[tuple[str, str]] = []
    cases = list(contract.cases())
    for case in cases[:CASES]:
        floor = [E.Cmp(">=", E.Var(d.name), E.Const(max(2, d.min))) for d in case.dims]
        model = solver.small_model([case.domain, *floor]) or solver.small_model([case.domain])
        if model is None:
            continue
        res = worker().call(name, inputs_at(case.values), restrict(model, [d.name for d in contract.dims]))
        if not res.ok and not res.crashed:
            refused.append((case.id, res.error[:160]))
    if not refused or len(refused) == min(len(cases), CASES):
        return False  # none, or all (the sample itself: the draft's head says what the search found)
    shown = "; ".join(f"{cid}: {err}" for cid, err in refused[:3])
    traced.todos.append(f"the eager kernel refuses the call of {len(refused)} of {min(len(cases), CASES)} cases at "
                        f"their least sizes ({shown}{'; ...' if len(refused) > 3 else ''}): a choice value or an "
                        "argument's rank or dtype the op does not take there; narrow the choices or fix the argument")
    return True


def prune_paths(contract: Any, traced: Traced) -> bool:
    """Drop the draft's paths that no case can take (their ``when`` and the case's domain unsatisfiable, z3 says:
    glu's ``A1 // 2 > A1``, sides of a guard the trace could not rule out); the last one left is the draft's
    only path. Whether any was dropped."""
    from ..logic.solver import Sat

    if len(traced.paths) < 2:
        return False
    solver = _solver(contract)
    cases = list(contract.cases())
    keep = []
    for k, path in enumerate(traced.paths, 1):
        mine = [(c, p) for c in cases for p in c.paths if p.id == f"sample_{k}"]
        if not mine or any(solver.satisfiable([c.domain, p.when]).sat is not Sat.UNSAT for c, p in mine):
            keep.append(path)
    if len(keep) == len(traced.paths) or not keep:
        return False
    traced.paths = keep
    if len(keep) == 1:  # one path: written from the trace's own lists, under `when = "True"`
        traced.outputs, traced.tables = keep[0].outputs, keep[0].tables
        traced.todos = list(dict.fromkeys([*traced.todos, *keep[0].todos]))
    return True


def prune_requires(contract: Any, traced: Traced) -> bool:
    """Drop each requires over dims alone that the others left imply (z3 proves it on the dims' ranges), the
    longest first: glu's guards on both sides of ``A1 // 2 <= A1`` are all implied by ``A1 % 2 == 0``. A requires
    z3 cannot settle stays. Whether any was dropped."""
    from ..logic.solver import Outcome

    dims = {d.name for d in contract.dims}
    parsed = []
    for text, _ in traced.requires:
        try:
            parsed.append(E.parse(text))
        except Exception:  # noqa: BLE001 - a requires this shapecheck cannot read: kept, as written
            parsed.append(None)
    solver = _solver(contract)
    kept = list(range(len(parsed)))
    # the longest first, the later first among equals: where two say the same, the shorter and earlier stays
    # (channel_shuffle's ``A1 % groups == 0``, its own check, not the reshape's ``A0 * A1 == A0 * groups * (A1 //
    # groups)`` after it: hunt 39)
    for i in sorted(kept, key=lambda j: (-len(traced.requires[j][0]), -j)):
        node = parsed[i]
        if node is None or not E.free_names(node) <= dims:
            continue
        others = [parsed[j] for j in kept if j != i and parsed[j] is not None and E.free_names(parsed[j]) <= dims]
        if others and solver.implies(others, node).outcome == Outcome.PROVED:
            kept.remove(i)
    if len(kept) == len(parsed):
        return False
    traced.requires = [traced.requires[j] for j in kept]
    return True


def _solver(contract: Any) -> Any:
    """A solver over the draft's dims, each in its range."""
    from ..logic.solver import Bounds, Solver

    return Solver([Bounds(d.name, d.min, d.max) for d in contract.dims])


def _slots(traced: Traced, path_id: str) -> tuple[Any, Any, Any]:
    """The lists a draft path's text is written from: ``sample`` is the trace's own outputs, ``sample_K`` its
    K-th path's."""
    if path_id == "sample":
        return traced.outputs, traced.tables, traced.todos
    k = path_id.removeprefix("sample_")
    if k.isdigit() and 1 <= int(k) <= len(traced.paths):
        path = traced.paths[int(k) - 1]
        return path.outputs, path.tables, path.todos
    return None, None, None
