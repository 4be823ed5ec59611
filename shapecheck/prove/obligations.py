"""Obligations: facts a finished trace must satisfy on its region, and the one way they are discharged.

An ``Obligation`` is a claim over a region of the contract's domain, in the contract language (proved by
z3) or as torch's own expression (``holds_at``, evaluated at concrete sizes). ``discharge`` tries, in order:

1. z3, when the claim translated: PROVED, or REFUTED with the least counterexample, or UNKNOWN;
2. real points of the region (``probe_points``): a point where the claim is false refutes it;
3. exhaustion: when the dims the claim reads take at most ``EXHAUSTIVE`` value combinations in the region,
   the claim is evaluated at every one of them, which is a proof.

Anything else is UNKNOWN, which every caller reports as inconclusive, never as a pass.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from ..contract.model import BoundCase
from ..findings import Violation
from ..logic import expr as E
from ..logic.simplify import shown
from ..logic.solver import Outcome, Sat, Solver, restrict
from ..result.report import PathCheck
from ..trace.run import FRESH, Finished, OutputKind, exprs_dims, values_at


@dataclass
class Leaf:
    """One finished trace: the region (assumptions) it covers and what it produced."""

    pc: list[E.Node]
    trace: Finished


class Status(enum.Enum):
    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Discharged:
    status: Status
    point: dict[str, int] | None = None  # REFUTED: a point of the region where the claim is false
    reason: str = ""  # UNKNOWN: why (z3's reason, or what could not be evaluated)
    by: str = "z3"  # how it was settled: z3 | points | exhaustion


@dataclass(frozen=True)
class Obligation:
    premises: tuple[E.Node, ...]  # the region: domain, path precondition, the leaf's assumptions
    claim: E.Node | None = None  # in the contract language
    holds_at: Callable[[dict[str, int]], bool | None] | None = None  # torch's expression at a point
    reads: tuple[str, ...] = ()  # the dims ``holds_at`` reads


def discharge(ob: Obligation, case: BoundCase, solver: Solver) -> Discharged:
    premises = list(ob.premises)
    if ob.claim is not None:
        r = solver.implies(premises, ob.claim)
        if r.outcome == Outcome.PROVED:
            return Discharged(Status.PROVED)
        if r.outcome == Outcome.UNKNOWN:
            return Discharged(Status.UNKNOWN, reason=r.reason)
        return Discharged(Status.REFUTED, solver.small_model(premises + [E.negate(ob.claim)]) or r.model)
    if ob.holds_at is None:
        return Discharged(Status.UNKNOWN, reason="outside the contract language")
    for point in probe_points(case, solver, premises, ob.reads):
        if ob.holds_at(point) is False:
            return Discharged(Status.REFUTED, point, by="points")
    every = exhaustive_points(solver, premises, ob.reads)
    if every is None:
        return Discharged(Status.UNKNOWN, reason="too many values to evaluate")
    values = [ob.holds_at(point) for point in every]
    if False in values:
        return Discharged(Status.REFUTED, every[values.index(False)], by="exhaustion")
    if all(v is True for v in values):
        return Discharged(Status.PROVED, by="exhaustion")
    return Discharged(Status.UNKNOWN, reason="torch's expression did not evaluate everywhere")


# ---------------------------------------------------------------------------------------------------------
# Points of a region

# sizes worth trying when a claim cannot be handed to z3: small ones, powers of two and their neighbours
_PROBES = sorted({1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1023,
                  1024, 1025, 4095, 4096, 4097, 65535, 65536, 65537, 2**20, 2**24, 2**30, 2**31 - 1})
_PROBE_QUERIES = 48  # z3 queries per untranslated claim
EXHAUSTIVE = 256  # value combinations an untranslated obligation may be checked at, one by one


def probe_points(case: BoundCase, solver: Solver, conds: list[E.Node], names: Iterable[str]) -> Iterator[dict]:
    """Points of the region ``conds`` (every one checked against it), for evaluating what z3 cannot take:
    the least point, then each named dim moved through ``_PROBES`` and its bounds (the rest kept where the
    region allows, else re-solved). At most ``_PROBE_QUERIES`` z3 queries."""
    region = E.conj(conds)
    budget = [_PROBE_QUERIES]

    def model(extra: list[E.Node]) -> dict[str, int] | None:
        if budget[0] <= 0:
            return None
        budget[0] -= 1
        m = solver.small_model(conds + extra)
        return m if m is not None and E.evaluate(region, m) is True else None

    base = model([])
    if base is None:
        return
    yield base
    for name in names:
        d = case.contract.dim(name)
        for v in [x for x in _PROBES if d.min <= x <= d.max] + [d.min, d.max]:
            point = dict(base, **{name: v})
            if E.evaluate(region, point) is not True:
                point = model([E.Cmp("==", E.Var(name), E.Const(v))])
                if point is None:
                    continue
            yield point


def exhaustive_points(solver: Solver, conds: list[E.Node], names: Iterable[str],
                      limit: int = EXHAUSTIVE) -> list[dict[str, int]] | None:
    """A point of the region for every combination of values the named dims take in it: evaluating an
    expression over those dims at all of them covers every value it can have there, which is a proof.
    None when there are more than ``limit`` combinations or z3 cannot say."""
    names = list(names)
    ranges = []
    total = 1
    for n in names:
        lo = solver.extreme(conds, n, lowest=True)
        hi = solver.extreme(conds, n, lowest=False)
        if lo is None or hi is None:
            return None
        total *= hi - lo + 1
        if total > limit:
            return None
        ranges.append(range(lo, hi + 1))
    points = []
    for combo in itertools.product(*ranges):
        r = solver.satisfiable(conds + [E.Cmp("==", E.Var(n), E.Const(v)) for n, v in zip(names, combo)])
        if r.sat is Sat.UNKNOWN:
            return None
        if r.sat is Sat.SAT:
            points.append(r.model)
    return points


# ---------------------------------------------------------------------------------------------------------
# Leaf obligations: asserts, range refinements and replacements must follow from the domain


def leaf_obligations(case: BoundCase, leaf: Leaf, solver: Solver) -> list[Violation]:
    """The findings of one finished trace's asserts, refinements and replacements."""
    dims = [d.name for d in case.dims]
    premises = (case.domain, *leaf.pc)
    found: list[Violation] = []

    def unknown(expr: str, loc, why: str) -> None:
        found.append(Violation(code="SC005", case=case.id, expr=expr, location=loc, counterexample={}, message=why))

    narrowed: set[str] = set()
    for a in leaf.trace.asserts:
        if a.expr is not None:
            ob = Obligation(premises, a.expr)
            text, adims = E.to_text(a.expr), tuple(sorted(E.free_names(a.expr)))
        elif a.sym is not None:
            adims = tuple(sorted(exprs_dims((a.sym,))))
            ob = Obligation(premises, holds_at=_holds(a.sym), reads=adims)
            text = a.raw
        else:
            unknown(a.raw, a.loc, f"cannot translate the runtime assert {a.raw}")
            continue
        d = discharge(ob, case, solver)
        if d.status is Status.REFUTED:
            narrowed.update(adims)
            if a.expr is not None:
                message = f"the kernel asserts {text}, which fails inside the contract's domain"
            else:
                message = (f"the kernel asserts {a.raw} (torch's expression, outside the contract language), which "
                           f"is false at the counterexample, a point of the contract's domain (evaluated there, not "
                           f"proved by z3)")
            found.append(Violation(code="SC004", case=case.id, expr=text, node=a.expr, dims=adims, location=a.loc,
                                   counterexample=restrict(d.point, dims), message=message))
        elif d.status is Status.UNKNOWN:
            why = (f"z3 could not prove the assert {text} ({d.reason})" if a.expr is not None
                   else f"cannot translate the runtime assert {a.raw}")
            unknown(text, a.loc, why)
    for name, lo, hi in leaf.trace.refinements:
        if name in narrowed:
            continue
        parts = [E.Cmp(">=", E.Var(name), E.Const(lo))] if lo is not None else []
        parts += [E.Cmp("<=", E.Var(name), E.Const(hi))] if hi is not None else []
        cond = E.conj(parts)
        d = discharge(Obligation(premises, cond), case, solver)
        if d.status is Status.REFUTED:
            found.append(Violation(code="SC004", case=case.id, expr=E.to_text(cond), node=cond, dims=(name,),
                                   counterexample=restrict(d.point, dims),
                                   message=f"tracing refined the range of {name} to [{lo}, {hi}]"))
        elif d.status is Status.UNKNOWN:
            unknown(E.to_text(cond), None, f"z3 could not prove the range {E.to_text(cond)}")
    for name, node, raw in leaf.trace.replacements:
        if node is None:
            unknown(raw, None, f"cannot translate the replacement {name} -> {raw}")
            continue
        cond = E.Cmp("==", E.Var(name), node)
        d = discharge(Obligation(premises, cond), case, solver)
        if d.status is Status.REFUTED:
            found.append(Violation(code="SC003", case=case.id, expr=E.to_text(cond), node=cond, dims=(name,),
                                   counterexample=restrict(d.point, dims),
                                   message=f"tracing replaced {name} by {E.to_text(node)}, which the domain does "
                                   f"not imply"))
    return found


