"""The path map of a meta kernel over a case's domain: finished traces (leaves) -> meta paths with readable
regions, example points, output shapes, overlaps with the contract's paths, and shape-polymorphism breaks.

A meta path is the set of leaves that left the kernel through the same return statement and whose outputs one
formula set gives, each on its own region (``_clusters``); its formulas are shown through ``logic.simplify.shown``. Its region is the union of the leaves' path conditions, simplified with z3.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..edges import JSON
from ..findings import PathId, SourceLoc
from ..logic import expr as E
from ..logic.solver import Outcome, Sat, Solver, restrict
from ..trace.run import OutputKind


@dataclass(frozen=True)
class Overlap:
    path: PathId
    out0_matches: bool | None  # None: the contract leaves output 0 unspecified or z3 gave up
    counterexample: dict[str, int] | None = None


@dataclass(frozen=True)
class MetaPath:
    id: str
    returned_at: SourceLoc | None
    region: str
    example: dict[str, int]
    outputs: tuple[str, ...]
    overlaps: tuple[Overlap, ...]
    traces: int
    outs: tuple = field(default=(), repr=False, compare=False)  # the outputs (unpinned), for breaks
    terms: tuple = field(default=(), repr=False, compare=False)

    def to_json(self) -> dict[str, JSON]:
        return {"id": self.id, "region": self.region, "example": self.example, "outputs": list(self.outputs),
                "returned_at": None if self.returned_at is None else
                {"file": self.returned_at.file, "line": self.returned_at.line},
                "traces": self.traces,
                "overlaps": [{"path": str(o.path), "out0_matches": o.out0_matches, "counterexample": o.counterexample}
                             for o in self.overlaps]}


@dataclass(frozen=True)
class Break:
    """Two meta paths whose formulas for one output disagree at some input: an exported graph traced on one
    path computes the wrong shape on the other, even if each path is right on its own region."""

    a: str
    b: str
    point: dict[str, int]
    a_out0: E.Value  # the output's value on each path at ``point`` (output ``output``, 0 unless said)
    b_out0: E.Value
    output: int = 0

    def to_json(self) -> dict[str, JSON]:
        def v(x):
            return list(x) if isinstance(x, tuple) else x
        return {"paths": [self.a, self.b], "point": self.point, "output": self.output,
                "out0": [v(self.a_out0), v(self.b_out0)]}


@dataclass(frozen=True)
class PathMap:
    case: str
    paths: tuple[MetaPath, ...]
    breaks: tuple[Break, ...]
    covered: bool  # the regions cover the domain
    uncovered_example: dict[str, int] | None
    truncated: bool
    traces: int

    def to_json(self) -> dict[str, JSON]:
        return {"case": self.case, "covered": self.covered, "truncated": self.truncated, "traces": self.traces,
                "uncovered_example": self.uncovered_example, "meta_paths": [p.to_json() for p in self.paths],
                "breaks": [b.to_json() for b in self.breaks]}


def path_map(run, solver: Solver, path_name) -> PathMap:
    """Group a case's leaves into meta paths and describe them (``run`` is a verify.CaseRun)."""
    case = run.case
    dims = case.point_dims
    domain = case.domain
    order = list(case.contract.dim_names)
    paths = []
    for i, (rep, leaves) in enumerate(sorted(_clusters(run.leaves, solver, domain, order),
                                             key=lambda kv: _first_line(kv[1])), 1):
        terms = [list(leaf.pc) for leaf in leaves]
        simple = simplify_dnf(solver, domain, terms)
        region = E.disj([E.conj(t) for t in simple]) if simple else E.FALSE
        example = restrict(solver.small_model([domain, region]), dims)
        shown = [unpin(o, rep.pc, order) for o in rep.trace.outputs]
        outputs = tuple(o.formula for o in shown)
        # an output whose constant two dims are pinned to (``d == 1 and nw == 1``) reads as either dim: no formula to
        # compare with another path's (hunt 47: the wrong one named gave a false "shape-polymorphism break")
        twice = _pinned_twice(rep.pc)
        comparable = [None if o is not None and o.kind is OutputKind.TENSOR and any(
            isinstance(i, E.Const) and i.value in twice for i in o.shape.items) else o for o in shown]
        overlaps = []
        for p in case.paths:
            hit = solver.satisfiable([domain, region, p.when])
            if hit.sat is not Sat.SAT:
                continue
            overlaps.append(_out0_overlap(solver, case, p, leaves, dims, path_name(p)))
        paths.append(MetaPath(f"m{i}", rep.trace.returned_at, E.to_text(region), example, outputs, tuple(overlaps),
                              len(leaves), tuple(comparable), tuple(tuple(t) for t in simple)))
    breaks = _breaks(solver, domain, paths, dims)
    union = E.disj([E.conj(list(t)) for p in paths for t in p.terms]) if paths else E.FALSE
    rest = solver.satisfiable([domain, E.negate(union)])
    covered = rest.sat is Sat.UNSAT
    uncovered = None if covered else restrict(solver.small_model([domain, E.negate(union)]), dims)
    return PathMap(case.id, tuple(paths), tuple(breaks), covered, uncovered, run.truncated, run.traces)


