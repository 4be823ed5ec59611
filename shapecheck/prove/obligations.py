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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from ..contract.model import BoundCase
from ..findings import Finding, PathId, PathStatus, SourceLoc
from ..logic import expr as E
from ..logic.simplify import shown
from ..logic.solver import Outcome, Sat, Solver, restrict
from ..result.report import PathCheck, ShownObligation
from ..rules import RuleCode
from ..trace.run import FRESH, Assert, Finished, OutputKind, exprs_dims, values_at


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


class Kind(enum.StrEnum):
    """What an obligation is about: which rule its refutation breaks."""

    ASSERT = "assert"  # a runtime assert the trace recorded (torch._check): SC004
    RANGE = "range"  # a range refinement tracing made: SC004
    REPLACEMENT = "replacement"  # a dim replaced by an expression while tracing: SC003
    OUTPUT = "output"  # an output of a finished trace against a contract path: SC002 (and SC019)
    GUARD = "guard"  # a guard the kernel raised on a dynamic dim is decided by its region: SC001 (SC022)
    VALUE = "value"  # a value the kernel needs (int() of a size) is one constant on its region: SC003


class Refinement(NamedTuple):
    """A dim's range as tracing refined it (``Finished.refinements``): what a range obligation is made from."""

    name: str
    lo: int | None
    hi: int | None


class Replacement(NamedTuple):
    """A dim tracing replaced (``Finished.replacements``): by an expression (None: untranslatable), and as torch
    wrote it."""

    name: str
    node: E.Node | None
    raw: str


@dataclass(frozen=True)
class Obligation:
    """One claim to prove over a region, made before anything is discharged."""

    premises: tuple[E.Node, ...]  # the region: domain, path precondition, the leaf's assumptions
    claim: E.Node | None = None  # in the contract language
    holds_at: Callable[[dict[str, int]], bool | None] | None = None  # torch's expression at a point
    reads: tuple[str, ...] = ()  # the dims ``holds_at`` reads
    kind: Kind = Kind.ASSERT
    what: str = ""  # what is proved, as a person reads it
    line: SourceLoc | None = None  # the kernel line it comes from (an assert's, the return's)
    key: str = ""  # the contract key it comes from: ``domain``, ``paths.ID.outputs[J]``
    source: Assert | Refinement | Replacement | None = None  # what the finding is made from when it is refuted


def show(ob: Obligation, status: PathStatus) -> ShownObligation:
    line = f"{ob.line.file}:{ob.line.line}" if ob.line is not None else ""
    return ShownObligation(str(ob.kind), ob.what, tuple(E.to_text(p) for p in ob.premises if p != E.TRUE), line,
                           ob.key, status)


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
                found = model([E.Cmp("==", E.Var(name), E.Const(v))])
                if found is None:
                    continue
                point = found
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
    points: list[dict[str, int]] = []
    for combo in itertools.product(*ranges):
        r = solver.satisfiable(conds + [E.Cmp("==", E.Var(n), E.Const(v)) for n, v in zip(names, combo)])
        if r.sat is Sat.UNKNOWN:
            return None
        if r.sat is Sat.SAT and r.model is not None:
            points.append(r.model)
    return points


# ---------------------------------------------------------------------------------------------------------
# Leaf obligations: asserts, range refinements and replacements must follow from the domain


def leaf_obligation_list(case: BoundCase, leaf: Leaf) -> list[Obligation]:
    """The obligations of one finished trace, in the order they are discharged: its asserts, then its range
    refinements, then its replacements, each of which must follow from the domain and the trace's region."""
    premises = (case.domain, *leaf.pc)
    out: list[Obligation] = []
    for a in leaf.trace.asserts:
        if a.expr is not None:
            out.append(Obligation(premises, a.expr, kind=Kind.ASSERT, what=f"assert {E.to_text(a.expr)}", line=a.loc,
                                  key="domain", source=a))
        else:  # torch's expression (holds_at), or none at all: unknown when discharged
            reads = tuple(sorted(exprs_dims((a.sym,)))) if a.sym is not None else ()
            out.append(Obligation(premises, holds_at=_holds(a.sym) if a.sym is not None else None, reads=reads,
                                  kind=Kind.ASSERT, what=f"assert {a.raw}", line=a.loc, key="domain", source=a))
    for name, lo, hi in leaf.trace.refinements:
        parts: list[E.Node] = [E.Cmp(">=", E.Var(name), E.Const(lo))] if lo is not None else []
        parts += [E.Cmp("<=", E.Var(name), E.Const(hi))] if hi is not None else []
        cond = E.conj(parts)
        out.append(Obligation(premises, cond, kind=Kind.RANGE, what=f"range {E.to_text(cond)} (refined by tracing)",
                              key=f"dims.{name}", source=Refinement(name, lo, hi)))
    for name, node, raw in leaf.trace.replacements:
        repl: E.Node | None = None if node is None else E.Cmp("==", E.Var(name), node)
        out.append(Obligation(premises, repl, kind=Kind.REPLACEMENT, key=f"dims.{name}", source=Replacement(name, node, raw),
                              what=f"{name} == {raw if node is None else E.to_text(node)} (replaced by tracing)"))
    return out


