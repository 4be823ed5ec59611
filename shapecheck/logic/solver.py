"""The only z3 user: contract expressions -> z3 over integer dims; implications and models.

Integer semantics are Python's: ``//`` floors and ``%`` takes the divisor's sign, encoded exactly with z3
integer division (Euclidean) by case on the divisor's sign. A z3 ``unknown`` (or timeout) is returned as
such and must become *inconclusive*, never a pass.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

import z3

from ..errors import InternalError
from . import expr as E


class Outcome(enum.IntEnum):
    """Ordered like a verdict: aggregating outcomes is ``max``."""

    PROVED = 0
    UNKNOWN = 1
    REFUTED = 2


@dataclass(frozen=True)
class Result:
    """An implication: PROVED, REFUTED (with a counterexample model) or UNKNOWN (with z3's reason)."""

    outcome: Outcome
    model: dict[str, int] | None = None
    reason: str = ""


class Sat(enum.Enum):
    SAT = "sat"  # a model exists
    UNSAT = "unsat"  # the conditions are empty
    UNKNOWN = "unknown"  # z3 gave up: never read as either


@dataclass(frozen=True)
class SatResult:
    sat: Sat
    model: dict[str, int] | None = None  # with SAT
    reason: str = ""  # with UNKNOWN


class Decision(enum.Enum):
    """What premises say of a condition."""

    TRUE = "true"  # it holds wherever the premises do
    FALSE = "false"  # it never holds there
    BOTH = "both"  # each side has a point
    EMPTY = "empty"  # the premises themselves are empty
    UNKNOWN = "unknown"  # z3 could not say


#: ``(premises, claim, full) -> an equivalent claim wherever the premises hold, or None`` (``prove.premises.simplified``):
#: what a solver asks z3 again with when z3 alone says unknown, or first when the claim names a defined dim
Simplifier = Callable[[list[E.Node], E.Node, bool], "E.Node | None"]


@dataclass(frozen=True)
class Bounds:
    name: str
    lo: int
    hi: int


def to_z3(node: E.Node, variables: dict[str, z3.ArithRef], side: list) -> z3.ExprRef:
    """A contract expression in z3; ``side`` collects its side conditions (divisors are non-zero)."""
    def t(n: E.Node, sd: list) -> z3.ExprRef:
        return to_z3(n, variables, sd)

    if isinstance(node, E.Const):
        if isinstance(node.value, bool):
            return z3.BoolVal(node.value)
        if isinstance(node.value, int):
            return z3.IntVal(node.value)
        raise InternalError(f"string constant {node.value!r} reached the solver")
    if isinstance(node, E.Var):
        if node.name not in variables:
            raise InternalError(f"unknown dim {node.name!r} reached the solver")
        return variables[node.name]
    if isinstance(node, E.Arith):
        a, b = t(node.left, side), t(node.right, side)
        if node.op == "+":
            return a + b
        if node.op == "-":
            return a - b
        if node.op == "*":
            return a * b
        side.append(b != 0)
        q = z3.If(b > 0, a / b, (-a) / (-b))
        return q if node.op == "//" else a - b * q
    if isinstance(node, E.Neg):
        return -t(node.operand, side)
    if isinstance(node, E.Call):
        args = [t(a, side) for a in node.args]
        out = args[0]
        for a in args[1:]:
            out = z3.If(a < out, a, out) if node.fn == "min" else z3.If(a > out, a, out)
        return out
    if isinstance(node, E.Cmp):
        a, b = t(node.left, side), t(node.right, side)
        return {"==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b, "<=": lambda: a <= b,
                ">": lambda: a > b, ">=": lambda: a >= b}[node.op]()
    if isinstance(node, E.And):
        return z3.And(*[t(a, side) for a in node.args])
    if isinstance(node, E.Or):
        return z3.Or(*[t(a, side) for a in node.args])
    if isinstance(node, E.Not):
        return z3.Not(t(node.operand, side))
    if isinstance(node, E.Ite):
        # side conditions of either branch hold only where that branch is taken
        cond, then_side, other_side = t(node.cond, side), [], []
        then, other = t(node.then, then_side), t(node.other, other_side)
        side.extend(z3.Implies(cond, c) for c in then_side)
        side.extend(z3.Implies(z3.Not(cond), c) for c in other_side)
        return z3.If(cond, then, other)
    raise InternalError(f"cannot translate {E.to_text(node)} to z3")


class _Session:
    """One incremental z3 solver holding the dims' bounds; each query runs inside push/pop."""

    def __init__(self, dims: Iterable[Bounds], timeout_ms: int = 10_000, simplify: Simplifier | None = None):
        self.dims = {d.name: d for d in dims}
        self.simplify = simplify
        self.vars = {name: z3.Int(name) for name in self.dims}
        self.timeout_ms = timeout_ms
        self.queries = 0
        self._z3: z3.Solver | None = None
        self._memo: dict[E.Node, tuple[z3.ExprRef, tuple]] = {}

    def _base(self) -> z3.Solver:
        if self._z3 is None:
            self._z3 = z3.Solver()
            self._z3.set("timeout", self.timeout_ms)
            self._z3.add(*[z3.And(self.vars[d.name] >= d.lo, self.vars[d.name] <= d.hi) for d in self.dims.values()])
        return self._z3

    def formula(self, node: E.Node) -> tuple[z3.ExprRef, tuple]:
        """A node in z3, with its side conditions (divisors are non-zero), memoised."""
        hit = self._memo.get(node)
        if hit is None:
            side: list = []
            hit = (to_z3(node, self.vars, side), tuple(side))
            self._memo[node] = hit
        return hit

    @contextlib.contextmanager
    def _scope(self, conds: Iterable[E.Node]) -> Iterator[tuple[z3.Solver, z3.CheckSatResult]]:
        """The incremental solver with conds asserted inside a push/pop, and its first check."""
        s = self._base()
        s.push()
        try:
            for c in conds:
                f, side = self.formula(c)
                s.add(*side, f)
            self.queries += 1
            yield s, s.check()
        finally:
            s.pop()

    def _model(self, m: z3.ModelRef) -> dict[str, int]:
        return {name: m.eval(var, model_completion=True).as_long() for name, var in self.vars.items()}

    def _descend(self, s: z3.Solver, name: str, model: dict[str, int], lowest: bool) -> dict[str, int] | None:
        """Within the solver's current assertions, a model with dim ``name`` at its least (greatest) value, by
        bisection between the dim's bound and ``model`` (a model of those assertions). None on unknown."""
        var, bound = self.vars[name], (self.dims[name].lo if lowest else self.dims[name].hi)
        # the bound itself first: most dims of most counterexamples sit at it
        lo, hi = (bound, model[name]) if lowest else (model[name], bound)
        probe = bound
        while lo < hi:
            s.push()
            try:
                s.add(var <= probe if lowest else var >= probe)
                self.queries += 1
                r = s.check()
                if r == z3.unknown:
                    return None
                if r == z3.sat:
                    model = self._model(s.model())
                lo, hi = _narrow(lo, hi, probe, model[name], r == z3.sat, lowest)
            finally:
                s.pop()
            probe = (lo + hi) // 2 if lowest else (lo + hi + 1) // 2
        return model


def _narrow(lo: int, hi: int, probe: int, found: int, sat: bool, lowest: bool) -> tuple[int, int]:
    """One bisection step: a model at ``found`` (sat) or none beyond ``probe`` (unsat)."""
    if lowest:
        return (lo, found) if sat else (probe + 1, hi)
    return (found, hi) if sat else (lo, probe - 1)


class Solver(_Session):
    """Proves facts over a set of integer dims, each with inclusive bounds."""

    def satisfiable(self, conds: Iterable[E.Node]) -> SatResult:
        """Is the conjunction satisfiable within the bounds? With SAT, a model."""
        with self._scope(conds) as (s, r):
            if r == z3.sat:
                return SatResult(Sat.SAT, self._model(s.model()))
            if r == z3.unsat:
                return SatResult(Sat.UNSAT)
            return SatResult(Sat.UNKNOWN, reason=str(s.reason_unknown()))

    def small_model(self, conds: Iterable[E.Node]) -> dict[str, int] | None:
        """The lexicographically least model of conds (dims in declared order): readable counterexamples.

        Any model is a real assignment; minimising only picks a nicer one. The least model is unique, so the
        same query gives the same counterexample whatever was solved before it (z3's own models depend on
        its history). A plain solver descends one dim at a time; z3's Optimize engine was tried first and
        stalled for seconds on some of these queries, at random. None when z3 finds no model.
        """
        with self._scope(conds) as (s, r):
            if r != z3.sat:
                return None
            model = self._model(s.model())
            for name, var in self.vars.items():
                found = self._descend(s, name, model, lowest=True)
                if found is None:  # z3 gave up: a real model, though not the least
                    return model
                model = found
                s.add(var == model[name])
            return model

    def extreme(self, conds: Iterable[E.Node], name: str, lowest: bool) -> int | None:
        """The least (or greatest) value of a dim under conds; None if z3 cannot say."""
        with self._scope(conds) as (s, r):
            if r != z3.sat:
                return None
            found = self._descend(s, name, self._model(s.model()), lowest)
            return None if found is None else found[name]

    def implies(self, premises: Iterable[E.Node], conclusion: E.Node) -> Result:
        """PROVED if premises => conclusion on the bounded dims; REFUTED with a counterexample model."""
        if conclusion == E.TRUE:
            return Result(Outcome.PROVED)
        premises = list(premises)
        # the premises' own definitions substituted first (Ci == Co * PH * PW makes Ci % (PH * PW) == 0 true),
        # sympy's simplification too where z3 still gives up: nonlinear facts z3 alone leaves unknown
        r = _again(self, premises, conclusion, negated=True, full=False) or \
            self.satisfiable([*premises, E.negate(conclusion)])
        if r.sat is Sat.UNKNOWN:
            r = _again(self, premises, conclusion, negated=True) or r
        outcome = {Sat.SAT: Outcome.REFUTED, Sat.UNSAT: Outcome.PROVED, Sat.UNKNOWN: Outcome.UNKNOWN}[r.sat]
        return Result(outcome, r.model, r.reason)

    def decide(self, premises: list[E.Node], cond: E.Node) -> tuple[Decision, SatResult, SatResult]:
        """Whether the premises decide cond, with the query for each side (its model, or z3's reason)."""
        pos = _again(self, premises, cond, negated=False, full=False) or self.satisfiable([*premises, cond])
        if pos.sat is Sat.UNKNOWN:
            pos = _again(self, premises, cond, negated=False) or pos
        neg = _again(self, premises, cond, negated=True, full=False) or self.satisfiable([*premises, E.negate(cond)])
        if neg.sat is Sat.UNKNOWN:
            neg = _again(self, premises, cond, negated=True) or neg
        if Sat.UNKNOWN in (pos.sat, neg.sat):
            return Decision.UNKNOWN, pos, neg
        if pos.sat is Sat.SAT and neg.sat is Sat.SAT:
            return Decision.BOTH, pos, neg
        if pos.sat is Sat.SAT:
            return Decision.TRUE, pos, neg
        if neg.sat is Sat.SAT:
            return Decision.FALSE, pos, neg
        return Decision.EMPTY, pos, neg


def _again(solver: Solver, premises: list[E.Node], cond: E.Node, negated: bool, full: bool = True) -> SatResult | None:
    """The query ``premises and cond`` (``not cond`` when negated) with cond simplified by the premises'
    definitions (the solver's ``simplify``); None when simplification changes nothing or the solver has none.
    The premises stay, so a model is a model of the original query; z3 may still say unknown."""
    if solver.simplify is None:
        return None
    alt = solver.simplify(premises, cond, full)
    if alt is None:
        return None
    r = solver.satisfiable([*premises, E.negate(alt) if negated else alt])
    if r.sat is Sat.SAT:  # a model must show the original claim's side there (its divisors non-zero)
        try:
            if E.evaluate(cond, r.model) is not (not negated):
                return None
        except (E.ExprError, ZeroDivisionError, KeyError):
            return None
    return r


class CachedSolver(Solver):
    """Queries repeat across cases that differ only in choices the shapes ignore (dtype): cache by the
    (structural, hashable) expression trees."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._cache: dict[tuple[E.Node, ...], SatResult] = {}
        self._small: dict[tuple[E.Node, ...], dict[str, int] | None] = {}

    def satisfiable(self, conds):
        conds = list(conds)
        key = tuple(conds)
        hit = self._cache.get(key)
        if hit is None:
            hit = super().satisfiable(conds)
            self._cache[key] = hit
        return hit

    def small_model(self, conds):
        # z3 Optimize costs ~85 ms a query and the same counterexample is minimised once per case: cached,
        # the shipped family's gate makes 14 of these queries instead of 66 (and repeats give equal models).
        conds = list(conds)
        key = ("small_model",) + tuple(E.to_text(c) for c in conds)
        if key not in self._small:
            self._small[key] = super().small_model(conds)
        hit = self._small[key]
        return None if hit is None else dict(hit)


def restrict(model: Mapping[str, int] | None, names: Iterable[str]) -> dict[str, int]:
    """A model limited to the given dim names, in their order."""
    if model is None:
        return {}
    return {n: model[n] for n in names if n in model}