def _clusters(leaves, solver: Solver, domain, order) -> list[tuple]:
    """Leaves -> meta paths: (the leaf whose formulas are shown, the leaves). Leaves share a path when they
    left through the same return statement and one formula set gives every leaf's outputs on that leaf's
    own region (torch writes ``E`` where the region has ``E == Ev``: one path). Two formulas that differ on a
    leaf's region (a ceil branch before one return) are two paths."""
    by_return: dict[tuple | None, list] = {}
    for leaf in leaves:
        r = leaf.trace.returned_at
        by_return.setdefault((r.file, r.line) if r else None, []).append(leaf)
    out: list[tuple] = []
    for group in by_return.values():
        clusters: list[list] = []  # [rep, members]
        for leaf in sorted(group, key=lambda lf: len(lf.pc)):
            for cl in clusters:
                if _explains(solver, domain, cl[0], leaf, order):
                    cl[1].append(leaf)
                    break
                if all(_explains(solver, domain, leaf, m, order) for m in cl[1]):
                    cl[0] = leaf
                    cl[1].append(leaf)
                    break
            else:
                clusters.append([leaf, [leaf]])
        out.extend((rep, members) for rep, members in clusters)
    return out


def _explains(solver: Solver, domain, rep, leaf, order) -> bool:
    """``rep``'s output formulas equal ``leaf``'s on ``leaf``'s region."""
    a, b = rep.trace.outputs, leaf.trace.outputs
    if len(a) != len(b):
        return False
    conds = []
    for x, y in zip(a, b):
        x, y = unpin(x, rep.pc, order), unpin(y, leaf.pc, order)
        if x.kind is not y.kind:
            return False
        if x.formula == y.formula:
            continue
        if x.kind is OutputKind.TENSOR and len(x.shape.items) == len(y.shape.items):
            conds += [E.compare("==", p, q) for p, q in zip(x.shape.items, y.shape.items)]
        elif x.kind is OutputKind.INT:
            conds.append(E.compare("==", x.scalar, y.scalar))
        else:
            return False
    return not conds or solver.implies([domain, *leaf.pc], E.conj(conds)).outcome == Outcome.PROVED


def _first_line(leaves) -> int:
    lines = [lf.trace.returned_at.line for lf in leaves if lf.trace.returned_at]
    return min(lines) if lines else 0


def _out0_overlap(solver: Solver, case, p, leaves, dims, name) -> Overlap:
    want = p.outputs[0] if p.outputs else None
    if want is None:
        return Overlap(name, None)
    for leaf in leaves:
        got = leaf.trace.outputs[0] if leaf.trace.outputs else None
        premises = [case.domain, p.when, *leaf.pc]
        if solver.satisfiable(premises).sat is not Sat.SAT:
            continue
        if got is None or got.kind is not OutputKind.TENSOR or not isinstance(want, E.TupleE):
            return Overlap(name, False, restrict(solver.small_model(premises), dims))
        if len(got.shape.items) != len(want.items):
            return Overlap(name, False, restrict(solver.small_model(premises), dims))
        eq = E.conj([E.compare("==", a, b) for a, b in zip(got.shape.items, want.items)])
        r = solver.implies(premises, eq)
        if r.outcome == Outcome.REFUTED:
            return Overlap(name, False, restrict(solver.small_model(premises + [E.negate(eq)]), dims))
        if r.outcome == Outcome.UNKNOWN:
            return Overlap(name, None)
    return Overlap(name, True)


