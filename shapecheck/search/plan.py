"""The Hypothesis plan: per contract and size bound, what to draw for each case and how to complete a drawn
target into a point of the case's domain (and an aimed path's ``when``).

A drawn target is repaired by the conditions' simple atoms (``repair``); if it still fails, z3 keeps as many
drawn values as it can and settles the others (``Completion``). Nothing is rejected.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ..contract.model import BoundCase, BoundPath, Contract
from ..errors import InternalError
from ..logic import expr as E
from ..logic.compiled import fast_holds
from ..logic.solver import Bounds, Sat, Solver
from .boundaries import extra_constants, harvest
from .examples import holds, implied_shapes, relevant_dims
from .repair import atoms, repair

DEFAULT_MAX_ELEMENTS = 2**18
"""Default bound on the elements of every tensor an example implies (1 MiB of float32)."""

DEFAULT_MAX_SIDE = 64
"""Default bound on each dim, raised per dim to just above the largest constant it is compared with."""

_SMALL = 16  # the "small values" branch draws from [min, min + _SMALL - 1]

Point = tuple[tuple[str, int], ...]


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


@dataclass
class CasePlan:
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

    def conditions(self, aim: BoundPath | None) -> list[E.Node]:
        return [self.case.domain, *([aim.when] if aim is not None else []), *self.numel]

    def fits(self, aim: BoundPath | None, point: Mapping[str, int], lows: Mapping[str, int],
             caps: Mapping[str, int]) -> bool:
        """Fast check (compiled expressions) of bounds, domain, ``when`` and size bound."""
        return all(lows[d] <= point[d] <= caps[d] for d in self.dims) \
            and all(fast_holds(c, point) for c in self.conditions(aim))

    def rules(self, aim: BoundPath | None) -> tuple[tuple, ...]:
        """The repair rules of domain /\\ the aim's ``when`` (cached)."""
        k = aim_key(aim)
        if k not in self.atoms:
            self.atoms[k] = tuple(atoms(E.conj([self.case.domain, *([aim.when] if aim is not None else [])])))
        return self.atoms[k]


def build_case_plan(case: BoundCase, paths: tuple[BoundPath, ...], *, lows: Mapping[str, int],
                    caps: Mapping[str, int], extra_by_dim: Mapping[str, set[int]], extra_all: set[int],
                    max_elements: int, path: tuple[str, str] | None) -> CasePlan:
    """What to draw for one case: preferred values per dim, the size conditions, the paths to aim at."""
    dims = relevant_dims(case, paths)
    consts: dict[str, set[int]] = {}
    for node in (case.domain, *(p.when for p in paths)):
        for name, values in harvest(node).items():
            consts.setdefault(name, set()).update(values)
    preferred = {}
    for d in dims:
        lo, hi = lows[d], caps[d]
        cand = {lo, lo + 1, 1, 2, hi} | consts.get(d, set()) | extra_by_dim.get(d, set()) | extra_all
        preferred[d] = tuple(sorted(v for v in cand if lo <= v <= hi))
    numel: list[E.Node] = []
    for shape in implied_shapes(case, paths):
        prod: E.Node = E.Const(1)
        for item in shape.items:
            prod = E.arith("*", prod, item)
        if isinstance(prod, E.Const):
            continue
        cond = E.Cmp("<=", prod, E.Const(max_elements))
        if cond not in numel:
            numel.append(cond)
    aims = tuple(p for p in paths if p.when != E.FALSE and (path is None or (p.id, p.era) == path))
    cp = CasePlan(case, dims, preferred, tuple(numel), aims)
    cp.sizes = tuple((c, tuple(sorted(E.free_names(c)))) for c in numel)
    for d in dims:
        lo, hi = lows[d], caps[d]
        # one_of shrinks towards its first branch, sampled_from towards its first (smallest) value
        cp.draws[d] = st.one_of(st.sampled_from(preferred[d]), st.integers(lo, min(hi, lo + _SMALL - 1)),
                                st.integers(lo, hi))
    cp.aim_draw = st.sampled_from((None, *aims))
    cp.order_draw = st.permutations(dims)
    return cp