def leaf_obligations(case: BoundCase, leaf: Leaf, solver: Solver, shown: list[ShownObligation] | None = None,
                     settle: Callable[[Obligation, Discharged], Discharged] | None = None) -> list[Finding]:
    """The findings of one finished trace's obligations (``leaf_obligation_list``), each made where its
    obligation is discharged. ``shown``: each obligation and its status is appended to it. ``settle``: a second
    look at each discharge (``fallback_asserts.aside``)."""
    dims = case.point_dims
    found: list[Finding] = []
    narrowed: set[str] = set()  # dims a refuted assert narrowed: their refinements say the same again
    for ob in leaf_obligation_list(case, leaf):
        if isinstance(ob.source, Refinement) and ob.source.name in narrowed:  # a range obligation
            continue
        d = discharge(ob, case, solver)
        if settle is not None:
            d = settle(ob, d)
        if shown is not None:
            shown.append(show(ob, PathStatus(d.status.value)))
        v = _leaf_finding(case, ob, d, dims)
        if v is not None:
            if ob.kind is Kind.ASSERT and v.code == RuleCode.ASSERT_NARROWS_RANGE:
                narrowed.update(v.dims)
            found.append(v)
    return found


def _leaf_finding(case: BoundCase, ob: Obligation, d: Discharged, dims: list[str]) -> Finding | None:
    """The finding of a discharged leaf obligation: its rule when refuted, SC005 when unknown, else none."""
    def unknown(expr: str, loc, why: str) -> Finding:
        return Finding(code=RuleCode.INCONCLUSIVE, case=case.id, expr=expr, location=loc, counterexample={}, message=why)

    if ob.kind is Kind.ASSERT:
        a = ob.source
        assert isinstance(a, Assert)  # an assert obligation is made from its record
        if a.expr is None and a.sym is None:
            return unknown(a.raw, a.loc, f"cannot translate the runtime assert {a.raw}")
        text = E.to_text(a.expr) if a.expr is not None else a.raw
        adims = tuple(sorted(E.free_names(a.expr))) if a.expr is not None else ob.reads
        if d.status is Status.REFUTED:
            if a.expr is not None:
                message = f"the kernel asserts {text}, which fails inside the contract's domain"
            else:
                message = (f"the kernel asserts {a.raw} (torch's expression, outside the contract language), which "
                           f"is false at the counterexample, a point of the contract's domain (evaluated there, not "
                           f"proved by z3)")
            return Finding(code=RuleCode.ASSERT_NARROWS_RANGE, case=case.id, expr=text, node=a.expr, dims=adims, location=a.loc,
                             counterexample=restrict(d.point, dims), message=message)
        if d.status is Status.UNKNOWN:
            why = (f"z3 could not prove the assert {text} ({d.reason})" if a.expr is not None
                   else f"cannot translate the runtime assert {a.raw}")
            return unknown(text, a.loc, why)
        return None
    if ob.kind is Kind.RANGE:
        assert isinstance(ob.source, Refinement)
        name, lo, hi = ob.source
        assert ob.claim is not None  # a range obligation's claim is its bounds
        text = E.to_text(ob.claim)
        if d.status is Status.REFUTED:
            return Finding(code=RuleCode.ASSERT_NARROWS_RANGE, case=case.id, expr=text, node=ob.claim, dims=(name,),
                             counterexample=restrict(d.point, dims),
                             message=f"tracing refined the range of {name} to [{lo}, {hi}]")
        if d.status is Status.UNKNOWN:
            return unknown(text, None, f"z3 could not prove the range {text}")
        return None
    assert isinstance(ob.source, Replacement)
    name, node, raw = ob.source
    if node is None:
        return unknown(raw, None, f"cannot translate the replacement {name} -> {raw}")
    if d.status is Status.REFUTED:
        assert ob.claim is not None  # made from the translated replacement
        return Finding(code=RuleCode.VALUE_SPECIALIZATION, case=case.id, expr=E.to_text(ob.claim), node=ob.claim, dims=(name,),
                         counterexample=restrict(d.point, dims),
                         message=f"tracing replaced {name} by {E.to_text(node)}, which the domain does not imply")
    return None


