"""The sides of a drafted case: ``contract draft`` traces the sample case, and where the kernel branches on its
sizes (a guard the sample sizes decide, or a ``guard_or_false``/``guard_or_true`` torch answered and went on, as
torch's broadcasting asks ``A1 == 1``), it traces the other side too. Each side that finishes is a leaf with
the conditions that lead to it; the case's paths are its leaves (``when`` the conditions), so that a draft of a
broadcasting op (``add``: ``(B0, A1)`` where ``A0 == 1``) verifies on its own kernel as written. A side where the
kernel raises is what the op demands: the other side goes to ``requires``. A side past the trace budget stays a
``# TODO`` on the path that was followed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..logic import expr as E
from ..logic.solver import Sat
from ..rules import RuleCode
from .draft_outputs import Traced, finish, is_dim_equality, ordered

#: symbolic traces one drafted case may take beyond the first (each side of a branch costs one)
SIDE_TRACES = 64
#: sides with different outputs a draft writes as paths of their own; with more, the sample's side alone (a
#: draft of 29 paths over guessed ranks is no starting point for a person)
MAX_SIDES = 6


@dataclass
class Leaf:
    """A finished side: the branch conditions that lead to it (the path's ``when``), and what its trace gave."""

    conds: list[E.Node]
    traced: Traced
    assumptions: list[E.Node] = field(default_factory=list)  # what its trace assumed (conds and requires)


@dataclass
class _Raised:
    """A side where the kernel raised (``error`` at ``at``)."""

    error: str
    at: str


@dataclass
class Sides:
    """One case's exploration: its leaves (the sample side first), the requires and TODOs of the whole case."""

    leaves: list[Leaf] = field(default_factory=list)
    requires: list[tuple[str, str]] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)