def _breaks(solver: Solver, domain, paths: list[MetaPath], dims) -> list[Break]:
    """Each pair of meta paths whose formulas differ for some output somewhere in the domain: the first such
    output, with the least point where they differ."""
    out = []
    for i, a in enumerate(paths):
        for b in paths[i + 1:]:
            for j, (x, y) in enumerate(zip(a.outs, b.outs)):
                found = _differ(solver, domain, x, y, dims)
                if found is not None:
                    point, vx, vy = found
                    out.append(Break(a.id, b.id, point, vx, vy, j))
                    break
    return out


def _differ(solver: Solver, domain, x, y, dims) -> tuple | None:
    """(point, x there, y there) where two outputs differ, or None (equal everywhere, or not comparable)."""
    if x is None or y is None or x.kind is not y.kind:
        return None
    if x.kind is OutputKind.TENSOR:
        sx, sy = x.shape, y.shape
        if len(sx.items) != len(sy.items):
            point = restrict(solver.small_model([domain]), dims)
            return point, E.evaluate(sx, point), E.evaluate(sy, point)
        eq = E.conj([E.compare("==", p, q) for p, q in zip(sx.items, sy.items)])
    elif x.kind is OutputKind.INT:
        sx, sy = x.scalar, y.scalar
        eq = E.compare("==", sx, sy)
    else:
        return None
    if solver.implies([domain], eq).outcome != Outcome.REFUTED:
        return None
    point = restrict(solver.small_model([domain, E.negate(eq)]), dims)
    return point, E.evaluate(sx, point), E.evaluate(sy, point)


# ---------------------------------------------------------------------------------------------------------
# Region simplification


def simplify_dnf(solver: Solver, domain: E.Node, terms: list[list[E.Node]], *, budget: int = 400) -> list[list[E.Node]]:
    """Simplify a disjunction of conjunctions of literals under the domain, keeping it equivalent.

    1. drop literals the domain and the term's other literals imply;
    2. widen each term: drop a literal when the wider term still lies inside the whole disjunction;
    3. drop terms another term contains; 4. fold ``x == a or x == b`` into ``x in (a, b)``.
    """
    spent = 0

    def implied(premises, cond) -> bool:
        nonlocal spent
        spent += 1
        return solver.implies(premises, cond).outcome == Outcome.PROVED

    whole = E.disj([E.conj(t) for t in terms])
    out = []
    for term in terms:
        lits = list(dict.fromkeys(term))
        # try to drop pinned values (x == 64) before relations (E == Ev): the relation reads better
        for lit in sorted(lits, key=_drop_first):
            if spent >= budget:
                break
            rest = [x for x in lits if x is not lit]
            if implied([domain, *rest], lit):
                lits = rest
        out.append(lits)
    changed = True
    while changed and spent < budget:
        changed = False
        for idx, lits in enumerate(out):
            for lit in list(lits):
                if spent >= budget:
                    break
                rest = [x for x in lits if x != lit]
                if implied([domain, *rest], whole):
                    out[idx] = lits = rest
                    changed = True
    uniq: list[list[E.Node]] = []
    for lits in sorted(out, key=len):
        if any(set(u) <= set(lits) for u in uniq):
            continue
        uniq.append(lits)
    return _fold_membership(_fold_negated_membership(uniq))


def _drop_first(lit: E.Node) -> int:
    if isinstance(lit, E.Cmp) and isinstance(lit.right, E.Const):
        return 0 if lit.op == "==" else 1
    return 2