def _holds(sym) -> Callable[[dict[str, int]], bool | None]:
    """torch's boolean expression at a point: True, False, or None when it does not evaluate to either."""
    def at(point: dict[str, int]) -> bool | None:
        got = values_at((sym,), point)
        return True if got == (True,) else False if got == (False,) else None
    return at


# ---------------------------------------------------------------------------------------------------------
# Output obligations: on every contract path, each finished trace that overlaps it returns the path's outputs


def path_name(p) -> PathId:
    """A contract path (``BoundPath`` or ``PathSpec``) as findings name it, with its table's line."""
    return p.pid


def output_obligations(case: BoundCase, leaves: list[Leaf], solver: Solver, eras: tuple[str, ...] = (),
                       definition=None, shown: list[ShownObligation] | None = None
                       ) -> tuple[list[PathCheck], list[Finding]]:
    """Per contract path (of the given eras, all when empty) its status, and the findings of its outputs.
    A finding without a line of its own is placed at the return statement of its trace (else the kernel's
    ``definition``). The obligations of a path
    (``output_obligation_list``) are built first, then discharged; ``shown`` collects each with its status."""
    checks: list[PathCheck] = []
    found: list[Finding] = []
    seen: set[tuple] = set()
    for p in case.paths:
        if eras and p.era not in eras:
            continue
        name = path_name(p)
        reach = solver.satisfiable([case.domain, p.when])
        if reach.sat is Sat.UNSAT:
            checks.append(PathCheck(name, PathStatus.UNREACHABLE))
            continue
        status = PathStatus.PROVED if reach.sat is Sat.SAT else PathStatus.UNKNOWN
        for c in output_obligation_list(case, p, leaves, solver):
            got = c.leaf.trace.outputs[c.index] if c.index < len(c.leaf.trace.outputs) else None
            v = _compare_output(c, got)
            if shown is not None:
                shown.append(show(c.obligation(definition), PathStatus.PROVED if v is None else
                                  PathStatus.UNKNOWN if v.code == RuleCode.INCONCLUSIVE else PathStatus.REFUTED))
            if v is None:
                continue
            where = c.leaf.trace.returned_at or definition  # the return statement, as the obligation names it
            if v.location is None and where is not None:
                v = replace(v, location=where)
            if (v.code, v.expr) not in seen:
                seen.add((v.code, v.expr))
                found.append(v)
            status = PathStatus.UNKNOWN if v.code == RuleCode.INCONCLUSIVE and status is not PathStatus.REFUTED \
                else PathStatus.REFUTED
        if status is PathStatus.PROVED:
            # proved only where finished traces cover the path: a bound, an error or a shared first guard
            # can leave part of domain /\ when unexplored
            union = E.disj([E.conj(leaf.pc) for leaf in leaves])
            if solver.satisfiable([case.domain, p.when, E.negate(union)]).sat is not Sat.UNSAT:
                status = PathStatus.PARTIAL if leaves else PathStatus.UNCHECKED
        checks.append(PathCheck(name, status))
    return checks, found


def output_obligation_list(case: BoundCase, p, leaves: list[Leaf], solver: Solver) -> list[_OutputCheck]:
    """The output obligations of contract path ``p``: per finished trace whose region meets the path's
    precondition, each output the path states equals the path's."""
    out: list[_OutputCheck] = []
    for leaf in leaves:
        premises = [case.domain, p.when] + leaf.pc
        if solver.satisfiable(premises).sat is Sat.UNSAT:
            continue
        out.extend(_OutputCheck(case, path_name(p), j, want, leaf, premises, solver)
                   for j, want in enumerate(p.outputs) if want is not None)
    return out