class Explorer:
    """Explores one case's sides with at most ``SIDE_TRACES`` traces beyond the first."""

    def __init__(self, kernel: Any, case: Any, contract: Any, point: dict[str, int], flat: bool = False) -> None:
        self.kernel, self.case, self.contract, self.flat = kernel, case, contract, flat
        self.point = point
        self.left = SIDE_TRACES + 1
        self.out = Sides()
        self.untraced: dict[str, None] = {}  # guard_or_* answers whose other side the budget left untraced

    def where(self, loc: Any) -> str:
        from .._torch import core as C

        own = loc is not None and (loc.file in self.kernel.located_in or loc.file.startswith(C.TORCH_DIR))
        return f" at {loc.short}" if own else ""

    def require(self, node: E.Node, conds: list[E.Node], why: str) -> None:
        """``node`` demanded where ``conds`` hold (everywhere: no conds)."""
        full = node if not conds else E.disj([E.negate(E.conj(list(conds))), node])
        text = ordered(full, self.contract)
        if text not in {r for r, _ in self.out.requires}:
            self.out.requires.append((text, why))

    def _trace(self, assumptions: list[E.Node]) -> Any:
        from ..trace.run import trace_case

        self.left -= 1
        return trace_case(self.kernel, self.case, assumptions)

    def walk(self, assumptions: list[E.Node], conds: list[E.Node], point: dict[str, int]) -> list[Leaf] | _Raised | None:
        """The leaves under ``assumptions`` (``conds``: the branch sides among them), the kernel's raise where it
        raises before any branch, or None where the side could not be traced to the end (a TODO says why)."""
        from .._torch import core as C
        from ..trace.run import Failed, Finished, Guarded

        assumptions = list(assumptions)
        for _ in range(8):
            if self.left <= 0:
                self.out.todos.append("the outputs: more sides than the draft traces")
                return None
            try:
                t = self._trace(assumptions)
            except C.AssumptionRejected as why:  # torch finds the sides assumed so far empty
                self.out.todos.append(f"the outputs: torch refuses the region assumed for the sample case ({why})")
                return None
            if isinstance(t, Finished):
                return self.split(assumptions, conds, t, frozenset())
            if isinstance(t, Failed):
                return _Raised(t.error.splitlines()[0][:120], self.where(t.loc))
            assert isinstance(t, Guarded)
            if t.guard is None or t.is_specialization:
                self.out.todos.append(f"the outputs: the kernel needs the value of {t.guard_raw}{self.where(t.loc)}")
                return None
            if is_dim_equality(t.guard):
                self.require(t.guard, conds, f"the kernel guards on these being equal{self.where(t.loc)}; the sample "
                             "run took them equal")
                assumptions.append(t.guard)
                continue
            holds = bool(E.evaluate(t.guard, point))
            side = t.guard if holds else E.negate(t.guard)
            if _never(self.contract, assumptions, E.negate(side)):  # always true, but torch could not prove it
                self.out.todos.append(
                    f"the kernel asks {E.to_text(side)}{self.where(t.loc)}, which holds at every size in the ranges "
                    f"above (z3 proves it) but torch cannot prove: no [[paths]] for the other side; shapecheck "
                    f"verify reports it as {RuleCode.GUARD_TORCH_CANNOT_DISCHARGE} where torch.export refuses it (a "
                    "fix in the kernel: a condition torch can decide)")
                assumptions.append(side)
                continue
            return self.branch(assumptions, conds, point, t, side)
        self.out.todos.append("the outputs: more than 8 guards on the sample case")
        return None

    def branch(self, assumptions: list[E.Node], conds: list[E.Node], point: dict[str, int], t: Any,
               side: E.Node) -> list[Leaf] | _Raised | None:
        """Both sides of a guard: the sample's first. A side that raises makes the other one a requires."""
        other = E.negate(side)
        todo = (f"the kernel branches on {E.to_text(t.guard)}{self.where(t.loc)}: the path below follows "
                f"{E.to_text(side)} (the sample sizes); give the other side its own [[paths]] (or fix the branch: "
                f"shapecheck verify reports it as {RuleCode.GUARD_ON_DYNAMIC_DIM})")
        first = self.walk([*assumptions, side], [*conds, side], point)
        if isinstance(first, _Raised):  # the sample's side is the kernel's check: the other side is demanded
            self.require(other, conds, f"the kernel raises {first.error}{first.at} otherwise")
            moved = dict(point, **_fixed_by(other))  # the sample sizes move with it: later sides follow
            return self.walk([*assumptions, other], conds, moved)
        if first is None:
            return None
        if self.left <= 0 or self.flat:
            self.out.todos.append(todo)
            return first
        second = self.walk([*assumptions, other], [*conds, other], point)
        if isinstance(second, _Raised):
            self.require(side, conds, f"the kernel raises {second.error}{second.at} otherwise")
            return [Leaf([c for c in leaf.conds if c != side], leaf.traced, leaf.assumptions) for leaf in first]
        if second is None:
            self.out.todos.append(todo)
            return first
        self.out.todos.append(f"the kernel branches on {E.to_text(t.guard)}{self.where(t.loc)}: both sides are "
                              f"traced below, but the branch itself is what shapecheck verify reports as "
                              f"{RuleCode.GUARD_ON_DYNAMIC_DIM} (torch.export refuses a dynamic dim there); fix the "
                              "branch, or make the dim static")
        return first + second

    def split(self, assumptions: list[E.Node], conds: list[E.Node], t: Any, done: frozenset,
              seen: dict | None = None) -> list[Leaf]:
        """A finished trace's leaves: where a guard_or_* answer's other side returns other outputs, that side is
        a leaf of its own; where it raises, the answer is a requires (select's ``index < A0``). Each answer's
        other side is traced once per trace (``seen``, shared by the trace's sub-sides: a trace of the other
        side of one answer under fewer assumptions holds where the sub-side's conditions do, unless it answered
        one of them the other way, when it is traced again); at most eight answers per trace."""
        from .._torch import core as C
        from ..trace.run import Failed, Finished, Guarded

        seen = {} if seen is None else seen
        for fb in [f for f in t.fallbacks if f.guard is not None and not f.data_dependent][:8]:
            if fb.guard in done:
                continue
            assumed = fb.guard if fb.value else E.negate(fb.guard)
            if fb.guard not in seen:
                if self.left <= 0:
                    self.untraced.setdefault(E.to_text(assumed), None)
                    continue
                try:
                    seen[fb.guard] = self._trace([*assumptions, E.negate(assumed)])
                except C.AssumptionRejected:  # the other side has no point: nothing to demand
                    seen[fb.guard] = None
            other = seen[fb.guard]
            if self.flat and isinstance(other, (Guarded, Finished)):  # no sides: what the other side returns, said
                if isinstance(other, Finished) and [o.formula for o in other.outputs] != [o.formula for o in t.outputs]:
                    self.untraced.setdefault(E.to_text(assumed), None)
                continue
            if isinstance(other, Guarded):  # the other side branches on a guard of its own: walked as a side
                return self._walked_side(assumptions, conds, t, done | {fb.guard}, seen, assumed)
            if isinstance(other, Failed) and not other.missing_name:
                self.require(assumed, conds, f"the kernel raises {other.error.splitlines()[0][:120]}"
                             f"{self.where(other.loc)} otherwise")
            elif isinstance(other, Finished) and [o.formula for o in other.outputs] != [o.formula for o in t.outputs]:
                gone = done | {fb.guard}
                there = [*assumptions, E.negate(assumed)]
                if _contradicts(other, conds):  # traced under fewer assumptions, it took another side of one
                    other = self._again(there)
                here = self.split([*assumptions, assumed], [*conds, assumed], t, gone, seen)
                if not isinstance(other, Finished):
                    return here
                return here + self.split(there, [*conds, E.negate(assumed)], other, gone)
        traced = Traced()
        finish(traced, t, self.contract, self.where)
        return [Leaf(list(conds), traced, list(assumptions))]

    def _walked_side(self, assumptions: list[E.Node], conds: list[E.Node], t: Any, done: frozenset, seen: dict,
                     assumed: E.Node) -> list[Leaf]:
        """A guard_or_* answer whose other side meets a guard: that side walked (both sides of its guards); where
        it raises before any, the answer is a requires; where it cannot be traced to the end, a TODO."""
        there = self.walk([*assumptions, E.negate(assumed)], [*conds, E.negate(assumed)], self.point)
        here = self.split([*assumptions, assumed], [*conds, assumed], t, done, seen)
        if isinstance(there, _Raised):
            self.require(assumed, conds, f"the kernel raises {there.error}{there.at} otherwise")
            return [Leaf([c for c in leaf.conds if c != assumed], leaf.traced, leaf.assumptions) for leaf in here]
        if there is None:
            self.out.todos.append(f"torch answered {E.to_text(assumed)} and went on; the other side could not be "
                                  f"traced to the end: verify reports it where it returns other outputs "
                                  f"({RuleCode.OUTPUT_SHAPE_MISMATCH})")
            return here
        return here + there

    def one_sided(self, text: str) -> str:
        """A broadcast relation ``a == b or a == 1 or b == 1`` without the side the kernel refuses: expand's
        ``size0 == 1`` where A0 is 2 (a size is expanded, never shrunk). Each side costs a trace; one the trace
        budget leaves untried stays."""
        from .._torch import core as C
        from ..trace.run import Failed

        node = E.parse(text)
        if not (isinstance(node, E.Or) and len(node.args) == 3 and all(isinstance(a, E.Cmp) and a.op == "=="
                                                                        for a in node.args)):
            return text
        equal, *ones = node.args
        if not (isinstance(equal.left, E.Var) and isinstance(equal.right, E.Var)
                and {(o.left, o.right) for o in ones} == {(equal.left, E.Const(1)), (equal.right, E.Const(1))}):
            return text
        kept = [equal]
        for one, other in ((ones[0], ones[1].left), (ones[1], ones[0].left)):
            if self.left <= 0:
                kept.append(one)
                continue
            try:  # this side alone: the one size 1, the other from 2
                t = self._trace([one, E.Cmp(">=", other, E.Const(2))])
            except C.AssumptionRejected:
                kept.append(one)
                continue
            if not (isinstance(t, Failed) and not t.missing_name):
                kept.append(one)
        return ordered(E.disj(kept), self.contract) if len(kept) < 3 else text

    def retrace(self, regions: list[tuple[str, list[E.Node]]]) -> list[Leaf] | None:
        """One trace per side of an earlier case (its ``when`` and assumptions); None where one does not finish."""
        from .._torch import core as C
        from ..trace.run import Finished

        leaves = []
        for when, assumptions in regions:
            try:
                t = self._trace(list(assumptions))
            except C.AssumptionRejected:
                return None
            if not isinstance(t, Finished):
                return None
            traced = Traced()
            finish(traced, t, self.contract, self.where)
            leaves.append(Leaf([E.parse(when)] if when != "True" else [], traced, list(assumptions)))
        return leaves

    def _again(self, assumptions: list[E.Node]) -> Any:
        from .._torch import core as C

        if self.left <= 0:
            return None
        try:
            return self._trace(assumptions)
        except C.AssumptionRejected:
            return None


