"""The only z3 user: contract expressions -> z3 over integer dims; implications and models.

Integer semantics are Python's: ``//`` floors and ``%`` takes the divisor's sign, encoded exactly with z3
integer division (Euclidean) by case on the divisor's sign. A z3 ``unknown`` (or timeout) is returned as
such and must become *inconclusive*, never a pass.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import z3

from ..errors import InternalError
from . import expr as E
from .normal import normal


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


def to_z3(node: E.Node, variables: dict[str, z3.ArithRef], side: list, ctx: z3.Context | None = None) -> z3.ExprRef:
    """A contract expression in z3 (in ``ctx``, the variables' context); ``side`` collects its side conditions
    (divisors are non-zero)."""
    def t(n: E.Node, sd: list) -> z3.ExprRef:
        return to_z3(n, variables, sd, ctx)

    if isinstance(node, E.Const):
        if isinstance(node.value, bool):
            return z3.BoolVal(node.value, ctx)
        if isinstance(node.value, int):
            return z3.IntVal(node.value, ctx)
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
    if isinstance(node, (E.And, E.Or)):
        parts = [t(a, side) for a in node.args]
        join = z3.And if isinstance(node, E.And) else z3.Or
        return join(*parts, ctx) if ctx is not None else join(*parts)  # the context given: no parts is fine
    if isinstance(node, E.Not):
        return z3.Not(t(node.operand, side))
    if isinstance(node, E.Ite):
        # side conditions of either branch hold only where that branch is taken
        cond = t(node.cond, side)
        then_side: list[z3.BoolRef] = []
        other_side: list[z3.BoolRef] = []
        then, other = t(node.then, then_side), t(node.other, other_side)
        side.extend(z3.Implies(cond, c) for c in then_side)
        side.extend(z3.Implies(z3.Not(cond), c) for c in other_side)
        return z3.If(cond, then, other)
    raise InternalError(f"cannot translate {E.to_text(node)} to z3")


#: The strategies a query tries, cheapest first, all inside one budget of ``timeout_ms`` (``_Session.budget``):
#:
#: 1. ``quick``: the incremental solver (the dims' bounds asserted once) for a short slice: it answers the
#:    common obligations, linear or with floor division by constants (in normal form), in milliseconds;
#: 2. ``fresh``: a new solver given the whole query at once, which z3 preprocesses for its logic (it solves
#:    equalities such as ``Ci == Co * PH * PW`` before anything else: ``Ci % (PH * PW) == 0`` is proved at once
#:    where the incremental solver times out), for a larger slice;
#: 3. ``general``: the incremental solver again with whatever is left.
#:
#: An ``unknown`` from every strategy, or a spent budget, is UNKNOWN: inconclusive, never a pass.
QUICK_SHARE, QUICK_MIN_MS, QUICK_MAX_MS = 50, 100, 1000  # the quick slice: timeout / 50 within [100, 1000] ms
FRESH_SHARE = 5  # the fresh solver's slice: timeout / 5
CHEAP = ("quick", "fresh")
EVERY = ("quick", "fresh", "general")


class _Session:
    """One incremental z3 solver holding the dims' bounds; each query runs inside push/pop.

    Each session has a z3 context of its own. In z3's one global context, the terms that earlier sessions of
    the process made change how the next one searches: the same query on a nonlinear domain (``Ci == Co * PH *
    PW``) took 1.1 s in a fresh process and 10.1 s (a probe run to its timeout) on the second verify of the same
    contract in one process. A fresh context makes a session's answers and times those of a fresh process."""

    def __init__(self, dims: Iterable[Bounds], timeout_ms: int = 10_000, simplify: Simplifier | None = None):
        self.dims = {d.name: d for d in dims}
        self.simplify = simplify
        self.timeout_ms = timeout_ms
        self.queries = 0
        self._z3: z3.Solver | None = None
        self._memo: dict[E.Node, tuple[z3.ExprRef, tuple]] = {}
        self._deadline: float | None = None  # of the question being answered (``budget``)

    @functools.cached_property
    def ctx(self) -> z3.Context:
        """The session's z3 context, made at its first question: about 11 ms each, and a quarter of an audit's
        sessions (an op whose trace has no guard to decide) never ask one."""
        return z3.Context()

    @functools.cached_property
    def vars(self) -> dict[str, z3.ArithRef]:
        return {name: z3.Int(name, ctx=self.ctx) for name in self.dims}

    def _bounds(self) -> list[z3.BoolRef]:
        return [z3.And(self.vars[d.name] >= d.lo, self.vars[d.name] <= d.hi) for d in self.dims.values()]

    def _base(self) -> z3.Solver:
        if self._z3 is None:
            self._z3 = z3.Solver(ctx=self.ctx)
            self._z3.add(*self._bounds())
        return self._z3

    @contextlib.contextmanager
    def budget(self) -> Iterator[None]:
        """One question (a query with its retries, an implication, one side of a decision): every z3 check
        inside shares ``timeout_ms``. A budget inside a budget is the outer one."""
        if self._deadline is not None:
            yield
            return
        self._deadline = time.monotonic() + self.timeout_ms / 1000
        try:
            yield
        finally:
            self._deadline = None

    def _left_ms(self) -> int:
        if self._deadline is None:
            return self.timeout_ms
        return int((self._deadline - time.monotonic()) * 1000)

    def _check(self, s: z3.Solver, slice_ms: int | None = None) -> tuple[z3.CheckSatResult, str]:
        """One z3 check within the budget (and ``slice_ms``, when given): the result, and z3's reason when
        it is unknown ("timeout" when the budget is spent before it starts)."""
        left = self._left_ms()
        if left <= 0:
            return z3.unknown, "timeout"
        s.set("timeout", max(1, min(left, slice_ms) if slice_ms is not None else left))
        self.queries += 1
        r = s.check()
        return r, (str(s.reason_unknown()) if r == z3.unknown else "")

    def formula(self, node: E.Node) -> tuple[z3.ExprRef, tuple]:
        """A node in z3, with its side conditions (divisors are non-zero), memoised."""
        hit = self._memo.get(node)
        if hit is None:
            # z3 gets the normal form (one term for every spelling of a size); the side conditions come from
            # the expression as written, so a division the normal form cancels still needs its divisor non-zero
            side: list = []
            to_z3(node, self.vars, side, self.ctx)
            hit = (to_z3(normal(node), self.vars, [], self.ctx), tuple(side))
            self._memo[node] = hit
        return hit

    @contextlib.contextmanager
    def _scope(self, conds: Iterable[E.Node], ways: tuple[str, ...] = EVERY) -> Iterator[_Answer]:
        """The incremental solver with conds asserted inside a push/pop, and the first answer to them, from
        the strategies ``ways`` tried in order (module docstring) within one budget."""
        with self.budget():
            s = self._base()
            s.push()
            try:
                assertions = []
                for c in conds:
                    f, side = self.formula(c)
                    assertions += [*side, f]
                s.add(*assertions)
                yield self._answer(s, assertions, ways)
            finally:
                s.pop()

    def _answer(self, s: z3.Solver, assertions: list, ways: tuple[str, ...]) -> _Answer:
        if any(z3.is_false(a) for a in assertions):  # a condition whose normal form is false: no z3 needed
            return _Answer(s, z3.unsat, None, "normal form")
        reason = "timeout"
        for way in ways:
            if way == "fresh":
                solver = z3.Solver(ctx=self.ctx)
                solver.add(*self._bounds(), *assertions)
                slice_ms: int | None = self.timeout_ms // FRESH_SHARE
            else:
                solver = s
                quick = min(QUICK_MAX_MS, max(QUICK_MIN_MS, self.timeout_ms // QUICK_SHARE))
                slice_ms = quick if way == "quick" else None
            r, reason = self._check(solver, slice_ms)
            if r != z3.unknown:
                model = self._model(solver.model()) if r == z3.sat else None
                return _Answer(s, r, model, way)
        return _Answer(s, z3.unknown, None, "", reason)

    def _model(self, m: z3.ModelRef) -> dict[str, int]:
        return {name: m.eval(var, model_completion=True).as_long() for name, var in self.vars.items()}

    def _descend(self, s: z3.Solver, name: str, model: dict[str, int], lowest: bool) -> dict[str, int] | None:
        """Within the solver's current assertions, a model with dim ``name`` at its least (greatest) value, by
        bisection between the dim's bound and ``model`` (a model of those assertions). None on unknown."""
        var, bound = self.vars[name], (self.dims[name].lo if lowest else self.dims[name].hi)
        # the bound itself first: most dims of most counterexamples sit at it; then away from it in growing steps
        # (1, 2, 4, ...), since the optimum mostly lies a few values off the bound while z3's first model may sit
        # anywhere up to 2**31: a bisection from there took about 31 probes a dim
        lo, hi = (bound, model[name]) if lowest else (model[name], bound)
        probe, step = bound, 1
        while lo < hi:
            s.push()
            try:
                s.add(var <= probe if lowest else var >= probe)
                self.queries += 1
                s.set("timeout", self.timeout_ms)  # each probe its own: only the least model depends on them
                r = s.check()
                if r == z3.unknown:
                    return None
                if r == z3.sat:
                    model = self._model(s.model())
                lo, hi = _narrow(lo, hi, probe, model[name], r == z3.sat, lowest)
                galloping = step and r == z3.unsat
            finally:
                s.pop()
            step = step * 2 if galloping else 0
            middle = (lo + hi) // 2 if lowest else (lo + hi + 1) // 2
            # still galloping: the next probe step values past the last refuted one, while short of the middle
            ahead = (lo - 1 + step) if lowest else (hi + 1 - step)
            probe = ahead if step and (ahead < middle if lowest else ahead > middle) else middle
            if probe == middle:
                step = 0
        return model


def _narrow(lo: int, hi: int, probe: int, found: int, sat: bool, lowest: bool) -> tuple[int, int]:
    """One bisection step: a model at ``found`` (sat) or none beyond ``probe`` (unsat)."""
    if lowest:
        return (lo, found) if sat else (probe + 1, hi)
    return (found, hi) if sat else (lo, probe - 1)


@dataclass(frozen=True)
class _Answer:
    """A query's answer: the incremental solver holding it (for a descent), z3's result, a model with sat,
    the strategy that answered, z3's reason with unknown."""

    solver: z3.Solver
    result: z3.CheckSatResult
    model: dict[str, int] | None
    way: str = ""
    reason: str = ""


class Solver(_Session):
    """Proves facts over a set of integer dims, each with inclusive bounds."""

    def satisfiable(self, conds: Iterable[E.Node]) -> SatResult:
        """Is the conjunction satisfiable within the bounds? With SAT, a model."""
        return self._satisfiable(list(conds), EVERY)

    def _satisfiable(self, conds: list[E.Node], ways: tuple[str, ...]) -> SatResult:
        with self._scope(conds, ways) as a:
            if a.result == z3.sat:
                return SatResult(Sat.SAT, a.model)
            if a.result == z3.unsat:
                return SatResult(Sat.UNSAT)
            return SatResult(Sat.UNKNOWN, reason=a.reason)

    def small_model(self, conds: Iterable[E.Node]) -> dict[str, int] | None:
        """The lexicographically least model of conds (dims in declared order): readable counterexamples.

        Any model is a real assignment; minimising only picks a nicer one. The least model is unique, so the
        same query gives the same counterexample whatever was solved before it (z3's own models depend on
        its history). A plain solver descends one dim at a time; z3's Optimize engine was tried first and
        stalled for seconds on some of these queries, at random. None when z3 finds no model.
        """
        with self._scope(conds) as a:
            if a.result != z3.sat or a.model is None:
                return None
            model = a.model
            for name, var in self.vars.items():
                found = self._descend(a.solver, name, model, lowest=True)
                if found is None:  # z3 gave up: a real model, though not the least
                    return model
                model = found
                a.solver.add(var == model[name])
            return model

    def extreme(self, conds: Iterable[E.Node], name: str, lowest: bool) -> int | None:
        """The least (or greatest) value of a dim under conds; None if z3 cannot say."""
        with self._scope(conds) as a:
            if a.result != z3.sat or a.model is None:
                return None
            found = self._descend(a.solver, name, a.model, lowest)
            return None if found is None else found[name]

    def implies(self, premises: Iterable[E.Node], conclusion: E.Node) -> Result:
        """PROVED if premises => conclusion on the bounded dims; REFUTED with a counterexample model."""
        if normal(conclusion) == E.TRUE:  # in every spelling, not only when both sides are written alike
            return Result(Outcome.PROVED)
        r = self._question(list(premises), conclusion, negated=True)
        outcome = {Sat.SAT: Outcome.REFUTED, Sat.UNSAT: Outcome.PROVED, Sat.UNKNOWN: Outcome.UNKNOWN}[r.sat]
        return Result(outcome, r.model, r.reason)

    def decide(self, premises: list[E.Node], cond: E.Node) -> tuple[Decision, SatResult, SatResult]:
        """Whether the premises decide cond, with the query for each side (its model, or z3's reason)."""
        pos = self._question(premises, cond, negated=False)
        neg = self._question(premises, cond, negated=True)
        if Sat.UNKNOWN in (pos.sat, neg.sat):
            return Decision.UNKNOWN, pos, neg
        if pos.sat is Sat.SAT and neg.sat is Sat.SAT:
            return Decision.BOTH, pos, neg
        if pos.sat is Sat.SAT:
            return Decision.TRUE, pos, neg
        if neg.sat is Sat.SAT:
            return Decision.FALSE, pos, neg
        return Decision.EMPTY, pos, neg

    def _question(self, premises: list[E.Node], cond: E.Node, negated: bool) -> SatResult:
        """``premises and cond`` (``not cond`` when negated) within one budget, the cheap ways first: z3's
        cheap strategies on the query (on the claim with the premises' definitions substituted instead, when
        it names a defined dim: Ci == Co * PH * PW makes Ci % (PH * PW) == 0 true), then on the claim also
        simplified by sympy (nonlinear facts z3 alone leaves unknown), and last z3's general strategy on the
        query with whatever time is left."""
        query = [*premises, E.negate(cond) if negated else cond]
        if normal(query[-1]) == E.FALSE:  # settled by the normal form alone (the module docstring of normal.py)
            return SatResult(Sat.UNSAT)
        with self.budget():
            r = _again(self, premises, cond, negated, CHEAP, full=False) or self._satisfiable(query, CHEAP)
            if r.sat is Sat.UNKNOWN:
                r = _again(self, premises, cond, negated, CHEAP) or r
            if r.sat is Sat.UNKNOWN:
                r = self._satisfiable(query, ("general",))
        return r


def _again(solver: Solver, premises: list[E.Node], cond: E.Node, negated: bool, ways: tuple[str, ...],
           full: bool = True) -> SatResult | None:
    """The query ``premises and cond`` (``not cond`` when negated) with cond simplified by the premises'
    definitions (the solver's ``simplify``); None when simplification changes nothing, the solver has none or
    the question's budget is spent. The premises stay, so a model is a model of the original query; z3 may
    still say unknown."""
    if solver.simplify is None or solver._left_ms() <= 0:
        return None
    alt = solver.simplify(premises, cond, full)
    if alt is None:
        return None
    r = solver._satisfiable([*premises, E.negate(alt) if negated else alt], ways)
    if r.sat is Sat.SAT and r.model is not None:  # a model must show the original claim's side there
        try:  # (its divisors non-zero)
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
        self._small: dict[tuple[str, ...], dict[str, int] | None] = {}
        self._extreme: dict[tuple, int] = {}
        if self.simplify is not None:  # sympy on the claim: asked for both sides of every decision, and again
            raw = self.simplify  # by every case whose premises repeat (a dtype sibling): a pure function, cached
            memo: dict[tuple, E.Node | None] = {}

            def simplify(premises: list[E.Node], claim: E.Node, full: bool = True) -> E.Node | None:
                key = (full, claim, *premises)
                if key not in memo:
                    memo[key] = raw(premises, claim, full)
                return memo[key]

            self.simplify = simplify

    def _satisfiable(self, conds, ways):
        key = tuple(conds)
        hit = self._cache.get(key)
        if hit is None:
            hit = super()._satisfiable(conds, ways)
            if hit.sat is not Sat.UNKNOWN or "general" in ways:  # a cheap strategy's unknown is not the last word
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

    def extreme(self, conds, name, lowest):
        # export's Dim ranges ask each case for every dim's least and greatest value over its domain, and the
        # domain repeats across cases that differ in dtype, mask or flags: a bisection each time cost the
        # SDPA-MPS contract 1440 descents (27 s). The optimum is a fact of the query, so it is cached; z3's
        # unknown (None) is not, since another try may finish.
        conds = list(conds)
        key = (name, lowest, *conds)
        if key in self._extreme:
            return self._extreme[key]
        found = super().extreme(conds, name, lowest)
        if found is not None:
            self._extreme[key] = found
        return found


def kept(solver: Solver, conds: list[E.Node], wanted: Sequence[E.Node]) -> list[E.Node]:
    """``conds`` with every one of ``wanted`` where they are satisfiable together (one query), else each one that is
    with those kept before it: as much of ``wanted`` as the domain allows (export's examples apart from each other,
    the other side's points with as many dims at 2 or more as possible)."""
    if not wanted:
        return conds
    if solver.satisfiable(conds + list(wanted)).sat is Sat.SAT:
        return conds + list(wanted)
    for w in wanted:
        if solver.satisfiable(conds + [w]).sat is Sat.SAT:
            conds = conds + [w]
    return conds


def restrict(model: Mapping[str, int] | None, names: Iterable[str]) -> dict[str, int]:
    """A model limited to the given dim names, in their order."""
    if model is None:
        return {}
    return {n: model[n] for n in names if n in model}