@dataclass(frozen=True)
class _OutputCheck:
    """One output of one leaf against one contract path."""

    case: BoundCase
    path: PathId
    index: int
    want: E.Node  # the contract's shape (a TupleE) or integer
    leaf: Leaf
    premises: list[E.Node]
    solver: Solver

    @property
    def where(self) -> str:
        return f"output {self.index}"

    def obligation(self, definition: SourceLoc | None = None) -> Obligation:
        """The record of this obligation (what ``--show-obligations`` prints)."""
        return Obligation(tuple(self.premises), kind=Kind.OUTPUT, key=f"paths.{self.path}.outputs[{self.index}]",
                          what=f"{self.where} = {shown(self.want)} on path {self.path}",
                          line=self.leaf.trace.returned_at or definition)

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

    def point(self, extra: Sequence[E.Node] = ()) -> dict[str, int]:
        """A reproducible point of the premises (the smallest)."""
        model = self.solver.small_model(self.premises + list(extra))
        if model is None and not extra:
            model = self.solver.satisfiable(self.premises).model
        return restrict(model, self.names)

    def finding(self, code: RuleCode, expr: str, message: str, point: dict[str, int] | None = None,
                dims: tuple[str, ...] = ()) -> Finding:
        return Finding(code=code, case=self.case.id, path=self.path, expected=self.want, expr=expr, dims=dims,
                         counterexample={} if point is None else point, message=message)


def _compare_output(c: _OutputCheck, got) -> Finding | None:
    where, want = c.where, c.want
    if got is not None and got.kind is OutputKind.OTHER and got.text == "NoneType":
        return c.finding(RuleCode.OUTPUT_PRESENCE_MISMATCH, f"{where}: None, runtime a tensor", f"{where} is None, but the runtime returns a "
                         f"tensor on path {c.path}{c.suffix}", c.point())
    if got is None or got.kind is OutputKind.OTHER:
        what = "nothing" if got is None else f"a {got.text}"
        return c.finding(RuleCode.OUTPUT_SHAPE_MISMATCH, f"{where}: {what}", f"{where} is missing: the kernel returned {what}{c.suffix}",
                         c.point())
    if got.kind is OutputKind.UNSUPPORTED:
        return _untranslated_output(c, got)
    fresh = sorted(n for n in E.free_names(got.shape if got.kind is OutputKind.TENSOR else got.scalar)
                   if n.startswith(FRESH))
    if fresh:  # a size the kernel created (new_dynamic_size): only an output table's `sizes` can state it
        certain = _differs_whatever_the_data(c, got, fresh)
        if certain is not None:
            return certain
        return c.finding(RuleCode.INCONCLUSIVE, f"{where} = {got.formula}", f"{where} has a data-dependent size the contract's path "
                         f"{c.path} does not name: state it with `sizes` in an output table", c.point())
    if isinstance(want, E.TupleE):
        if got.kind is not OutputKind.TENSOR:
            return c.finding(RuleCode.OUTPUT_SHAPE_MISMATCH, f"{where} = {got.text}",
                             f"{where} should be a tensor of shape {shown(want)}, the kernel returned an int",
                             c.point())
        have = got.shape
        expr = f"{where} = {shown(have)}, contract {shown(want)}"
        if len(have.items) != len(want.items):
            return c.finding(RuleCode.OUTPUT_SHAPE_MISMATCH, expr, f"{where} has rank {len(have.items)}, the contract's path {c.path} has "
                             f"rank {len(want.items)}{c.suffix}", restrict(c.solver.small_model(c.premises), c.names))
        eq = E.conj([E.compare("==", a, b) for a, b in zip(have.items, want.items)])
    else:
        if got.kind is not OutputKind.INT:
            return c.finding(RuleCode.OUTPUT_SHAPE_MISMATCH, f"{where} = {got.text}", f"{where} should be the integer {shown(want)}",
                             c.point())
        have = got.scalar
        expr = f"{where} = {shown(have)}, contract {shown(want)}"
        eq = E.compare("==", have, want)
    d = discharge(Obligation(tuple(c.premises), eq), c.case, c.solver)
    if d.status is Status.PROVED:
        return None
    if d.status is Status.UNKNOWN:
        return c.finding(RuleCode.INCONCLUSIVE, expr, f"z3 could not prove {expr} ({d.reason})")
    point = restrict(d.point, c.names)
    at = d.point or {}
    v = c.finding(RuleCode.OUTPUT_SHAPE_MISMATCH, expr, f"{where} is {E.evaluate(have, at)} but the contract's path {c.path} says "
                  f"{E.evaluate(want, at)}{c.suffix}", point, tuple(sorted(E.free_names(eq))))
    # with what the trace's asserts hold (the points the kernel returns at), for the replay's search of a point
    held = E.conj([a.expr for a in getattr(c.leaf.trace, "asserts", ()) if a.expr is not None])
    return replace(v, region=(E.conj([*c.premises, E.negate(eq)]), where, have, c.suffix, held))