def _contradicts(t: Any, conds: list[E.Node]) -> bool:
    """Whether the trace answered a guard_or_* the other way than one of ``conds`` states."""
    for fb in t.fallbacks:
        if fb.guard is not None and (fb.guard if not fb.value else E.negate(fb.guard)) in conds:
            return True
    return False


def explore_case(kernel: Any, case: Any, contract: Any, point: dict[str, int], out: Traced,
                 regions: list[tuple[str, list[E.Node]]] | None = None, flat: bool = False) -> bool:
    """The case's sides into ``out``: the sample side's outputs, tables and TODOs are ``out``'s own; with more
    than one leaf, ``out.sides`` holds each (``when``, outputs, tables, TODOs) and ``out.regions`` what each
    side's trace assumed. Whether the sample side finished. ``regions``: an earlier case's sides, each traced
    once here instead (the cases of one draft share their branches; one that does not finish on a side of
    them is unfinished). ``flat``: the sample's side alone, the others said in TODOs (an earlier case had more
    sides than a draft writes)."""
    ex = Explorer(kernel, case, contract, point, flat)
    mine = {d.name for d in case.dims}
    if regions and not all(E.free_names(a) <= mine for _, assumed in regions for a in assumed):
        regions = None  # a side over dims this case lacks (an optional tensor absent): its own sides
    if regions:
        got = ex.retrace(regions)
        if got is None:
            return False
    else:
        got = ex.walk([], [], point)
    if isinstance(got, _Raised):
        ex.out.todos.append(f"the outputs: the kernel raised {got.error}{got.at} on the sample case")
        got = None
    used = SIDE_TRACES + 1 - ex.left
    if used >= 48 and not regions:  # where.self's three-way broadcast: 82 traces here, past verify's 64
        ex.out.todos.append(f"the draft took {used} traces over the kernel's branches on the sizes; verify explores "
                            f"them too, and may need --max-traces 512 where its default stops short ({RuleCode.INCONCLUSIVE}: "
                            "exploration stopped at the trace bound)")
    if ex.untraced and flat:
        ex.out.todos.append(f"torch answered {'; '.join(ex.untraced)} and went on, and the other side returns other "
                            f"outputs: verify reports where ({RuleCode.OUTPUT_SHAPE_MISMATCH})")
    elif ex.untraced:
        ex.out.todos.append(f"torch answered {len(ex.untraced)} more size condition(s) and went on "
                            f"({'; '.join(list(ex.untraced)[:4])}{'; ...' if len(ex.untraced) > 4 else ''}): their "
                            f"other sides were not traced (the draft traces {SIDE_TRACES} sides); verify reports "
                            f"where they return other outputs ({RuleCode.OUTPUT_SHAPE_MISMATCH})")
    leaves = got if regions else _merged(got or [])
    if not regions:
        leaves.sort(key=lambda leaf: not _holds(leaf.conds, point))  # the sample's side first (stable)
    requires = _shared_requires(leaves, contract)
    if not regions and len(leaves) > 1:
        leaves = _one_formula(leaves, contract, [E.parse(r) for r, _ in ex.out.requires + requires])
    if not regions and len(leaves) > MAX_SIDES:
        ex.out.todos.append(f"the kernel's branches on the sizes give {len(leaves)} sides with other outputs (e.g. "
                            f"{'; '.join(f'{_when(leaf.conds, contract)}: {leaf.traced.outputs[0]}' for leaf in leaves[1:3])}): "
                            f"more than a draft writes as paths; the path below is the sample's side, and verify "
                            f"reports where the others differ ({RuleCode.OUTPUT_SHAPE_MISMATCH})")
        leaves = leaves[:1]
        requires = [(r, why) for r, why in requires if not r.startswith("not ")]  # the other sides' own
        out.flat = True  # the cases after it: their sample sides alone
    out.requires.extend(r for r in ex.out.requires + requires if r[0] not in {x for x, _ in out.requires})
    if not regions and not flat:
        narrowed = [(ex.one_sided(r), why) for r, why in out.requires]
        out.requires[:] = [(n, why if n == r else f"{why}; the kernel raises where only the other one is 1")
                           for (n, why), (r, _) in zip(narrowed, out.requires)]
    out.todos.extend(ex.out.todos)
    if not leaves:
        return False
    main = leaves[0].traced
    out.outputs.extend(main.outputs)
    out.tables.extend(main.tables)
    out.todos.extend(main.todos)
    if len(leaves) > 1:
        out.sides = [(_when(leaf.conds, contract), out.outputs if i == 0 else leaf.traced.outputs,
                      out.tables if i == 0 else leaf.traced.tables, [] if i == 0 else leaf.traced.todos)
                     for i, leaf in enumerate(leaves)]
        out.regions = [(side[0], leaf.assumptions) for side, leaf in zip(out.sides, leaves)]
    return True