def _holds(sym) -> Callable[[dict[str, int]], bool | None]:
    """torch's boolean expression at a point: True, False, or None when it does not evaluate to either."""
    def at(point: dict[str, int]) -> bool | None:
        got = values_at((sym,), point)
        return True if got == (True,) else False if got == (False,) else None
    return at


# ---------------------------------------------------------------------------------------------------------
# Output obligations: on every contract path, each finished trace that overlaps it returns the path's outputs


def path_name(p) -> str:
    return p.id if p.era == "default" else f"{p.id}@{p.era}"


def output_obligations(case: BoundCase, leaves: list[Leaf], solver: Solver, eras: tuple[str, ...] = (),
                       definition=None) -> tuple[list[PathCheck], list[Violation]]:
    """Per contract path (of the given eras, all when empty) its status, and the findings of its outputs.
    A finding without a line of its own is placed at the kernel's ``definition``."""
    checks: list[PathCheck] = []
    found: list[Violation] = []
    seen: set[tuple] = set()
    for p in case.paths:
        if eras and p.era not in eras:
            continue
        name = path_name(p)
        reach = solver.satisfiable([case.domain, p.when])
        if reach.sat is Sat.UNSAT:
            checks.append(PathCheck(name, "unreachable"))
            continue
        status = "proved" if reach.sat is Sat.SAT else "unknown"
        for leaf in leaves:
            premises = [case.domain, p.when] + leaf.pc
            if solver.satisfiable(premises).sat is Sat.UNSAT:
                continue
            for j, want in enumerate(p.outputs):
                if want is None:
                    continue
                got = leaf.trace.outputs[j] if j < len(leaf.trace.outputs) else None
                v = _compare_output(_OutputCheck(case, name, j, want, leaf, premises, solver), got)
                if v is None:
                    continue
                if v.location is None and definition is not None:
                    v = replace(v, location=definition)
                if (v.code, v.expr) not in seen:
                    seen.add((v.code, v.expr))
                    found.append(v)
                status = "unknown" if v.code == "SC005" and status != "refuted" else "refuted"
        if status == "proved":
            # proved only where finished traces cover the path: a bound, an error or a shared first guard
            # can leave part of domain /\ when unexplored
            union = E.disj([E.conj(leaf.pc) for leaf in leaves])
            if solver.satisfiable([case.domain, p.when, E.negate(union)]).sat is not Sat.UNSAT:
                status = "partial" if leaves else "unchecked"
        checks.append(PathCheck(name, status))
    return checks, found