def _differs_whatever_the_data(c: _OutputCheck, got, fresh: list[str]) -> Finding | None:
    """SC002 for an output with sizes the kernel made from the data (``?u0``) that the contract's shape never
    equals, whatever values those sizes take in the ranges the kernel gave them: ``(?u0,)`` with ``?u0 >= 1``
    where the contract says ``(0,)``; another rank; or a size of the dims that differs everywhere. None where some
    value could match (the contract must name the size: SC005)."""
    want = c.want
    if got.kind is not OutputKind.TENSOR or not isinstance(want, E.TupleE):
        return None
    have = got.shape
    ranges = {n: (lo, hi) for n, lo, hi in c.leaf.trace.fresh}
    never = len(have.items) != len(want.items)
    for h, w in zip(have.items, want.items) if not never else ():
        names = E.free_names(h)
        if not any(n.startswith(FRESH) for n in names):
            cond = E.compare("==", h, w)  # a size of the dims: unequal on the whole region?
        elif isinstance(h, E.Var) and h.name in ranges:
            lo, hi = ranges[h.name]  # the contract's size outside the data-dependent size's range everywhere?
            cond = E.conj([E.Cmp(op, w, E.Const(v)) for op, v in ((">=", lo), ("<=", hi)) if v is not None])
        else:
            continue  # an expression of a data-dependent size: not compared here
        if c.solver.satisfiable(c.premises + [cond]).sat is Sat.UNSAT:
            never = True
            break
    if not never:
        return None
    expr = f"{c.where} = {shown(have)}, contract {shown(want)}"
    sizes = ", ".join(f"{n} in [{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
                      for n, (lo, hi) in ranges.items() if n in fresh)
    return c.finding(RuleCode.OUTPUT_SHAPE_MISMATCH, expr, f"{c.where} is {shown(have)} ({sizes}: sizes the data "
                     f"decides), which never equals the contract's path {c.path} shape {shown(want)}, whatever the "
                     f"data{c.suffix}", c.point())


def _untranslated_output(c: _OutputCheck, got) -> Finding | None:
    """An output torch computed outside the contract language: evaluated at points of the path's region and
    compared with the contract there (SC002 at a point where they differ); proved size by size, by z3 where a
    size translates and by exhaustion where its dims take few values; else SC005."""
    where, want, dims = c.where, c.want, [d.name for d in c.case.dims]
    expr = f"{where} = {got.text}"
    if got.exprs and not exprs_dims(got.exprs) <= set(dims):  # a size the kernel made (ctx.new_dynamic_size())
        return c.finding(RuleCode.INCONCLUSIVE, f"{where}: a data-dependent size", f"{where} has a data-dependent size that the kernel made "
                         "(e.g. with torch.library.get_ctx().new_dynamic_size()): no contract dim can name it; "
                         "nothing is proved about it (write \"unspecified\" for this output)")
    if got.exprs:
        for point in probe_points(c.case, c.solver, c.premises, sorted(exprs_dims(got.exprs))):
            have = values_at(got.exprs, point)
            if have is None:
                continue
            want_at, have_at = E.evaluate(want, point), (have if got.is_tensor else have[0])
            if want_at != have_at:
                return c.finding(RuleCode.OUTPUT_SHAPE_MISMATCH, expr, f"{where} is {have_at} but the contract's path {c.path} says "
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
                    return c.finding(RuleCode.OUTPUT_SHAPE_MISMATCH, expr, f"{where} differs from the contract's path {c.path}{c.suffix} at "
                                     f"the counterexample (torch's expression evaluated there, not proved by z3)",
                                     restrict(d.point, c.names))
            else:
                return None  # every size proved
    return c.finding(RuleCode.INCONCLUSIVE, f"{where}: {got.text}", f"cannot translate {where}'s shape: {got.text}")


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


def moved_to(v: Finding, point: dict[str, int]) -> Finding:
    """An SC002 with a region (``v.region``, as the output obligations make it) at another point of that region,
    its message said again there. Raises where a formula cannot be evaluated at the point."""
    _, where, have, suffix, _ = v.region
    return replace(v, counterexample=point, message=f"{where} is {E.evaluate(have, point)} but the contract's path "
                   f"{v.path} says {E.evaluate(v.expected, point)}{suffix}")

