"""Hypothesis strategies built from a contract: a case, then dims that satisfy its domain (and a path's ``when``).

``cases(contract)`` draws ``Example``s (a case plus concrete dims and a seed for tensor values);
``inputs(contract)`` draws ``Inputs`` (an example with its argument tensors made). Hard constraints are met
by construction or with z3's help, never by rejection: a drawn target point is repaired by the conditions'
simple atoms, else completed by z3 keeping as many drawn values as it can. Every point is checked with
``expr.evaluate`` before it is emitted.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from . import expr as E
from .contract import BoundCase, BoundPath, Contract, case_id
from .errors import ExprError, InternalError
from .solver import Bounds, Sat, Solver

DEFAULT_MAX_ELEMENTS = 2**18
"""Default bound on the elements of every tensor an example implies (1 MiB of float32)."""

DEFAULT_MAX_SIDE = 64
"""Default bound on each dim, raised per dim to just above the largest constant it is compared with."""

_SMALL = 16  # the "small values" branch draws from [min, min + _SMALL - 1]


@dataclass(frozen=True)
class SizeBound:
    """How large generated examples may be.

    - ``max_elements``: every tensor the example implies has at most this many elements: the case's tensor
      arguments and every shape its paths state (``outputs`` and ``runtime_outputs``, which the runtime
      allocates). Meta tensors carry no data, so shape-only uses can raise it far.
    - ``max_side``: each dim is at most ``max(max_side, c + 1)`` for the largest constant ``c`` it is compared
      with in the domain or a ``when`` (so ``S >= 4096`` lets S reach 4097), and within its declared range.
    """

    max_elements: int = DEFAULT_MAX_ELEMENTS
    max_side: int = DEFAULT_MAX_SIDE

    def __post_init__(self) -> None:
        for name in ("max_elements", "max_side"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InvalidArgument(f"{name}={value!r}: expected a positive integer")


@dataclass(frozen=True, eq=False)
class Example:
    """One concrete argument set: a case (dtypes, masks, flags) and a value for each of its dims.

    Tensors are made on demand (``arguments``); their values come from ``seed``.
    """

    case: BoundCase
    dims: tuple[tuple[str, int], ...]
    seed: int = 0
    aim: str | None = None  # the path ("id@era") the generator steered towards; informative only

    @property
    def values(self) -> dict[str, int]:
        return dict(self.dims)

    @property
    def case_id(self) -> str:
        return self.case.id

    def shape(self, arg: str) -> tuple[int, ...] | None:
        """The concrete shape of a tensor argument (None when absent in this case)."""
        return self._shapes.get(arg)

    @functools.cached_property
    def _shapes(self) -> dict[str, tuple[int, ...]]:
        values = self.values
        return {a.name: compiled(a.shape)(values) for a in self.case.args
                if a.present and a.kind == "tensor" and a.shape is not None}

    def text(self) -> str:
        """``case;dims;seed=N``: what ``parse_example`` and ``shapecheck fuzz op --example`` read back."""
        dims = ",".join(f"{k}={v}" for k, v in self.dims)
        return f"{self.case.id};{dims};seed={self.seed}"

    def arguments(self, device: str | None = "cpu") -> dict[str, Any]:
        """Every argument of the contract by name, in order: tensors, None for absent ones, scalars as the
        case fixes them. Tensors: ``"cpu"``, values drawn from ``seed``; another device (``"meta"``), empty;
        None, ``torch.empty`` on the default device (fake tensors under a FakeTensorMode)."""
        return make_arguments(self, device)

    def __repr__(self) -> str:
        return f"Example({self.text()!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # Hypothesis pretty-prints dataclasses field by field (the whole contract); print the short form.
        printer.text(repr(self))


@dataclass(frozen=True, eq=False)
class Inputs:
    """An example with its arguments made on the cpu (what ``inputs`` draws)."""

    example: Example
    arguments: Mapping[str, Any]

    def __repr__(self) -> str:
        return f"Inputs({self.example.text()!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


# ---------------------------------------------------------------------------------------------------------
# Public strategies


def cases(contract: Contract, *, path: str | None = None, era: str | None = None,
          max_elements: int = DEFAULT_MAX_ELEMENTS, max_side: int = DEFAULT_MAX_SIDE,
          constants: Iterable[int | str] = (), case_filter: Callable[[BoundCase], bool] | None = None,
          timings: dict[str, float] | None = None) -> st.SearchStrategy[Example]:
    """Examples of ``contract``: a case, then dims inside its domain (and ``path``'s ``when`` if given).

    - ``path``: ``"id"`` or ``"id@era"``; only cases where that path is reachable within the bound are drawn.
    - ``era``: only the paths of this era are aimed at and harvested for constants.
    - ``max_elements``, ``max_side``: the size bound (see ``SizeBound``).
    - ``constants``: more interesting values: integers (for every dim) or guard texts such as ``"L <= 8"``
      (their constants, for the dims they name), e.g. the guards ``verify`` reported.
    - ``case_filter``: draw only cases for which this returns true.
    - ``timings``: if given, ``timings["generation"]`` accumulates the seconds spent drawing.
    """
    plan = Plan(contract, SizeBound(max_elements, max_side), path=path, era=era, constants=constants,
                case_filter=case_filter)
    return _examples(plan, timings)


def inputs(contract: Contract, path: str | None = None, **kwargs: Any) -> st.SearchStrategy[Inputs]:
    """Concrete argument sets of ``contract`` (cpu tensors with sizes, dtypes, masks, flags); see ``cases``."""
    return cases(contract, path=path, **kwargs).map(lambda ex: Inputs(ex, ex.arguments("cpu")))


def parse_example(contract: Contract, text: str, *, max_elements: int | None = None) -> Example:
    """Read ``case;dims[;seed=N]`` (``Example.text``) back; ValueError naming what is wrong.

    The case part may list only some choices if it names a single case. The dims must be inside the
    contract's domain (and within ``max_elements`` if given).
    """
    parts = [p.strip() for p in text.split(";")]
    if len(parts) not in (2, 3):
        raise ValueError(f"expected 'CASE;DIMS[;seed=N]', found {text!r}")
    want = _pairs(parts[0], "case")
    matches = [c for c in contract.cases()
               if all(_fmt(c.values.get(k)) == v for k, v in want.items()) and set(want) <= set(c.values)]
    if len(matches) != 1:
        names = ", ".join(n for n, _ in contract.choices)
        what = "no case" if not matches else f"{len(matches)} cases"
        raise ValueError(f"{parts[0]!r} matches {what} (choices: {names})")
    case = matches[0]
    dims: dict[str, int] = {}
    for k, v in _pairs(parts[1], "dims").items():
        try:
            dims[k] = int(v)
        except ValueError:
            raise ValueError(f"dim {k}={v!r} is not an integer") from None
    seed = 0
    if len(parts) == 3:
        key, _, value = parts[2].partition("=")
        if key.strip() != "seed" or not value.strip().isdigit():
            raise ValueError(f"expected 'seed=N', found {parts[2]!r}")
        seed = int(value)
    needed = _relevant_dims(case, case.paths)
    missing = [d for d in needed if d not in dims]
    extra = [d for d in dims if d not in needed]
    if missing or extra:
        raise ValueError(f"case {case.id} needs dims {', '.join(needed)}"
                         + (f"; missing {', '.join(missing)}" if missing else "")
                         + (f"; unknown {', '.join(extra)}" if extra else ""))
    for d in needed:
        dim = contract.dim(d)
        if not dim.min <= dims[d] <= dim.max:
            raise ValueError(f"{d}={dims[d]} is outside its range [{dim.min}, {dim.max}]")
    if not holds(case.domain, dims):
        raise ValueError(f"{parts[1]} is outside the domain of case {case.id}: {E.to_text(case.domain)}")
    ex = Example(case, tuple((d, dims[d]) for d in needed), seed)
    if max_elements is not None and largest_tensor(ex) > max_elements:
        raise ValueError(f"a tensor of this example has {largest_tensor(ex)} elements > {max_elements}")
    return ex


def example_at(case: BoundCase, dims: Mapping[str, int], seed: int = 0) -> Example | None:
    """The example of ``case`` at ``dims`` (e.g. a verify counterexample), or None if outside the domain."""
    needed = _relevant_dims(case, case.paths)
    if any(d not in dims for d in needed):
        return None
    point = {d: int(dims[d]) for d in needed}
    if not all(case.contract.dim(d).min <= v <= case.contract.dim(d).max for d, v in point.items()):
        return None
    if not holds(case.domain, point):
        return None
    return Example(case, tuple(point.items()), seed)


def holds(node: E.Node, values: Mapping[str, int]) -> bool:
    """The contract's own predicate at a point; False where it is undefined (a division by zero)."""
    try:
        return E.evaluate(node, values) is True
    except ExprError:
        return False


def largest_tensor(ex: Example) -> int:
    """Elements of the largest tensor the example implies (arguments and every path's stated shapes)."""
    out = 0
    values = ex.values
    for shape in _implied_shapes(ex.case, ex.case.paths):
        try:
            value = compiled(shape)(values)
        except ZeroDivisionError:
            continue
        n = 1
        for x in value:
            n *= max(int(x), 0)
        out = max(out, n)
    return out


# ---------------------------------------------------------------------------------------------------------
# Making arguments


def make_arguments(ex: Example, device: str | None = "cpu") -> dict[str, Any]:
    """``Example.arguments``: float tensors are randn, bool masks mostly True, integers in [-8, 8]."""
    import torch

    from ._compat import DTYPES

    gen = torch.Generator().manual_seed(ex.seed)
    out: dict[str, Any] = {}
    for a in ex.case.args:
        if not a.present or a.kind == "none":
            out[a.name] = None
        elif a.kind == "tensor":
            shape = ex.shape(a.name)
            dtype = DTYPES[a.dtype]
            if device is None:
                out[a.name] = torch.empty(shape, dtype=dtype)
            elif device != "cpu":
                out[a.name] = torch.empty(shape, dtype=dtype, device=device)
            elif dtype.is_floating_point:
                out[a.name] = torch.randn(shape, generator=gen).to(dtype)
            elif dtype == torch.bool:
                # mostly True, so that fully masked rows occur but do not dominate
                out[a.name] = torch.rand(shape, generator=gen) < 0.75
            else:
                out[a.name] = torch.randint(-8, 9, shape, generator=gen).to(dtype)
        elif a.expr is not None:
            from .trace import concrete_size

            out[a.name] = concrete_size(a, ex.values)
        else:
            out[a.name] = a.value
    return out


# ---------------------------------------------------------------------------------------------------------
# The plan: per contract and bound, what to draw and how to complete it


@dataclass
class _CasePlan:
    case: BoundCase
    dims: tuple[str, ...]
    preferred: dict[str, tuple[int, ...]]
    numel: tuple[E.Node, ...]  # "product of a shape <= max_elements"
    aims: tuple[BoundPath, ...]  # paths that may be aimed at
    draws: dict[str, st.SearchStrategy] = field(default_factory=dict)  # per dim: the target value
    aim_draw: st.SearchStrategy | None = None
    order_draw: st.SearchStrategy | None = None
    base: dict[str | None, dict[str, int] | None] = field(default_factory=dict)  # aim -> a model, or None
    atoms: dict[str | None, tuple[tuple, ...]] = field(default_factory=dict)  # aim -> repair rules
    sizes: tuple[tuple[E.Node, tuple[str, ...]], ...] = ()  # (numel condition, the dims it multiplies)


class Plan:
    """Everything ``cases`` needs for one contract and bound; z3 results are cached per query."""

    def __init__(self, contract: Contract, bound: SizeBound, *, path: str | None = None, era: str | None = None,
                 constants: Iterable[int | str] = (), case_filter: Callable[[BoundCase], bool] | None = None):
        self.contract = contract
        self.bound = bound
        if era is not None and era not in contract.eras:
            raise InvalidArgument(f"era={era!r}: the contract {contract.file} has eras {', '.join(contract.eras)}")
        self.era = era
        self.path = _resolve_path(contract, path, era)
        self.extra_all, self.extra_by_dim = _extra_constants(contract, constants)
        all_cases = [c for c in contract.cases() if case_filter is None or case_filter(c)]
        if not all_cases:
            raise InvalidArgument("case_filter excludes every case of the contract")
        self.case_list = all_cases
        self._plans: dict[int, _CasePlan] = {}
        consts = self._constants_by_dim(all_cases)
        # consts holds c - 1, c, c + 1 for each constant c: the cap is just above the largest c
        self.caps = {d.name: max(d.min, min(d.max, max([bound.max_side, *consts.get(d.name, ())])))
                     for d in contract.dims}
        self.lows = {d.name: d.min for d in contract.dims}
        self.solver = Solver([Bounds(d.name, d.min, self.caps[d.name]) for d in contract.dims], timeout_ms=2000)
        self.case_draw = st.integers(0, len(all_cases) - 1)
        self.seed_draw = st.integers(0, 2**32 - 1)
        self._sat: dict[tuple, dict[str, int] | None] = {}
        self._least: dict[tuple, int | None] = {}
        self._done: dict[tuple, tuple[tuple[str, int], ...] | None] = {}
        self._infeasible: set[int] = set()
        self.z3_queries = 0

    # -- per-case information ------------------------------------------------------------------------
    def _paths(self, case: BoundCase) -> tuple[BoundPath, ...]:
        return tuple(p for p in case.paths if self.era is None or p.era == self.era)

    def _constants_by_dim(self, cases: list[BoundCase]) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for case in cases:
            for node in (case.domain, *(p.when for p in self._paths(case))):
                for name, values in _harvest(node).items():
                    out.setdefault(name, set()).update(values)
        for name, values in self.extra_by_dim.items():
            out.setdefault(name, set()).update(values)
        return out

    def case_plan(self, index: int) -> _CasePlan:
        hit = self._plans.get(index)
        if hit is not None:
            return hit
        case = self.case_list[index]
        paths = self._paths(case)
        dims = _relevant_dims(case, paths)
        consts: dict[str, set[int]] = {}
        for node in (case.domain, *(p.when for p in paths)):
            for name, values in _harvest(node).items():
                consts.setdefault(name, set()).update(values)
        preferred = {}
        for d in dims:
            lo, hi = self.lows[d], self.caps[d]
            cand = {lo, lo + 1, 1, 2, hi} | consts.get(d, set()) | self.extra_by_dim.get(d, set()) | self.extra_all
            preferred[d] = tuple(sorted(v for v in cand if lo <= v <= hi))
        numel = []
        for shape in _implied_shapes(case, paths):
            prod: E.Node = E.Const(1)
            for item in shape.items:
                prod = E.arith("*", prod, item)
            if isinstance(prod, E.Const):
                continue
            cond = E.Cmp("<=", prod, E.Const(self.bound.max_elements))
            if cond not in numel:
                numel.append(cond)
        aims = tuple(p for p in paths if p.when != E.FALSE and (self.path is None or (p.id, p.era) == self.path))
        cp = _CasePlan(case, dims, preferred, tuple(numel), aims)
        cp.sizes = tuple((c, tuple(sorted(E.free_names(c)))) for c in numel)
        for d in dims:
            lo, hi = self.lows[d], self.caps[d]
            # one_of shrinks towards its first branch, sampled_from towards its first (smallest) value
            cp.draws[d] = st.one_of(st.sampled_from(preferred[d]), st.integers(lo, min(hi, lo + _SMALL - 1)),
                                    st.integers(lo, hi))
        cp.aim_draw = st.sampled_from((None, *aims))
        cp.order_draw = st.permutations(dims)
        self._plans[index] = cp
        return cp

    def conditions(self, cp: _CasePlan, aim: BoundPath | None) -> list[E.Node]:
        return [cp.case.domain, *([aim.when] if aim is not None else []), *cp.numel]

    def _fits(self, cp: _CasePlan, aim: BoundPath | None, point: Mapping[str, int]) -> bool:
        """Fast check (compiled expressions) of bounds, domain, ``when`` and size bound."""
        for d in cp.dims:
            if not self.lows[d] <= point[d] <= self.caps[d]:
                return False
        return all(fast_holds(c, point) for c in self.conditions(cp, aim))

    def _valid(self, cp: _CasePlan, aim: BoundPath | None, point: Mapping[str, int]) -> bool:
        """The contract's own predicate (``expr.evaluate``): domain and the aim's ``when``."""
        return holds(cp.case.domain, point) and (aim is None or holds(aim.when, point))

    # -- completing a drawn target -------------------------------------------------------------------------
    def _model(self, cp: _CasePlan, aim: BoundPath | None, fixed: tuple[tuple[str, int], ...]) -> dict | None:
        key = (cp.case.id, _aim_key(aim), fixed)
        if key not in self._sat:
            extra = [E.Cmp("==", E.Var(d), E.Const(v)) for d, v in fixed]
            self.z3_queries += 1
            r = self.solver.satisfiable(self.conditions(cp, aim) + extra)
            self._sat[key] = r.model if r.sat is Sat.SAT else None
        return self._sat[key]

    def base(self, cp: _CasePlan, aim: BoundPath | None) -> dict[str, int] | None:
        """Some model of the case (and aim) within the bound, or None when there is none (or z3 gave up)."""
        k = _aim_key(aim)
        if k not in cp.base:
            cp.base[k] = self._model(cp, aim, ())
        return cp.base[k]

    def complete(self, cp: _CasePlan, aim: BoundPath | None, target: Mapping[str, int],
                 order: tuple[str, ...]) -> tuple[tuple[str, int], ...] | None:
        """A point of the case (and aim) close to the drawn target; None when the aim is out of reach.

        First the target is repaired by the simple atoms of the conditions (``L <= 8``, ``E == Ev``,
        ``E in (64, 96)``; dims earlier in ``order`` win). If it still fails, z3 keeps as many of its values
        as it can, greedily in ``order``, and the others take their least feasible values (``_settle``).
        Results are cached per query.
        """
        key = (cp.case.id, _aim_key(aim), tuple(target[d] for d in cp.dims), order)
        if key in self._done:
            return self._done[key]
        point = self._repair(cp, aim, dict(target), order)
        if not self._fits(cp, aim, point):
            fixed: tuple[tuple[str, int], ...] = ()
            model = None
            for d in order:
                trial = (*fixed, (d, point[d]))
                m = self._model(cp, aim, trial)
                if m is not None:
                    fixed, model = trial, m
            if model is None and self.base(cp, aim) is None:
                self._done[key] = None
                return None
            point = self._settle(cp, aim, fixed, order)
        if not (self._fits(cp, aim, point) and self._valid(cp, aim, point)):
            raise InternalError(f"generated point {point} of case {cp.case.id} fails the contract's own predicate")
        result = tuple((d, point[d]) for d in cp.dims)
        if len(self._done) > 200_000:
            self._done.clear()
        self._done[key] = result
        return result

    def _settle(self, cp: _CasePlan, aim: BoundPath | None, fixed: tuple[tuple[str, int], ...],
                order: tuple[str, ...]) -> dict[str, int]:
        """Fix each dim the greedy pass left free to its least value that keeps the point satisfiable.

        A z3 model's values depend on what the process asked z3 before; sat/unsat answers and optima do not.
        So the point depends on the drawn data alone, and a database or ``--seed`` replay in another process
        gives the same example.
        """
        kept = {d for d, _ in fixed}
        for d in order:
            if d in kept:
                continue
            lo = self.lows[d]
            if self._model(cp, aim, (*fixed, (d, lo))) is not None:
                fixed = (*fixed, (d, lo))
                continue
            key = (cp.case.id, _aim_key(aim), fixed, d)
            if key not in self._least:
                extra = [E.Cmp("==", E.Var(n), E.Const(v)) for n, v in fixed]
                self.z3_queries += 1
                self._least[key] = self.solver.extreme(self.conditions(cp, aim) + extra, d, lowest=True)
            least = self._least[key]
            if least is None or self._model(cp, aim, (*fixed, (d, least))) is None:
                model = self._model(cp, aim, fixed)  # z3 gave up on the optimum: any model will do
                if model is None:
                    raise InternalError(f"z3 lost the model of case {cp.case.id} under {fixed}")
                least = model[d]
            fixed = (*fixed, (d, least))
        return dict(fixed)

    def _repair(self, cp: _CasePlan, aim: BoundPath | None, point: dict[str, int],
                order: tuple[str, ...]) -> dict[str, int]:
        k = _aim_key(aim)
        if k not in cp.atoms:
            cp.atoms[k] = tuple(_atoms(E.conj([cp.case.domain, *([aim.when] if aim is not None else [])])))
        rank = {d: i for i, d in enumerate(order)}
        for d in _pinned(cp.atoms[k]):
            rank[d] = -1  # decided by a constant: move the other dim of a two-dim rule
        for _ in range(4):
            changed = False
            for cond, factors in cp.sizes:
                changed |= self._shrink(cond, factors, point, rank)
            for atom in cp.atoms[k]:
                changed |= _apply(atom, point, rank)
            if not changed:
                break
        for d in cp.dims:
            point[d] = min(max(point[d], self.lows[d]), self.caps[d])
        return point

    def _shrink(self, cond: E.Node, factors: tuple[str, ...], point: dict[str, int],
                rank: Mapping[str, int]) -> bool:
        """Lower the factors of a product over the size bound, those drawn last first."""
        if fast_holds(cond, point):
            return False
        product = compiled(cond.left)
        for d in sorted(factors, key=lambda x: -rank.get(x, 0)):
            total = product(point)
            if total <= self.bound.max_elements:
                break
            others = max(total // max(point[d], 1), 1)
            point[d] = max(self.lows[d], self.bound.max_elements // others)
        return True

    def feasible_index(self, index: int) -> int:
        """``index`` or the next case (cyclically) that has a point within the bound (for the requested path)."""
        n = len(self.case_list)
        for step in range(n):
            i = (index + step) % n
            if i in self._infeasible:
                continue
            cp = self.case_plan(i)
            if self.path is not None:
                if cp.aims and self.base(cp, cp.aims[0]) is not None:
                    return i
            elif self._fits(cp, None, {d: self.lows[d] for d in cp.dims}) or self.base(cp, None) is not None:
                return i
            self._infeasible.add(i)
        what = f"path {self.path[0]}@{self.path[1]}" if self.path else "the domain"
        raise InvalidArgument(f"no case of {self.contract.file} reaches {what} within max_elements="
                              f"{self.bound.max_elements}, max_side={self.bound.max_side}")


def _examples(plan: Plan, timings: dict[str, float] | None) -> st.SearchStrategy[Example]:
    @st.composite
    def draw_example(draw: Callable) -> Example:
        start = time.perf_counter()
        index = plan.feasible_index(draw(plan.case_draw))
        cp = plan.case_plan(index)
        aim: BoundPath | None = cp.aims[0] if plan.path is not None else draw(cp.aim_draw)
        target = {name: draw(cp.draws[name]) for name in cp.dims}
        order = tuple(draw(cp.order_draw)) if len(cp.dims) > 1 else cp.dims
        seed = draw(plan.seed_draw)
        point = plan.complete(cp, aim, target, order)
        if point is None and aim is not None and plan.path is None:
            aim = None  # the aimed path is unreachable in this case within the bound: the domain alone
            point = plan.complete(cp, aim, target, order)
        if point is None:
            raise InternalError(f"case {cp.case.id} has no point within the bound after a feasibility check")
        if timings is not None:
            timings["generation"] = timings.get("generation", 0.0) + time.perf_counter() - start
        return Example(cp.case, point, seed, None if aim is None else f"{aim.id}@{aim.era}")

    return draw_example()


# ---------------------------------------------------------------------------------------------------------
# Repair: simple atoms of a condition, applied to a point


def _atoms(node: E.Node) -> list[tuple]:
    """Repair rules for a condition's conjuncts: one dim against a constant, two dims, a dim's allowed values,
    divisibility, and disjunctions of those (negations are pushed inwards). Other conjuncts are left to z3."""
    out: list[tuple] = []
    for a in (node.args if isinstance(node, E.And) else (node,)):
        if isinstance(a, E.Not):
            inner = a.operand
            if isinstance(inner, E.Not):
                out += _atoms(inner.operand)
            elif isinstance(inner, E.Cmp):
                out += _atoms(E.negate(inner))
            elif isinstance(inner, E.Or):
                out += _atoms(E.conj([E.negate(x) if isinstance(x, E.Cmp) else E.Not(x) for x in inner.args]))
            elif isinstance(inner, E.And):
                out += _atoms(E.disj([E.negate(x) if isinstance(x, E.Cmp) else E.Not(x) for x in inner.args]))
        elif isinstance(a, E.Cmp):
            a = E.normalize_cmp(a)
            left, right = a.left, a.right
            if isinstance(left, E.Var) and isinstance(right, E.Const) and _is_int(right.value):
                out.append(("const", a.op, left.name, right.value))
            elif isinstance(left, E.Var) and isinstance(right, E.Var):
                out.append(("dims", a.op, left.name, right.name))
            elif (a.op == "==" and right == E.Const(0) and isinstance(left, E.Arith) and left.op == "%"
                  and isinstance(left.left, E.Var) and isinstance(left.right, E.Var)):
                out.append(("mod", left.left.name, left.right.name))
        elif isinstance(a, E.Or):
            same = {x.left for x in a.args if isinstance(x, E.Cmp)}
            if len(same) == 1 and all(isinstance(x, E.Cmp) and x.op == "==" and isinstance(x.left, E.Var)
                                      and isinstance(x.right, E.Const) and _is_int(x.right.value) for x in a.args):
                out.append(("in", a.args[0].left.name, tuple(sorted(x.right.value for x in a.args))))
            else:
                alternatives = tuple(alt for alt in (tuple(_atoms(x)) for x in a.args) if alt)
                if alternatives:
                    out.append(("or", a, alternatives))
    return out


def _pinned(atoms: Iterable[tuple]) -> set[str]:
    """Dims a constant decides (``L <= 8``, ``E in (64, 96)``): two-dim rules move the other dim."""
    return {a[2] for a in atoms if a[0] == "const"} | {a[1] for a in atoms if a[0] == "in"}


_STEP = {"<=": 0, "<": -1, ">=": 0, ">": 1, "==": 0}
_OPS: dict[str, Callable[[int, int], bool]] = {
    "<=": lambda a, b: a <= b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, ">": lambda a, b: a > b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
_FLIP = {"<=": ">=", "<": ">", ">=": "<=", ">": "<", "==": "==", "!=": "!="}


def _apply(atom: tuple, point: dict[str, int], rank: Mapping[str, int]) -> bool:
    """Change dims so that the rule holds; between two dims the one drawn later (higher rank) moves."""
    kind = atom[0]
    if kind == "or":
        _, node, alternatives = atom
        if fast_holds(node, point):
            return False
        for a in alternatives[0]:
            _apply(a, point, rank)
        return True
    if kind == "in":
        _, name, allowed = atom
        if name not in point or point[name] in allowed:
            return False
        point[name] = min(allowed, key=lambda v: (abs(v - point[name]), v))
        return True
    if kind == "mod":
        _, a, b = atom
        if a not in point or b not in point or (point[b] != 0 and point[a] % point[b] == 0):
            return False
        if point[b] == 0:
            point[b] = 1
        elif rank.get(a, 0) < rank.get(b, 0):  # keep a: b becomes the largest divisor of a not above it
            point[b] = max(x for x in range(1, min(point[b], abs(point[a]) or 1) + 1) if point[a] % x == 0)
        else:  # keep b: a becomes the nearest multiple of b
            point[a] = point[b] * max(1, round(point[a] / point[b]))
        return True
    _, op, a, b = atom
    if kind == "const":
        if a not in point or _OPS[op](point[a], b):
            return False
        point[a] = b + 1 if op == "!=" else b + _STEP[op]
        return True
    if a not in point or b not in point or _OPS[op](point[a], point[b]):
        return False
    if rank.get(a, 0) < rank.get(b, 0):  # a has priority: move b
        a, b, op = b, a, _FLIP[op]
    point[a] = point[b] + 1 if op == "!=" else point[b] + _STEP[op]
    return True


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# ---------------------------------------------------------------------------------------------------------
# Fast evaluation: contract expressions compiled to closures (for the search; results are re-checked with
# expr.evaluate before an example is emitted, and a test compares the two)

_COMPILED: dict[int, tuple[E.Node, Callable[[Mapping[str, int]], Any]]] = {}
_ARITH: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "//": lambda a, b: a // b,
    "%": lambda a, b: a % b}


def compiled(node: E.Node) -> Callable[[Mapping[str, int]], Any]:
    """``node`` as a function of the dims' values, with ``expr.evaluate``'s semantics (Python's ``//``/``%``;
    a division by zero raises ZeroDivisionError)."""
    hit = _COMPILED.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    fn = _compile(node)
    if len(_COMPILED) > 100_000:
        _COMPILED.clear()
    _COMPILED[id(node)] = (node, fn)  # the node is kept alive, so its id is not reused
    return fn


def _compile(n: E.Node) -> Callable[[Mapping[str, int]], Any]:
    if isinstance(n, E.Const):
        value = n.value
        return lambda v: value
    if isinstance(n, E.Var):
        name = n.name
        return lambda v: v[name]
    if isinstance(n, E.Arith):
        f, left, right = _ARITH[n.op], _compile(n.left), _compile(n.right)
        return lambda v: f(left(v), right(v))
    if isinstance(n, E.Neg):
        inner = _compile(n.operand)
        return lambda v: -inner(v)
    if isinstance(n, E.Call):
        pick, args = (min if n.fn == "min" else max), [_compile(a) for a in n.args]
        return lambda v: pick(a(v) for a in args)
    if isinstance(n, E.Cmp):
        f, left, right = _OPS[n.op], _compile(n.left), _compile(n.right)
        return lambda v: f(left(v), right(v))
    if isinstance(n, E.And):
        parts = [_compile(a) for a in n.args]
        return lambda v: all(p(v) for p in parts)
    if isinstance(n, E.Or):
        parts = [_compile(a) for a in n.args]
        return lambda v: any(p(v) for p in parts)
    if isinstance(n, E.Not):
        inner = _compile(n.operand)
        return lambda v: not inner(v)
    if isinstance(n, E.Ite):
        cond, then, other = _compile(n.cond), _compile(n.then), _compile(n.other)
        return lambda v: then(v) if cond(v) else other(v)
    if isinstance(n, E.TupleE):
        items = [_compile(i) for i in n.items]
        return lambda v: tuple(i(v) for i in items)
    raise InternalError(f"cannot compile {E.to_text(n)}")


def fast_holds(node: E.Node, values: Mapping[str, int]) -> bool:
    """``holds`` through ``compiled``: False where the predicate is undefined."""
    try:
        return compiled(node)(values) is True
    except ZeroDivisionError:
        return False


# ---------------------------------------------------------------------------------------------------------
# Helpers


def _aim_key(aim: BoundPath | None) -> str | None:
    return None if aim is None else f"{aim.id}@{aim.era}"


def _resolve_path(contract: Contract, path: str | None, era: str | None) -> tuple[str, str] | None:
    if path is None:
        return None
    pid, _, pera = path.partition("@")
    pera = pera or era
    found = [(p.id, p.era) for p in contract.paths if p.id == pid and (pera is None or p.era == pera)]
    if len(found) == 1:
        return found[0]
    known = ", ".join(f"{p.id}@{p.era}" for p in contract.paths)
    if not found:
        raise InvalidArgument(f"path={path!r}: no such path in {contract.file} (paths: {known})")
    raise InvalidArgument(f"path={path!r} is in several eras; write id@era (paths: {known})")


def _relevant_dims(case: BoundCase, paths: Iterable[BoundPath]) -> tuple[str, ...]:
    """The dims an example of this case needs: those of its tensors, its domain and its paths."""
    used = {d.name for d in case.dims} | E.free_names(case.domain)
    for p in paths:
        used |= E.free_names(p.when)
        for o in p.outputs:
            if o is not None:
                used |= E.free_names(o)
    return tuple(d.name for d in case.contract.dims if d.name in used)


def _implied_shapes(case: BoundCase, paths: Iterable[BoundPath]) -> list[E.TupleE]:
    shapes = [a.shape for a in case.args if a.present and a.kind == "tensor" and a.shape is not None]
    for p in paths:
        for o in (*p.outputs, *(s for s, _ in p.runtime_outputs)):
            if isinstance(o, E.TupleE) and o not in shapes:
                shapes.append(o)
    return shapes


def _harvest(node: E.Node) -> dict[str, set[int]]:
    """Interesting values per dim: ``c - 1, c, c + 1`` for each integer constant a comparison puts it with."""
    out: dict[str, set[int]] = {}

    def consts(n: E.Node) -> list[int]:
        if isinstance(n, E.Const):
            v = n.value
            return [v] if isinstance(v, int) and not isinstance(v, bool) else []
        return [c for child in E._children(n) for c in consts(child)]

    def walk(n: E.Node) -> None:
        if isinstance(n, E.Cmp):
            names = E.free_names(n)
            for c in consts(n):
                for name in names:
                    out.setdefault(name, set()).update((c - 1, c, c + 1))
            return
        for child in E._children(n):
            walk(child)

    walk(node)
    return out


def _extra_constants(contract: Contract, constants: Iterable[int | str]) -> tuple[set[int], dict[str, set[int]]]:
    every: set[int] = set()
    by_dim: dict[str, set[int]] = {}
    for c in constants:
        if isinstance(c, int) and not isinstance(c, bool):
            every.add(c)
            continue
        if not isinstance(c, str):
            raise InvalidArgument(f"constants: expected integers or guard texts, found {c!r}")
        try:
            node = E.parse(c)
        except ExprError:
            continue  # not a guard over dims (e.g. an output description): nothing to harvest
        for name, values in _harvest(node).items():
            if name in contract.dim_names:
                by_dim.setdefault(name, set()).update(values)
    return every, by_dim


def _pairs(text: str, what: str) -> dict[str, str]:
    out = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise ValueError(f"{what}: expected name=value, found {item!r}")
        out[k.strip()] = v.strip()
    return out


def _fmt(value: Any) -> str:
    return case_id({"x": value})[2:]
