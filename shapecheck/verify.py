"""Orchestration: for each case, explore the kernel's guards by re-tracing under assumptions, then prove the
obligations (guard-freedom, asserts, output shapes per path) with z3 -> ``Report``.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

from . import expr as E
from .contract import BoundCase, Contract
from .errors import UserError
from .findings import Verdict, Violation, verdict_of
from .report import CaseResult, PathCheck, Report
from .solver import Bounds, Decision, Outcome, Sat, SatResult, Solver, restrict
from .trace import (
    Failed,
    Finished,
    Guarded,
    Kernel,
    NotApplicable,
    OutputKind,
    Trace,
    as_guard,
    exprs_dims,
    guard_dims,
    guard_value_at,
    trace_case,
    values_at,
)


@dataclass(frozen=True)
class Options:
    max_traces: int = 64  # per case
    timeout_ms: int = 10_000  # per z3 query
    eras: tuple[str, ...] = ()  # empty: every era
    cases: tuple[str, ...] = ()  # substrings of case ids; empty: every case
    # False: a case whose very first guard repeats a violating first guard of an earlier case is not
    # explored further (its verdict is already fail; its report lists that guard only).
    full: bool = False
    explore: bool = False  # build the path map of every case (implies full)
    confirm_export: bool = False  # run torch.export on failing cases and a sample of passing ones
    export_sample: int = 2  # passing cases to confirm
    jobs: int = 1  # processes for the cases' first traces; 0: one per usable core (Linux), see parallel.py


@dataclass
class Leaf:
    """One finished trace: the region (assumptions) it covers and what it produced."""

    pc: list[E.Node]
    trace: Finished


@dataclass
class CaseRun:
    case: BoundCase
    leaves: list[Leaf] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    traces: int = 0
    truncated: bool = False
    paths: list[PathCheck] = field(default_factory=list)
    shared_with: str = ""


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


def make_solver(contract: Contract, timeout_ms: int) -> CachedSolver:
    return CachedSolver([Bounds(d.name, d.min, d.max) for d in contract.dims], timeout_ms)


def verify_contract(contract: Contract, kernel: Kernel, options: Options = Options(),
                    on_case: Callable[[str], None] | None = None) -> Report:
    """Verify ``kernel`` against every case of ``contract``. ``on_case(case_id)`` is called as each case
    starts (the gate's progress display)."""
    from ._compat import quiet_torch_logging

    with quiet_torch_logging():
        return _verify_contract(contract, kernel, options, on_case)


def _verify_contract(contract: Contract, kernel: Kernel, options: Options,
                     on_case: Callable[[str], None] | None) -> Report:
    start = time.perf_counter()
    solver = make_solver(contract, options.timeout_ms)
    results: list[CaseResult] = []
    violations: list[Violation] = []
    roots: dict[tuple, str] = {}  # first violating guard -> the case explored in full
    selected = [case for case in contract.cases()
                if not options.cases or any(s in case.id for s in options.cases)]
    if options.cases and not selected:
        raise UserError(f"{contract.file}: no case id contains {' or '.join(map(repr, options.cases))} "
                        f"(--case); `shapecheck verify op OP --format json` lists the case ids")
    first: dict = {}
    done: dict = {}
    if options.jobs != 1:
        from .parallel import map_cases, prefetch_roots

        if options.full or options.explore:  # no case depends on another: whole cases in workers
            done = map_cases(lambda c: _run_case(kernel, c, solver, options, None), selected, options.jobs,
                             valid=lambda v: isinstance(v, tuple) and len(v) == 2)
        else:
            first = prefetch_roots(kernel, selected, options.jobs, track_return=options.explore)
    for case in selected:
        if on_case is not None:
            on_case(case.id)
        result, found = done.pop(case.id, None) or _run_case(kernel, case, solver, options, roots,
                                                            first.pop(case.id, None))
        results.append(result)
        violations.extend(found)
    if not options.cases:
        violations.extend(unreachable_paths(contract, results, options))
    if options.confirm_export:
        results = _confirm_exports(contract, kernel, results, violations, solver, options)
    violations = apply_suppressions(contract, violations)
    if not any(not r.skipped for r in results):
        verdict = Verdict.INCONCLUSIVE
    else:
        verdict = verdict_of(violations)
    from . import _compat as C

    return Report(contract.op, contract.file, kernel.name, verdict, results, violations,
                  time.perf_counter() - start, C.TORCH_VERSION)


def _run_case(kernel: Kernel, case: BoundCase, solver: Solver, options: Options, roots: dict[tuple, str] | None,
              first: Trace | NotApplicable | None = None) -> tuple[CaseResult, list[Violation]]:
    """One case, explored and proved: its result and its findings (before suppressions)."""
    try:
        run = explore_case(kernel, case, solver, options, roots, first=first)
    except NotApplicable as why:
        return CaseResult(case.id, Verdict.PASS, skipped=str(why)), []
    check_outputs(run, solver, options, kernel.definition)
    _unexplored(run, solver, options)
    from .explain import suggest_fixes

    run.violations = suggest_fixes(run, solver)
    pmap = None
    if options.explore:
        from .explore import path_map

        pmap = path_map(run, solver, path_name)
    outputs = tuple(dict.fromkeys(tuple(_output_text(o) for o in leaf.trace.outputs) for leaf in run.leaves))
    return (CaseResult(case.id, verdict_of(run.violations), run.traces, len(run.leaves), tuple(run.paths), "",
                       run.truncated, run.shared_with, pmap, outputs=outputs), run.violations)


def _unexplored(run: CaseRun, solver: Solver, options: Options) -> None:
    """Nothing is proved where no finished trace reached: without a failure, that is inconclusive."""
    from .rules import FAILING

    if any(v.code in FAILING for v in run.violations):
        return
    union = E.disj([E.conj(leaf.pc) for leaf in run.leaves])
    rest = solver.satisfiable([run.case.domain, E.negate(union)])
    if rest.sat is Sat.UNSAT:
        return
    why = (f"exploration stopped at the trace bound ({options.max_traces} traces, --max-traces)" if run.truncated
           else "part of the domain has no finished trace")
    point = restrict(solver.small_model([run.case.domain, E.negate(union)]), [d.name for d in run.case.dims])
    run.violations.append(Violation(code="SC005", case=run.case.id, path=None, expr="unexplored region", dims=(), location=None, counterexample=point,
                                    message=f"{why}: nothing is proved there, e.g. at the counterexample point"))


def _output_text(out) -> str:
    if out.kind is OutputKind.TENSOR:
        return E.to_text(out.shape)
    if out.kind is OutputKind.INT:
        return E.to_text(out.scalar)
    return out.text


def unreachable_paths(contract: Contract, results: list[CaseResult], options: Options) -> list[Violation]:
    """SC006 for a contract path whose precondition holds in no case: a contract smell, never a pass."""
    checked = [r for r in results if not r.skipped]
    out = []
    for p in contract.paths:
        if options.eras and p.era not in options.eras:
            continue
        name = path_name(p)
        statuses = [s.status for r in checked for s in r.paths if s.path == name]
        if statuses and all(s == "unreachable" for s in statuses):
            out.append(Violation(code="SC006", case="*", path=name, expr=E.to_text(p.when), dims=(), location=None, counterexample={},
                                 message=f"the precondition of path {name} holds for no input of any case"))
    return out


def _confirm_exports(contract, kernel, results, violations, solver, options):
    from . import _compat as C
    from .contract import bind_case, normalize_op
    from .export_check import confirm

    op = kernel.op if kernel.op is not None else C.resolve_op(normalize_op(contract.op))
    cases = {c.id: c for c in contract.cases()}
    passing = 0
    out = []
    for r in results:
        wanted = r.verdict != Verdict.PASS or (not r.skipped and passing < options.export_sample)
        if wanted and not r.skipped:
            if r.verdict == Verdict.PASS:
                passing += 1
            case = cases.get(r.case) or bind_case(contract, {})
            mine = [v for v in violations if v.case == r.case]
            r = replace(r, export=confirm(case, r, mine, kernel, op, solver))
        out.append(r)
    return out


def verify_op(op: str, *, contract: str | None = None, meta: str | None = None, meta_source: str | None = None,
              options: Options = Options()) -> Report:
    """The Python API behind ``shapecheck verify op``."""
    from .target import load_target

    c, kernel = load_target(op, contract, meta, meta_source)
    return verify_contract(c, kernel, options)


# ---------------------------------------------------------------------------------------------------------
# Exploring one case


def _dynamic(case: BoundCase, names: set[str]) -> bool:
    return any(d.dynamic for d in case.contract.dims if d.name in names)


def explore_case(kernel: Kernel, case: BoundCase, solver: Solver, options: Options,
                 roots: dict[tuple, str] | None = None, first: Trace | NotApplicable | None = None) -> CaseRun:
    """``first``: the case's unassumed trace, when it was already made (parallel.prefetch_roots)."""
    if isinstance(first, NotApplicable):
        raise first
    run = CaseRun(case)
    dims = [d.name for d in case.dims]
    premises = [case.domain]
    work: list[list[E.Node]] = [[]]
    seen: set[tuple] = set()

    def key(code, expr, loc, path=None):
        return (code, expr, (loc.file, loc.line) if loc else None, path)

    def add(v: Violation) -> None:
        k = key(v.code, v.expr, v.location, v.path)
        if k not in seen:
            seen.add(k)
            run.violations.append(v)

    def point(conds: list[E.Node]) -> dict[str, int]:
        return restrict(solver.small_model(conds), dims)

    def inconclusive(expr: str, loc, why: str, pc: list[E.Node]) -> None:
        add(Violation(code="SC005", case=case.id, path=None, expr=expr, dims=(), location=loc, counterexample={}, message=why))

    while work:
        if run.traces >= options.max_traces:
            run.truncated = True
            break
        pc = work.pop()
        if not pc and first is not None:
            t, first = first, None
        else:
            t = trace_case(kernel, case, pc, track_return=options.explore)
        run.traces += 1
        if isinstance(t, Failed):
            if t.missing_name:
                # a name the kernel's environment lacks (a candidate written for another torch, whose
                # import the file would have run, or which calls a torch API the installed torch lacks):
                # nothing is known about the shapes, but nothing passes
                inconclusive(t.error, t.loc, f"the kernel cannot run here: {t.error} (its environment does "
                             "not define the name; with --meta-source, neither the file's own functions nor the "
                             "installed torch's meta-registration namespace do: written for another torch?)", pc)
                continue
            add(Violation(code="SC007", case=case.id, path=None, expr=t.error, dims=(), location=t.loc, counterexample=point(premises + pc),
                          message=f"the kernel raised {t.error}"))
            continue
        if isinstance(t, Finished):
            pending = unsettled_fallback(t, solver, premises + pc)
            if pending is None:
                run.leaves.append(Leaf(pc, t))
                check_leaf(run, Leaf(pc, t), solver, add, inconclusive)
                continue
            t = pending  # the kernel's guard_or_false/guard_or_true: handled as the guard it is in export
        # a guard
        if t.guard is None:
            found = refute_untranslated(case, t, solver, premises + pc)
            if found is not None and key(found.code, found.expr, found.location) not in seen:
                add(found)
            elif found is None:
                inconclusive(t.guard_raw, t.loc, f"cannot translate the guard {t.guard_raw}", pc)
            continue
        text = E.to_text(t.guard)
        gdims = tuple(sorted(E.free_names(t.guard)))
        if t.is_specialization:
            base = solver.satisfiable(premises + pc)
            if base.sat is not Sat.SAT:
                inconclusive(text, t.loc, "could not find a point of the domain", pc)
                continue
            # the smallest point, not whichever z3 finds first: the value explored is reproducible
            at = solver.small_model(premises + pc) or base.model
            value = E.evaluate(t.guard, at)
            other = solver.satisfiable(premises + pc + [E.Cmp("!=", t.guard, E.Const(value))])
            if other.sat is Sat.UNSAT:
                work.append(pc + [E.Cmp("==", t.guard, E.Const(value))])
            elif other.sat is Sat.UNKNOWN:
                inconclusive(text, t.loc, f"z3 could not decide whether {text} is constant ({other.reason})", pc)
            elif _dynamic(case, set(gdims)) and key("SC003", text, t.loc) not in seen:
                cex = point(premises + pc + [E.Cmp("!=", t.guard, E.Const(value))])
                add(Violation(code="SC003", case=case.id, path=None, expr=text, node=t.guard, dims=gdims, location=t.loc, counterexample=cex,
                              message=f"the kernel needs the concrete value of {text} (int() or similar): it specialises "
                              f"a dynamic dim", witness=restrict(at, dims)))
            continue
        if t.guard in pc or E.negate(t.guard) in pc:
            inconclusive(text, t.loc, f"torch raised the guard {text} again under the assumption that decides it", pc)
            continue
        verdict, pos, neg = solver.decide(premises + pc, t.guard)
        if verdict is Decision.TRUE:
            work.append(pc + [t.guard])
        elif verdict is Decision.FALSE:
            work.append(pc + [E.negate(t.guard)])
        elif verdict is Decision.UNKNOWN:
            reason = pos.reason or neg.reason
            inconclusive(text, t.loc, f"z3 could not decide the guard {text} ({reason})", pc)
        elif verdict is Decision.EMPTY:
            continue
        else:
            assert verdict is Decision.BOTH
            violating = case.contract.guard_free and _dynamic(case, set(gdims))
            if violating and key("SC001", text, t.loc) not in seen:
                via = ("" if t.fallback_value is None else
                       f" (through guard_or_false/guard_or_true: with unbacked sizes torch assumed "
                       f"{t.fallback_value}; with example sizes, as torch.export traces, the call installs a guard)")
                add(Violation(code="SC001", case=case.id, path=None, expr=text, node=t.guard, dims=gdims, location=t.loc, counterexample=point(premises + pc + [E.negate(t.guard)]),
                              message=f"the kernel branches on {text}, which does not hold on the whole range of "
                              f"{', '.join(gdims)}{via}", witness=point(premises + pc + [t.guard]),
                              restricts=restriction(solver, case, premises + pc, t.guard, gdims)))
            # the shortcut only where the case's verdict is already fail: its first guard is a violation
            if violating and not pc and roots is not None and not (options.full or options.explore):
                sig = (text, (t.loc.file, t.loc.line) if t.loc else None)
                if sig in roots:
                    run.shared_with = roots[sig]
                    break
                roots[sig] = case.id
            # explore both sides: the false side first is popped last
            work.append(pc + [E.negate(t.guard)])
            work.append(pc + [t.guard])
    return run


# sizes worth trying when a guard cannot be handed to z3: small ones, powers of two and their neighbours
_PROBES = sorted({1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1023,
                  1024, 1025, 4095, 4096, 4097, 65535, 65536, 65537, 2**20, 2**24, 2**30, 2**31 - 1})
_PROBE_QUERIES = 48  # z3 queries per untranslated guard


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


_EXHAUSTIVE = 256  # value combinations an untranslated obligation may be checked at, one by one


def exhaustive_points(solver: Solver, conds: list[E.Node], names: Iterable[str],
                      limit: int = _EXHAUSTIVE) -> list[dict[str, int]] | None:
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


def refute_untranslated(case: BoundCase, t: Guarded, solver: Solver, conds: list[E.Node]) -> Violation | None:
    """A guard outside the contract language (a float comparison, say) cannot go to z3, but torch's own
    expression can be evaluated at concrete sizes. Two points of the region where it differs prove that the
    kernel branches on (or specialises) a dynamic dim: a violation with two real counterexample points.
    None when no such pair turns up (the caller reports inconclusive)."""
    gdims = tuple(sorted(guard_dims(t)))
    if not gdims or not _dynamic(case, set(gdims)) or (not t.is_specialization and not case.contract.guard_free):
        return None
    dims = [d.name for d in case.dims]
    seen: dict[object, dict[str, int]] = {}
    for point in probe_points(case, solver, conds, gdims):
        value = guard_value_at(t, point)
        if value is not None and value not in seen:
            seen[value] = point
        if len(seen) >= 2:
            break
    if len(seen) < 2:
        return None
    (v1, p1), (v2, p2) = list(seen.items())[:2]
    if t.is_specialization:
        return Violation(code="SC003", case=case.id, path=None, expr=t.guard_raw, dims=gdims, location=t.loc, counterexample=restrict(p2, dims),
                         message=f"the kernel needs the concrete value of {t.guard_raw} (torch's expression; int() or "
                         f"similar), which is {v1} at the witness and {v2} at the counterexample: it specialises "
                         f"a dynamic dim", witness=restrict(p1, dims))
    cex, wit = (p1, p2) if v1 is False else (p2, p1)
    return Violation(code="SC001", case=case.id, path=None, expr=t.guard_raw, dims=gdims, location=t.loc, counterexample=restrict(cex, dims),
                     message=f"the kernel branches on {t.guard_raw} (torch's expression, outside the contract language: "
                     f"evaluated at the two points, not proved by z3), which is false at the counterexample and "
                     f"true at the witness", witness=restrict(wit, dims))


def unsettled_fallback(t: Finished, solver: Solver, conds: list[E.Node]) -> Guarded | None:
    """The first guard_or_* fallback of a finished trace that the region does not settle the way torch
    assumed, as a guard trace; None when every fallback is settled (the trace stands as a leaf)."""
    for fb in t.fallbacks:
        if fb.guard is not None:
            verdict = solver.decide(conds, fb.guard)[0]
            if verdict is Decision.EMPTY or (verdict is Decision.TRUE and fb.value) \
                    or (verdict is Decision.FALSE and not fb.value):
                continue
        return as_guard(fb)
    return None


def restriction(solver: Solver, case: BoundCase, premises: list[E.Node], guard: E.Node, gdims: tuple[str, ...]) -> str:
    """'restricts L from [1, 2147483647] to [1, 8]' for a guard on one dim."""
    if len(gdims) != 1:
        return ""
    name = gdims[0]
    d = case.contract.dim(name)
    lo = solver.extreme(premises + [guard], name, lowest=True)
    hi = solver.extreme(premises + [guard], name, lowest=False)
    if lo is None or hi is None:
        return ""
    return f"restricts {name} from [{d.min}, {d.max}] to [{lo}, {hi}] on the guarded side"


def check_leaf(run: CaseRun, leaf: Leaf, solver: Solver, add, inconclusive) -> None:
    """Asserts, range refinements and replacements recorded by a finished trace must follow from the domain."""
    case = run.case
    dims = [d.name for d in case.dims]
    premises = [case.domain] + leaf.pc
    narrowed: set[str] = set()
    for a in leaf.trace.asserts:
        if a.expr is None:
            adims = tuple(sorted(exprs_dims((a.sym,)))) if a.sym is not None else ()
            cex = next((p for p in probe_points(case, solver, premises, adims)
                        if values_at((a.sym,), p) == (False,)), None) if a.sym is not None else None
            every = exhaustive_points(solver, premises, adims) if cex is None and a.sym is not None else None
            if every is not None:
                cex = next((p for p in every if values_at((a.sym,), p) == (False,)), None)
                if cex is None and all(values_at((a.sym,), p) == (True,) for p in every):
                    continue  # true at every value its dims take here: proved by exhaustion
            if cex is not None:
                add(Violation(code="SC004", case=case.id, path=None, expr=a.raw, dims=adims, location=a.loc, counterexample=restrict(cex, dims),
                              message=f"the kernel asserts {a.raw} (torch's expression, outside the contract language), "
                              f"which is false at the counterexample, a point of the contract's domain "
                              f"(evaluated there, not proved by z3)"))
            else:
                inconclusive(a.raw, a.loc, f"cannot translate the runtime assert {a.raw}", leaf.pc)
            continue
        r = solver.implies(premises, a.expr)
        text = E.to_text(a.expr)
        adims = tuple(sorted(E.free_names(a.expr)))
        if r.outcome == Outcome.REFUTED:
            narrowed.update(adims)
            cex = restrict(solver.small_model(premises + [E.negate(a.expr)]), dims)
            add(Violation(code="SC004", case=case.id, path=None, expr=text, node=a.expr, dims=adims, location=a.loc, counterexample=cex,
                          message=f"the kernel asserts {text}, which fails inside the contract's domain"))
        elif r.outcome == Outcome.UNKNOWN:
            inconclusive(text, a.loc, f"z3 could not prove the assert {text} ({r.reason})", leaf.pc)
    for name, lo, hi in leaf.trace.refinements:
        if name in narrowed:
            continue
        parts = []
        if lo is not None:
            parts.append(E.Cmp(">=", E.Var(name), E.Const(lo)))
        if hi is not None:
            parts.append(E.Cmp("<=", E.Var(name), E.Const(hi)))
        cond = E.conj(parts)
        r = solver.implies(premises, cond)
        if r.outcome == Outcome.REFUTED:
            add(Violation(code="SC004", case=case.id, path=None, expr=E.to_text(cond), node=cond, dims=(name,), location=None,
                          counterexample=restrict(solver.small_model(premises + [E.negate(cond)]) or r.model, dims),
                          message=f"tracing refined the range of {name} to [{lo}, {hi}]"))
        elif r.outcome == Outcome.UNKNOWN:
            inconclusive(E.to_text(cond), None, f"z3 could not prove the range {E.to_text(cond)}", leaf.pc)
    for name, node, raw in leaf.trace.replacements:
        if node is None:
            inconclusive(raw, None, f"cannot translate the replacement {name} -> {raw}", leaf.pc)
            continue
        cond = E.Cmp("==", E.Var(name), node)
        r = solver.implies(premises, cond)
        if r.outcome == Outcome.REFUTED:
            add(Violation(code="SC003", case=case.id, path=None, expr=E.to_text(cond), node=cond, dims=(name,), location=None,
                          counterexample=restrict(solver.small_model(premises + [E.negate(cond)]) or r.model, dims),
                          message=f"tracing replaced {name} by {E.to_text(node)}, which the domain does not imply"))


# ---------------------------------------------------------------------------------------------------------
# Output obligations


def path_name(p) -> str:
    return p.id if p.era == "default" else f"{p.id}@{p.era}"


def check_outputs(run: CaseRun, solver: Solver, options: Options, definition=None) -> None:
    """For every path and every finished trace that overlaps it, the outputs equal the path's shapes."""
    case = run.case
    dims = [d.name for d in case.dims]
    seen: set[tuple] = set()
    for p in case.paths:
        if options.eras and p.era not in options.eras:
            continue
        name = path_name(p)
        reach = solver.satisfiable([case.domain, p.when])
        if reach.sat is Sat.UNSAT:
            run.paths.append(PathCheck(name, "unreachable"))
            continue
        status = "proved" if reach.sat is Sat.SAT else "unknown"
        for leaf in run.leaves:
            premises = [case.domain, p.when] + leaf.pc
            overlap = solver.satisfiable(premises)
            if overlap.sat is Sat.UNSAT:
                continue
            for j, want in enumerate(p.outputs):
                if want is None:
                    continue
                got = leaf.trace.outputs[j] if j < len(leaf.trace.outputs) else None
                v = _compare_output(case, name, j, want, got, premises, solver, dims, leaf)
                if v is None:
                    continue
                if v.location is None and definition is not None:
                    v = replace(v, location=definition)
                key = (v.code, v.expr)
                if key not in seen:
                    seen.add(key)
                    run.violations.append(v)
                status = "unknown" if v.code == "SC005" and status != "refuted" else "refuted"
        if status == "proved":
            # proved only where finished traces cover the path: a bound, an error or a shared first guard
            # can leave part of domain /\ when unexplored
            union = E.disj([E.conj(leaf.pc) for leaf in run.leaves])
            rest = solver.satisfiable([case.domain, p.when, E.negate(union)])
            if rest.sat is not Sat.UNSAT:
                status = "partial" if run.leaves else "unchecked"
        run.paths.append(PathCheck(name, status))


def _point(solver: Solver, premises: list[E.Node], dims: list[str]) -> dict[str, int]:
    """A reproducible point of the premises (the smallest), for findings that hold everywhere."""
    model = solver.small_model(premises)
    if model is None:
        model = solver.satisfiable(premises).model
    return restrict(model, dims)


def _output_at_points(case, path, where, want, got, premises, solver, dims,
                      suffix) -> tuple[str, Violation | None]:
    """An output torch computed outside the contract language, evaluated at points of the path's region and
    compared with the contract there: ("refuted", the violation at a point where they differ), ("proved",
    None) when the region is small enough to check every value its dims take, else ("unknown", None)."""
    if not got.exprs:
        return "unknown", None
    for point in probe_points(case, solver, premises, sorted(exprs_dims(got.exprs))):
        have = values_at(got.exprs, point)
        if have is None:
            continue
        want_at = E.evaluate(want, point)
        have_at = have if got.is_tensor else have[0]
        if want_at != have_at:
            return "refuted", Violation(
                code="SC002", case=case.id, path=path, expected=want, expr=f"{where} = {got.text}", dims=(), location=None, counterexample=restrict(point, dims),
                message=f"{where} is {have_at} but the contract's path {path} says {want_at}{suffix} (torch's expression "
                f"is outside the contract language: evaluated at the counterexample, not proved by z3)")
    # no point refutes it: prove it size by size, by z3 where the size translates, else by evaluating it at
    # every value its dims take in the region (when they take few)
    if got.is_tensor:
        if not isinstance(want, E.TupleE) or got.items is None or len(got.items) != len(want.items):
            return "unknown", None
        parts = list(zip(got.items, got.exprs, want.items))
    else:
        parts = [(None, got.exprs[0], want)]
    for item, expr, want_i in parts:
        if item is not None:
            if solver.implies(premises, E.compare("==", item, want_i)).outcome != Outcome.PROVED:
                return "unknown", None
            continue
        every = exhaustive_points(solver, premises, sorted(exprs_dims((expr,)) | E.free_names(want_i)))
        if every is None:
            return "unknown", None
        for point in every:
            have = values_at((expr,), point)
            if have is None:
                return "unknown", None
            if E.evaluate(want_i, point) != have[0]:
                return "refuted", Violation(
                    code="SC002", case=case.id, path=path, expected=want, expr=f"{where} = {got.text}", dims=(), location=None, counterexample=restrict(point, dims),
                    message=f"{where} differs from the contract's path {path}{suffix} at the counterexample (torch's "
                    f"expression evaluated there, not proved by z3)")
    return "proved", None


def _compare_output(case, path, j, want, got, premises, solver, dims, leaf) -> Violation | None:
    where = f"output {j}"
    region = E.to_text(E.conj(leaf.pc)) if leaf.pc else ""
    suffix = f" where {region}" if region else ""
    if got is None or got.kind is OutputKind.OTHER:
        what = "nothing" if got is None else f"a {got.text}"
        return Violation(code="SC002", case=case.id, path=path, expected=want, expr=f"{where}: {what}", dims=(), location=None, counterexample=_point(solver, premises, dims),
                         message=f"{where} is missing: the kernel returned {what}{suffix}")
    if got.kind is OutputKind.UNSUPPORTED:
        status, found = _output_at_points(case, path, where, want, got, premises, solver, dims, suffix)
        if status != "unknown":
            return found  # refuted at a point, or equal at every value its dims take (None)
        return Violation(code="SC005", case=case.id, path=path, expr=f"{where}: {got.text}", dims=(), location=None, counterexample={},
                         message=f"cannot translate {where}'s shape: {got.text}")
    if isinstance(want, E.TupleE):
        if got.kind is not OutputKind.TENSOR:
            return Violation(code="SC002", case=case.id, path=path, expected=want, expr=f"{where} = {got.text}", dims=(), location=None,
                             counterexample=_point(solver, premises, dims), message=f"{where} should be a tensor of shape {E.to_text(want)}, the kernel returned an int")
        shape = got.shape
        expr = f"{where} = {E.to_text(shape)}, contract {E.to_text(want)}"
        if len(shape.items) != len(want.items):
            return Violation(code="SC002", case=case.id, path=path, expected=want, expr=expr, dims=(), location=None, counterexample=restrict(solver.small_model(premises), dims),
                             message=f"{where} has rank {len(shape.items)}, the contract's path {path} has rank "
                             f"{len(want.items)}{suffix}")
        eq = E.conj([E.compare("==", a, b) for a, b in zip(shape.items, want.items)])
    else:
        if got.kind is not OutputKind.INT:
            return Violation(code="SC002", case=case.id, path=path, expected=want, expr=f"{where} = {got.text}", dims=(), location=None,
                             counterexample=_point(solver, premises, dims), message=f"{where} should be the integer {E.to_text(want)}")
        expr = f"{where} = {E.to_text(got.scalar)}, contract {E.to_text(want)}"
        eq = E.compare("==", got.scalar, want)
    r = solver.implies(premises, eq)
    if r.outcome == Outcome.PROVED:
        return None
    if r.outcome == Outcome.UNKNOWN:
        return Violation(code="SC005", case=case.id, path=path, expr=expr, dims=(), location=None, counterexample={}, message=f"z3 could not prove {expr} ({r.reason})")
    names = tuple(sorted(E.free_names(eq)))
    model = solver.small_model(premises + [E.negate(eq)]) or r.model
    cex = restrict(model, dims)
    got_at = E.evaluate(got.shape if got.kind is OutputKind.TENSOR else got.scalar, model)
    want_at = E.evaluate(want, model)
    return Violation(code="SC002", case=case.id, path=path, expected=want, expr=expr, dims=names, location=None, counterexample=cex,
                     message=f"{where} is {got_at} but the contract's path {path} says {want_at}{suffix}")


# ---------------------------------------------------------------------------------------------------------
# Suppressions


def apply_suppressions(contract: Contract, violations: list[Violation]) -> list[Violation]:
    """Mark violations matched by a contract suppression (not expired)."""
    if not contract.suppressions:
        return violations
    import datetime
    from dataclasses import replace

    today = datetime.date.today().isoformat()
    out = []
    for v in violations:
        reason = ""
        for s in contract.suppressions:
            if s.expires and s.expires < today:
                continue
            if _matches(s, v):
                reason = s.reason
                break
        out.append(replace(v, suppressed=reason) if reason else v)
    return out


def suppression_matches(s, v: Violation) -> bool:
    """Whether suppression ``s`` covers violation ``v``, expiry aside (the gate's stale-suppression check)."""
    return _matches(s, v)


def _matches(s, v: Violation) -> bool:
    if s.rule != v.code:
        return False
    if s.case and s.case not in v.case:
        return False
    if s.path and (v.path or "") != s.path and (v.path or "").split("@")[0] != s.path:
        return False
    if s.dims and not set(s.dims) <= set(v.dims):
        return False
    return True