def _one_formula(leaves: list[Leaf], contract: Any, requires: list[E.Node]) -> list[Leaf]:
    """The sides as one leaf where one formula gives every side's outputs: each size that differs between the
    sides as the ``max`` of its values there (torch's broadcasting: ``max(A0, B0)`` is ``B0`` where ``A0 == 1``
    and ``A0`` where ``B0 == 1`` or the two are equal), kept only where z3 proves it equal to each side's output
    under that side's conditions and the requires. Sides whose tables differ, or a formula not proved: as they
    are."""
    from ..logic.simplify import shown
    from .draft_paths import signature

    first = leaves[0].traced
    if any(signature([], leaf.traced.tables) != signature([], first.tables)
           or len(leaf.traced.outputs) != len(first.outputs) for leaf in leaves):
        return leaves
    unified: list[str | None] = []
    claims: list[list[E.Node]] = [[] for _ in leaves]
    for i, text in enumerate(first.outputs):
        texts = [leaf.traced.outputs[i] for leaf in leaves]
        if text is None or any(t is None for t in texts):
            if any(t is not None for t in texts):
                return leaves
            unified.append(None)
            continue
        shapes = [E.parse(t) for t in texts]
        if not all(isinstance(x, E.TupleE) and len(x.items) == len(shapes[0].items) for x in shapes):
            return leaves
        items = []
        for j in range(len(shapes[0].items)):
            values = list(dict.fromkeys(x.items[j] for x in shapes))
            if len(values) > 1:
                values = [v for v in values if v != E.Const(1)] or [E.Const(1)]
            items.append(values[0] if len(values) == 1 else E.Call("max", tuple(values)))
        candidate = E.TupleE(tuple(items))
        for k, x in enumerate(shapes):
            claims[k] += [E.compare("==", a, b) for a, b in zip(x.items, candidate.items) if a != b]
        unified.append(shown(candidate))
    solver = _ranges_solver(contract)
    for leaf, claim in zip(leaves, claims):
        if claim and solver.satisfiable([*requires, *leaf.conds, E.negate(E.conj(claim))]).sat is not Sat.UNSAT:
            return leaves
    traced = Traced(outputs=unified, tables=list(first.tables),
                    todos=[t for leaf in leaves for t in leaf.traced.todos])
    traced.todos = list(dict.fromkeys(traced.todos))
    return [Leaf([], traced, [])]