def _pinned_twice(pc: list[E.Node]) -> set:
    """The constants that two or more dims are pinned to by the path condition (``E == 1`` and ``N == 1``)."""
    seen: dict = {}
    for lit in pc:
        if isinstance(lit, E.Cmp) and lit.op == "==" and isinstance(lit.left, E.Var) and isinstance(lit.right, E.Const):
            seen.setdefault(lit.right.value, set()).add(lit.left.name)
    return {v for v, names in seen.items() if len(names) > 1}


def unpin(out, pc: list[E.Node], order: list[str]):
    """Show ``E`` rather than ``64`` in an output where the path condition pins ``E == 64``.

    Torch folds a dim whose range is a single value into a constant; on the leaf's region the two
    spellings are equal, and the dim name is what the kernel computed. A value two dims are pinned to stays a
    constant: either dim may be the one computed.
    """
    if out is None or out.kind is not OutputKind.TENSOR:
        return out
    pins: dict[int | bool | str, str] = {}
    for lit in pc:
        if isinstance(lit, E.Cmp) and lit.op == "==" and isinstance(lit.left, E.Var) and isinstance(lit.right, E.Const):
            value, name = lit.right.value, lit.left.name
            if value not in pins or order.index(name) < order.index(pins[value]):
                pins[value] = name
    for value in _pinned_twice(pc):  # two dims pinned to one value: either may be the one computed, so neither
        pins.pop(value, None)
    if not pins:
        return out
    items = tuple(E.Var(pins[i.value]) if isinstance(i, E.Const) and i.value in pins else i for i in out.shape.items)
    return replace(out, shape=E.TupleE(items))


def _fold_membership(terms: list[list[E.Node]]) -> list[list[E.Node]]:
    """Terms equal but for one ``x == c`` literal merge into one term with ``x in (c1, c2, ...)``."""
    merged: dict[tuple, list] = {}
    order: list[tuple] = []
    for lits in terms:
        eqs = [x for x in lits if isinstance(x, E.Cmp) and x.op == "==" and isinstance(x.right, E.Const)]
        key: tuple
        if len(eqs) != 1:
            key = ("keep", id(lits))
            merged[key] = [lits]
            order.append(key)
            continue
        eq = eqs[0]
        key = ("eq", eq.left, frozenset(x for x in lits if x is not eq))
        if key not in merged:
            merged[key] = []
            order.append(key)
        merged[key].append(lits)
    out: list[list[E.Node]] = []
    for key in order:
        group = merged[key]
        if key[0] == "keep" or len(group) == 1:
            out.extend(group)
            continue
        var = key[1]
        consts = [next(x.right for x in g if isinstance(x, E.Cmp) and x.op == "==" and x.left == var
                       and isinstance(x.right, E.Const)) for g in group]
        member = E.Or(tuple(E.Cmp("==", var, c) for c in sorted(consts, key=lambda c: c.value)))
        rest: list[E.Node] = [x for x in group[0] if not (isinstance(x, E.Cmp) and x.op == "==" and x.left == var
                                                          and isinstance(x.right, E.Const))]
        out.append(rest + [member])
    return out


def _fold_negated_membership(terms: list[list[E.Node]]) -> list[list[E.Node]]:
    """Within a term, ``x != a and x != b`` becomes ``x not in (a, b)``."""
    out = []
    for lits in terms:
        by_var: dict[E.Node, list] = {}
        for x in lits:
            if isinstance(x, E.Cmp) and x.op == "!=" and isinstance(x.right, E.Const):
                by_var.setdefault(x.left, []).append(x)
        new: list[E.Node] = []
        done = set()
        for x in lits:
            if isinstance(x, E.Cmp) and x.op == "!=" and isinstance(x.right, E.Const) and len(by_var[x.left]) > 1:
                if x.left in done:
                    continue
                done.add(x.left)
                consts = sorted((y.right for y in by_var[x.left]), key=lambda c: c.value)
                new.append(E.Not(E.Or(tuple(E.Cmp("==", x.left, c) for c in consts))))
            else:
                new.append(x)
        out.append(new)
    return out