class Completion:
    """z3's part of completing a target: models of a case's conditions with some dims fixed, and least values,
    cached per query."""

    def __init__(self, solver: Solver, lows: Mapping[str, int]):
        self.solver = solver
        self.lows = lows
        self._sat: dict[tuple, dict[str, int] | None] = {}
        self._least: dict[tuple, int | None] = {}
        self.queries = 0

    def model(self, cp: CasePlan, aim: BoundPath | None, fixed: Point) -> dict | None:
        key = (cp.case.id, aim_key(aim), fixed)
        if key not in self._sat:
            extra = [E.Cmp("==", E.Var(d), E.Const(v)) for d, v in fixed]
            self.queries += 1
            r = self.solver.satisfiable(cp.conditions(aim) + extra)
            self._sat[key] = r.model if r.sat is Sat.SAT else None
        return self._sat[key]

    def base(self, cp: CasePlan, aim: BoundPath | None) -> dict[str, int] | None:
        """Some model of the case (and aim) within the bound, or None when there is none (or z3 gave up)."""
        k = aim_key(aim)
        if k not in cp.base:
            cp.base[k] = self.model(cp, aim, ())
        return cp.base[k]

    def keep(self, cp: CasePlan, aim: BoundPath | None, point: Mapping[str, int],
             order: tuple[str, ...]) -> dict[str, int] | None:
        """Keep as many of ``point``'s values as z3 allows, greedily in ``order``; settle the others. None when
        the case (and aim) has no model at all."""
        fixed: Point = ()
        model = None
        for d in order:
            trial = (*fixed, (d, point[d]))
            m = self.model(cp, aim, trial)
            if m is not None:
                fixed, model = trial, m
        if model is None and self.base(cp, aim) is None:
            return None
        return self.settle(cp, aim, fixed, order)

    def settle(self, cp: CasePlan, aim: BoundPath | None, fixed: Point, order: tuple[str, ...]) -> dict[str, int]:
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
            if self.model(cp, aim, (*fixed, (d, lo))) is not None:
                fixed = (*fixed, (d, lo))
                continue
            key = (cp.case.id, aim_key(aim), fixed, d)
            if key not in self._least:
                extra = [E.Cmp("==", E.Var(n), E.Const(v)) for n, v in fixed]
                self.queries += 1
                self._least[key] = self.solver.extreme(cp.conditions(aim) + extra, d, lowest=True)
            least = self._least[key]
            if least is None or self.model(cp, aim, (*fixed, (d, least))) is None:
                model = self.model(cp, aim, fixed)  # z3 gave up on the optimum: any model will do
                if model is None:
                    raise InternalError(f"z3 lost the model of case {cp.case.id} under {fixed}")
                least = model[d]
            fixed = (*fixed, (d, least))
        return dict(fixed)


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
        self.extra_all, self.extra_by_dim = extra_constants(contract, constants)
        self.case_list = [c for c in contract.cases() if case_filter is None or case_filter(c)]
        if not self.case_list:
            raise InvalidArgument("case_filter excludes every case of the contract")
        self._plans: dict[int, CasePlan] = {}
        self.caps = _caps(contract, bound.max_side, _constants_by_dim(
            [(c.domain, *(p.when for p in self._paths(c))) for c in self.case_list], self.extra_by_dim))
        self.lows = {d.name: d.min for d in contract.dims}
        solver = Solver([Bounds(d.name, d.min, self.caps[d.name]) for d in contract.dims], timeout_ms=2000)
        self.z3 = Completion(solver, self.lows)
        self.case_draw = st.integers(0, len(self.case_list) - 1)
        self.seed_draw = st.integers(0, 2**32 - 1)
        self._done: dict[tuple, Point | None] = {}
        self._infeasible: set[int] = set()

    def _paths(self, case: BoundCase) -> tuple[BoundPath, ...]:
        return tuple(p for p in case.paths if self.era is None or p.era == self.era)

    def case_plan(self, index: int) -> CasePlan:
        if index not in self._plans:
            case = self.case_list[index]
            self._plans[index] = build_case_plan(
                case, self._paths(case), lows=self.lows, caps=self.caps, extra_by_dim=self.extra_by_dim,
                extra_all=self.extra_all, max_elements=self.bound.max_elements, path=self.path)
        return self._plans[index]

    def complete(self, cp: CasePlan, aim: BoundPath | None, target: Mapping[str, int],
                 order: tuple[str, ...]) -> Point | None:
        """A point of the case (and aim) close to the drawn target; None when the aim is out of reach.

        First the target is repaired by the simple atoms of the conditions (``L <= 8``, ``E == Ev``,
        ``E in (64, 96)``; dims earlier in ``order`` win). If it still fails, z3 keeps as many of its values
        as it can, greedily in ``order``, and the others take their least feasible values
        (``Completion.settle``). Results are cached per query.
        """
        key = (cp.case.id, aim_key(aim), tuple(target[d] for d in cp.dims), order)
        if key in self._done:
            return self._done[key]
        point: dict[str, int] | None = repair(dict(target), order, cp.rules(aim), cp.sizes, self.lows, self.caps,
                                              self.bound.max_elements)
        if not cp.fits(aim, point, self.lows, self.caps):
            point = self.z3.keep(cp, aim, point, order)
            if point is None:
                self._done[key] = None
                return None
        # the contract's own predicate (expr.evaluate), besides the fast check
        if not (cp.fits(aim, point, self.lows, self.caps) and holds(cp.case.domain, point)
                and (aim is None or holds(aim.when, point))):
            raise InternalError(f"generated point {point} of case {cp.case.id} fails the contract's own predicate")
        result = tuple((d, point[d]) for d in cp.dims)
        if len(self._done) > 200_000:
            self._done.clear()
        self._done[key] = result
        return result

    def feasible_index(self, index: int) -> int:
        """``index`` or the next case (cyclically) that has a point within the bound (for the requested path)."""
        n = len(self.case_list)
        for step in range(n):
            i = (index + step) % n
            if i in self._infeasible:
                continue
            cp = self.case_plan(i)
            if self.path is not None:
                if cp.aims and self.z3.base(cp, cp.aims[0]) is not None:
                    return i
            elif cp.fits(None, {d: self.lows[d] for d in cp.dims}, self.lows, self.caps) or self.z3.base(cp, None) is not None:
                return i
            self._infeasible.add(i)
        what = f"path {self.path[0]}@{self.path[1]}" if self.path else "the domain"
        raise InvalidArgument(f"no case of {self.contract.file} reaches {what} within max_elements="
                              f"{self.bound.max_elements}, max_side={self.bound.max_side}")