def _holds(conds: list[E.Node], point: dict[str, int]) -> bool:
    try:
        return all(bool(E.evaluate(c, point)) for c in conds)
    except Exception:  # noqa: BLE001 - a condition the sample point cannot evaluate: not the sample's side
        return False


def _when(conds: list[E.Node], contract: Any) -> str:
    return " and ".join(ordered(c, contract) for c in conds) if conds else "True"


def _merged(leaves: list[Leaf]) -> list[Leaf]:
    """Leaves with the same outputs as one (their conditions joined by ``or``), in first-seen order."""
    from .draft_paths import signature

    out: dict[str, Leaf] = {}
    for leaf in leaves:
        key = signature(leaf.traced.outputs, leaf.traced.tables)
        if key in out:
            have = out[key]
            have.conds = [E.disj([E.conj(have.conds) if have.conds else E.TRUE,
                                  E.conj(leaf.conds) if leaf.conds else E.TRUE])]
            have.traced.requires += [r for r in leaf.traced.requires if r not in have.traced.requires]
        else:
            out[key] = leaf
    return list(out.values())


def _shared_requires(leaves: list[Leaf], contract: Any) -> list[tuple[str, str]]:
    """Each leaf's requires: as it is where every other leaf states it too or implies it (z3: its conditions and
    its own requires; where.self's ``B0 == C0 or ...`` follows from ``A0 == B0 or ...`` and ``A0 == C0 or ...``
    where ``A0 != 1``), else only where the leaf's conditions hold (``not (A1 == 1) or ...``)."""

    if len(leaves) < 2:
        return list(leaves[0].traced.requires) if leaves else []
    solver = _ranges_solver(contract)
    demands = {id(leaf): [E.parse(r) for r, _ in leaf.traced.requires] for leaf in leaves}
    out: list[tuple[str, str]] = []
    for leaf in leaves:
        for text, why in leaf.traced.requires:
            node = E.parse(text)
            if leaf.conds and solver.satisfiable([*leaf.conds, E.negate(node)]).sat is Sat.UNSAT:
                continue  # the side's own conditions say it (``A0 == 1`` where A0 == 1)
            everywhere = all(text in {r for r, _ in other.traced.requires}
                             or solver.satisfiable([*other.conds, *demands[id(other)], E.negate(node)]).sat is Sat.UNSAT
                             for other in leaves if other is not leaf)
            full = text if everywhere else ordered(E.disj([E.negate(E.conj(leaf.conds)), node]), contract)
            if full not in {r for r, _ in out}:
                out.append((full, why))
    return out