@dataclass(frozen=True)
class _OutputCheck:
    """One output of one leaf against one contract path."""

    case: BoundCase
    path: str
    index: int
    want: E.Node  # the contract's shape (a TupleE) or integer
    leaf: Leaf
    premises: list[E.Node]
    solver: Solver

    @property
    def where(self) -> str:
        return f"output {self.index}"

    @property
    def suffix(self) -> str:
        region = E.to_text(E.conj(self.leaf.pc)) if self.leaf.pc else ""
        return f" where {region}" if region else ""

    @property
    def names(self) -> list[str]:
        """The dims a counterexample of this output assigns: the case's (its inputs) and every other dim the
        contract's output reads (one in no input shape, tied to them by the domain: ``requires = ["D == 2 * H"]``,
        output ``(N, H)``), which the replay needs to evaluate the contract's output there."""
        read = E.free_names(self.want)
        return [d.name for d in self.case.contract.dims if d in self.case.dims or d.name in read]

    def point(self, extra: list[E.Node] = ()) -> dict[str, int]:
        """A reproducible point of the premises (the smallest)."""
        model = self.solver.small_model(self.premises + list(extra))
        if model is None and not extra:
            model = self.solver.satisfiable(self.premises).model
        return restrict(model, self.names)

    def finding(self, code: str, expr: str, message: str, point: dict[str, int] | None = None,
                dims: tuple[str, ...] = ()) -> Violation:
        return Violation(code=code, case=self.case.id, path=self.path, expected=self.want, expr=expr, dims=dims,
                         counterexample={} if point is None else point, message=message)