def _constants_by_dim(conditions: Iterable[Iterable[E.Node]], extra: Mapping[str, set[int]]) -> dict[str, set[int]]:
    """The ``harvest`` of every condition (per case: its domain and its paths' ``when``), plus ``extra``."""
    out: dict[str, set[int]] = {}
    for nodes in conditions:
        for node in nodes:
            for name, values in harvest(node).items():
                out.setdefault(name, set()).update(values)
    for name, values in extra.items():
        out.setdefault(name, set()).update(values)
    return out


def _caps(contract: Contract, max_side: int, consts: Mapping[str, set[int]]) -> dict[str, int]:
    """Each dim's largest drawn value: ``max_side``, raised to the largest of its ``consts`` (which hold
    c - 1, c, c + 1 for each constant c, so the cap is just above the largest c), within its range."""
    return {d.name: max(d.min, min(d.max, max([max_side, *consts.get(d.name, ())])))
            for d in contract.dims}


def aim_key(aim: BoundPath | None) -> str | None:
    return None if aim is None else f"{aim.id}@{aim.era}"


def _resolve_path(contract: Contract, path: str | None, era: str | None) -> tuple[str, str] | None:
    if path is None:
        return None
    # ``era`` narrows a path named by its id alone; ``id@era`` names its era itself
    found = [(p.id, p.era) for p in contract.paths
             if p.pid.named_by(path) and (era is None or p.era == era or path != p.id)]
    if len(found) == 1:
        return found[0]
    known = ", ".join(f"{p.id}@{p.era}" for p in contract.paths)
    if not found:
        raise InvalidArgument(f"path={path!r}: no such path in {contract.file} (paths: {known})")
    raise InvalidArgument(f"path={path!r} is in several eras; write id@era (paths: {known})")