def _never(contract: Any, assumptions: list[E.Node], cond: E.Node) -> bool:
    """Whether z3 proves ``cond`` false at every size of the draft's ranges under ``assumptions`` (a branch's side
    that no input takes, as max_pool's ``2 * ((A1 - 1) // 2) >= A1``). Unknown, or a name the ranges lack: no."""

    conds = [*assumptions, cond]
    if not set().union(*(E.free_names(c) for c in conds)) <= set(contract.dim_names):
        return False
    return _ranges_solver(contract).satisfiable(conds).sat is Sat.UNSAT


def _ranges_solver(contract: Any) -> Any:
    """A solver over the draft's dim ranges (short questions: 2 s each)."""
    from ..logic.solver import Bounds, Solver

    return Solver([Bounds(d.name, d.min, d.max) for d in contract.dims], timeout_ms=2000)


def _fixed_by(node: E.Node) -> dict[str, int]:
    """``{B3: 2}`` for ``B3 == 2`` (either way round); {} for anything else."""
    if isinstance(node, E.Cmp) and node.op == "==":
        for a, b in ((node.left, node.right), (node.right, node.left)):
            if isinstance(a, E.Var) and isinstance(b, E.Const) and isinstance(b.value, int):
                return {a.name: b.value}
    return {}


#: traces ``scope_requires`` may take in all (a walk of a case's sides where a requires fails costs a few)
SCOPE_TRACES = 24


def scope_requires(kernel: Any, contract: Any, cases: list[Any], out: Traced, own: dict[str, set[str]],
                   point: dict[str, int]) -> None:
    """The sample case's requires, each only where the cases need it: a case traced to the end without a requires
    (``own``: each such case's own, by id) has its sides walked again where it fails; one whose kernel returns
    there (its own asserts allow a point of it) does not need it, and the requires is scoped to the cases that do
    (max_pool2d_with_indices' ``A1 // 2 >= 1``, asserted with ``ceil_mode`` false: ``ceil_mode or A1 // 2 >= 1``,
    since with it true the kernel returns at A1 = 1). A case not traced to the end, or past the budget, keeps it."""
    from .draft_paths import scoped

    if len(cases) < 2 or not out.requires:
        return
    dims, solver, left = set(contract.dim_names), _ranges_solver(contract), SCOPE_TRACES
    parsed = {text: E.parse(text) for text, _ in out.requires}
    plain = [n for n in parsed.values() if E.free_names(n) <= dims]
    scoped_out = []
    for text, why in out.requires:
        node, needed = parsed[text], []
        for case in cases:
            mine = own.get(case.id)
            if case is cases[0] or mine is None or text in mine or left <= 0 \
                    or not E.free_names(node) <= {d.name for d in case.dims}:  # a dim the case lacks: kept
                needed.append(True)
                continue
            rest = [n for n in plain if n is not node]
            at = solver.small_model([E.negate(node), *rest])
            if at is None:
                needed.append(True)
                continue
            ex = Explorer(kernel, case, contract, {**point, **{k: v for k, v in at.items() if k in point}})
            ex.left = min(left, 8)
            got = ex.walk([E.negate(node)], [], ex.point)
            left -= min(left, 8) - max(ex.left, 0)
            facts = [E.parse(r) for r, _ in ex.out.requires]
            needed.append(not isinstance(got, list) or not any(
                solver.satisfiable([E.negate(node), *rest, *facts, *leaf.conds,
                                    *(E.parse(r) for r, _ in leaf.traced.requires)]).sat is Sat.SAT
                for leaf in got if all(E.free_names(n) <= dims for n in facts + leaf.conds)))
        if all(needed):
            scoped_out.append((text, why))
        else:
            scoped_out.append((scoped(text, needed, cases), f"{why}; only in these cases: with the other choices the "
                               "kernel returns where it fails"))
    out.requires = scoped_out
