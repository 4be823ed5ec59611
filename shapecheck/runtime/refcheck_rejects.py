"""``ref check`` on the ``[[rejects]]`` regions, with the op's eager kernel as the runtime reference: at points of
each runtime-check region (boundary values first, then random ones; every case of the region, excluded ones
included) the real kernel must raise (else SC014: the contract says the runtime refuses what it runs) and so
must the meta kernel (else SC021, at that point). A raise without the reject's ``message`` is a note.
"""

from __future__ import annotations

import functools
import random
from typing import Any

from ..contract.model import BoundCase, BoundReject, Contract
from ..logic import expr as E
from ..logic.solver import Solver, restrict
from ..rules import RuleCode
from ..search.boundaries import interesting_values
from .ref_crash import Outcome, RefResume, at_point
from .ref_findings import SIDE_CAP, MetaRefuses, PathRun, RefFinding, first_line, meta_outputs
from .reference import RuntimeReference, Unmodelled

ERA = "-"  # a reject region belongs to no era


def check_rejects(contract: Contract, ref: RuntimeReference, examples: int, seed: int,
                  solver: Solver, resume: RefResume | None = None) -> list[PathRun]:
    """One ``PathRun`` (``rejects.<id>``) per runtime-check region of the contract. ``resume`` as for
    ``ref_check``."""
    cases = [*contract.cases(), *contract.excluded_reject_cases()]
    runs = []
    for spec in contract.rejects:
        if spec.kind != "runtime-check":
            continue
        run = PathRun(ERA, f"rejects.{spec.id}")
        runs.append(run)
        holding = [(c, r) for c in cases for r in c.rejects if r.id == spec.id]
        points = _points(holding, examples, random.Random(f"{seed}:rejects:{spec.id}"), solver)
        if not points:
            run.note = "no input lies in the region in any case"
        notes: set[str] = set()
        for k, (case, r, sizes) in enumerate(points):
            found, ran, note = at_point(resume, (ERA, run.path, k), case.id, sizes,
                                        functools.partial(_checked, ref, case, r, sizes, seed * 1_000_003 + k, notes))
            run.findings.extend(found)
            run.points += ran
            notes.update(n for n in note.split("\n") if n)
        run.note = run.note or "; ".join(sorted(notes))
    return runs


def _checked(ref: RuntimeReference, case: BoundCase, r: BoundReject, sizes: dict[str, int], seed: int,
             notes: set[str]) -> Outcome:
    mine: set[str] = set()  # its notes travel with its findings (a new process after a crash skips it)
    return _check(ref, case, r, sizes, seed, mine), True, "\n".join(sorted(mine))


def _points(holding: list[tuple[BoundCase, BoundReject]], examples: int, rng: random.Random,
            solver: Solver) -> list[tuple[BoundCase, BoundReject, dict[str, int]]]:
    """Points of the region, up to ``examples``: up to half of them where one side of its ``or`` holds alone
    (``_alone``, the cases taken in turn), then each case's least point and boundary targets, then random ones."""
    targets: list[tuple[int, list[E.Node]]] = [(i, []) for i in range(len(holding))]
    for i, (case, r) in enumerate(holding):
        values = interesting_values(r.when, {d.name: d for d in case.dims}, SIDE_CAP)
        targets += [(i, [E.Cmp("==", E.Var(n), E.Const(v))]) for n, vs in sorted(values.items()) for v in sorted(vs)]
    rng.shuffle(targets)
    while holding and len(targets) < 4 * examples:
        i = rng.randrange(len(holding))
        d = rng.choice(holding[i][0].dims) if holding[i][0].dims else None
        if d is None:
            break
        targets.append((i, [E.Cmp("==", E.Var(d.name), E.Const(rng.randint(d.min, min(d.max, 64))))]))
    each = [_alone(i, case, r) for i, (case, r) in enumerate(holding)]
    alone = [ts[k] for k in range(max(map(len, each), default=0)) for ts in each if k < len(ts)]
    out, seen = [], set()
    for limit, pool in ((examples // 2, alone), (examples, targets)):
        for i, extra in pool:
            if len(out) >= limit:
                break
            case, r = holding[i]
            caps = [E.Cmp("<=", E.Var(d.name), E.Const(SIDE_CAP)) for d in case.dims]
            model = solver.small_model([r.when, *caps, *extra])
            if model is None:
                continue
            sizes = restrict(model, case.point_dims)
            key = (case.id, tuple(sorted(sizes.items())))
            if E.evaluate(r.when, sizes) is True and key not in seen:
                seen.add(key)
                out.append((case, r, sizes))
    return out


def _alone(i: int, case: BoundCase, r: BoundReject) -> list[tuple[int, list[E.Node]]]:
    """Targets where one side of the region's ``or`` holds and its other sides (and the case's other regions) do
    not, as far as they can not: z3's least point of the whole region minimises every dim, so a side that
    another side's least point always meets is never tried alone (hunt 65: ``H < oh + k or W < ow + k - 1``, one
    too wide on H, passed with every point at W = 1, where the runtime refuses the width)."""
    sides = list(r.when.args) if isinstance(r.when, E.Or) else [r.when]
    others = [E.negate(o.when) for o in case.rejects if o.id != r.id]
    if len(sides) < 2 and not others:
        return []
    out: list[tuple[int, list[E.Node]]] = []
    for j, side in enumerate(sides):
        alone = [side, *(E.negate(x) for k, x in enumerate(sides) if k != j)]
        values = interesting_values(side, {d.name: d for d in case.dims}, SIDE_CAP)
        for conds in ([*alone, *others], alone):
            out += [(i, conds)] + [(i, [*conds, E.Cmp("==", E.Var(n), E.Const(v))])
                                   for n, vs in sorted(values.items()) for v in sorted(vs)]
    return out


def _check(ref: RuntimeReference, case: BoundCase, r: BoundReject, sizes: dict[str, int], seed: int,
           notes: set[str]) -> list[RefFinding]:
    def finding(code: RuleCode, message: str) -> RefFinding:
        return RefFinding(code, ERA, f"rejects.{r.id}", case.id, dict(sizes), message)

    found = []
    args: Any = ref.arguments(case, sizes, seed)
    try:
        ref.run(args, ERA)
        # the meta kernel accepting it too agrees with the runtime: the contract alone is wrong there (hunt 66: an
        # SC021 "where the runtime raises" beside the SC014 that says it runs)
        return [finding(RuleCode.RUNTIME_REJECTS, f"the runtime ({ref.describe(())}) runs an input that [[rejects]] {r.id} "
                                     f"({r.text}) says it refuses: the contract is wrong there")]
    except Unmodelled as err:  # no kernel here that could refuse it: nothing to compare with
        notes.add(f"not run on the runtime: {first_line(err)[:120]}")
        return found
    except ref.rejects as err:
        if r.message and r.message not in str(err):
            notes.add(f"the runtime raises {type(err).__name__}: {first_line(err)[:80]} (not {r.message!r})")
    try:
        meta_outputs(case, sizes)
    except MetaRefuses:
        return found  # the meta kernel refuses it too
    found.append(finding(RuleCode.META_ACCEPTS_REJECTED_INPUT, f"the meta kernel accepts an input of [[rejects]] {r.id} ({r.text}), where the "
                                  f"runtime raises"))
    return found