def _compare_output(c: _OutputCheck, got) -> Violation | None:
    where, want = c.where, c.want
    if got is not None and got.kind is OutputKind.OTHER and got.text == "NoneType":
        return c.finding("SC019", f"{where}: None, runtime a tensor", f"{where} is None, but the runtime returns a "
                         f"tensor on path {c.path}{c.suffix}", c.point())
    if got is None or got.kind is OutputKind.OTHER:
        what = "nothing" if got is None else f"a {got.text}"
        return c.finding("SC002", f"{where}: {what}", f"{where} is missing: the kernel returned {what}{c.suffix}",
                         c.point())
    if got.kind is OutputKind.UNSUPPORTED:
        return _untranslated_output(c, got)
    fresh = sorted(n for n in E.free_names(got.shape if got.kind is OutputKind.TENSOR else got.scalar)
                   if n.startswith(FRESH))
    if fresh:  # a size the kernel created (new_dynamic_size): only an output table's `sizes` can state it
        return c.finding("SC005", f"{where} = {got.formula}", f"{where} has a data-dependent size the contract's path "
                         f"{c.path} does not name: state it with `sizes` in an output table", c.point())
    if isinstance(want, E.TupleE):
        if got.kind is not OutputKind.TENSOR:
            return c.finding("SC002", f"{where} = {got.text}",
                             f"{where} should be a tensor of shape {shown(want)}, the kernel returned an int",
                             c.point())
        have = got.shape
        expr = f"{where} = {shown(have)}, contract {shown(want)}"
        if len(have.items) != len(want.items):
            return c.finding("SC002", expr, f"{where} has rank {len(have.items)}, the contract's path {c.path} has "
                             f"rank {len(want.items)}{c.suffix}", restrict(c.solver.small_model(c.premises), c.names))
        eq = E.conj([E.compare("==", a, b) for a, b in zip(have.items, want.items)])
    else:
        if got.kind is not OutputKind.INT:
            return c.finding("SC002", f"{where} = {got.text}", f"{where} should be the integer {shown(want)}",
                             c.point())
        have = got.scalar
        expr = f"{where} = {shown(have)}, contract {shown(want)}"
        eq = E.compare("==", have, want)
    d = discharge(Obligation(tuple(c.premises), eq), c.case, c.solver)
    if d.status is Status.PROVED:
        return None
    if d.status is Status.UNKNOWN:
        return c.finding("SC005", expr, f"z3 could not prove {expr} ({d.reason})")
    point = restrict(d.point, c.names)
    return c.finding("SC002", expr, f"{where} is {E.evaluate(have, d.point)} but the contract's path {c.path} says "
                     f"{E.evaluate(want, d.point)}{c.suffix}", point, tuple(sorted(E.free_names(eq))))


def _untranslated_output(c: _OutputCheck, got) -> Violation | None:
    """An output torch computed outside the contract language: evaluated at points of the path's region and
    compared with the contract there (SC002 at a point where they differ); proved size by size, by z3 where a
    size translates and by exhaustion where its dims take few values; else SC005."""
    where, want, dims = c.where, c.want, [d.name for d in c.case.dims]
    expr = f"{where} = {got.text}"
    if got.exprs and not exprs_dims(got.exprs) <= set(dims):  # a size the kernel made (ctx.new_dynamic_size())
        return c.finding("SC005", f"{where}: a data-dependent size", f"{where} has a data-dependent size that the kernel made "
                         "(e.g. with torch.library.get_ctx().new_dynamic_size()): no contract dim can name it; "
                         "nothing is proved about it (write \"unspecified\" for this output)")
    if got.exprs:
        for point in probe_points(c.case, c.solver, c.premises, sorted(exprs_dims(got.exprs))):
            have = values_at(got.exprs, point)
            if have is None:
                continue
            want_at, have_at = E.evaluate(want, point), (have if got.is_tensor else have[0])
            if want_at != have_at:
                return c.finding("SC002", expr, f"{where} is {have_at} but the contract's path {c.path} says "
                                 f"{want_at}{c.suffix} (torch's expression is outside the contract language: "
                                 f"evaluated at the counterexample, not proved by z3)", restrict(point, c.names))
        parts = _output_parts(got, want)
        if parts is not None:
            for item, sym, want_i in parts:
                reads = tuple(sorted(exprs_dims((sym,)) | E.free_names(want_i)))
                ob = (Obligation(tuple(c.premises), E.compare("==", item, want_i)) if item is not None else
                      Obligation(tuple(c.premises), holds_at=_equals(sym, want_i), reads=reads))
                d = discharge(ob, c.case, c.solver)
                if d.status is Status.UNKNOWN or (d.status is Status.REFUTED and item is not None):
                    break
                if d.status is Status.REFUTED:
                    return c.finding("SC002", expr, f"{where} differs from the contract's path {c.path}{c.suffix} at "
                                     f"the counterexample (torch's expression evaluated there, not proved by z3)",
                                     restrict(d.point, c.names))
            else:
                return None  # every size proved
    return c.finding("SC005", f"{where}: {got.text}", f"cannot translate {where}'s shape: {got.text}")


def _output_parts(got, want) -> list[tuple] | None:
    """(translated size or None, torch's expression, the contract's size) per size; None when ranks differ."""
    if not got.is_tensor:
        return [(None, got.exprs[0], want)]
    if not isinstance(want, E.TupleE) or got.items is None or len(got.items) != len(want.items):
        return None
    return list(zip(got.items, got.exprs, want.items))


def _equals(sym, want: E.Node) -> Callable[[dict[str, int]], bool | None]:
    def at(point: dict[str, int]) -> bool | None:
        have = values_at((sym,), point)
        return None if have is None else E.evaluate(want, point) == have[0]
    return at
