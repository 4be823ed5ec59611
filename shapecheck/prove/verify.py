"""Orchestration: for each case, explore the kernel's guards by re-tracing under assumptions, then prove the
obligations (guard-freedom, asserts, output shapes per path) with z3 -> ``Report``.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from ..contract import suppressions
from ..contract.model import BoundCase, Contract
from ..errors import ExprError, UnknownOpError, UserError, said
from ..findings import Finding, PathStatus, Verdict, verdict_of
from ..kernel import sources
from ..kernel.sources import Kernel, KernelSource, NotApplicable
from ..logic.solver import Bounds, CachedSolver, Sat, Solver
from ..options import VerifyOptions as Options  # every option is declared there (the cache key derives)
from ..result.report import CaseResult, PathCheck, Report
from ..rules import RuleCode
from ..trace.run import Trace
from .budget import Budget, OverBudget, interrupted, over_budget
from .caveats import with_caveats
from .coverage import empty_rejects, uncovered, unexplored, unreachable_paths
from .crashes import Resume, Send
from .explore import CaseRun, SharedRoots, explore_case, will_share
from .exported import exported_findings
from .obligations import output_obligations, path_name
from .outputs import spec_obligations
from .torch_decides import fallback_note

if TYPE_CHECKING:
    from .export import ExportResult


def make_solver(contract: Contract, timeout_ms: int) -> CachedSolver:
    from ..contract.model import size_names
    from .premises import simplified

    sizes = [Bounds(n, 0, 2**63 - 1) for n in size_names(contract)]  # data-dependent output sizes
    return CachedSolver([Bounds(d.name, d.min, d.max) for d in contract.dims] + sizes, timeout_ms, simplified)


def verify_contract(contract: Contract, kernel: Kernel, options: Options = Options(),
                    on_case: Callable[[str], None] | None = None, isolate: bool = False) -> Report:
    """Verify ``kernel`` against every case of ``contract``. ``on_case(case_id)`` is called as each case
    starts (the gate's progress display). ``isolate``: the run goes to a supervised child process where the
    platform allows it (``trace.isolate``), so that a kernel that crashes its process costs only its case (the
    command line's runs)."""
    from .._torch.core import numpy_absence_known, quiet_torch_logging

    def one(c: Contract, k: Kernel, o: Options) -> Report:
        from .._torch.warm import warm_up
        from ..trace.isolate import can_isolate

        if not (isolate and can_isolate()):
            if o.case_timeout is not None:
                warm_up()  # torch's one-time imports are no case's: the first case's budget does not pay them
            return _verify_contract(c, k, o, on_case)
        from .crashes import run_isolated

        warm_up()  # each child (one more after each crash) inherits torch's lazy imports
        budget = Budget(o.case_timeout, o.run_timeout)  # the run's clock goes on across a crash
        return run_isolated(lambda resume, send: _verify_contract(c, k, o, None, budget, resume, send), k, on_case)

    if options.both_modes and kernel.other is None:  # one kernel both ways: its callees may still dispatch otherwise
        from ..kernel.resolved import plain_mode_twin

        twin = plain_mode_twin(kernel)
        kernel = kernel if twin is None else replace(kernel, mode="export", other=twin)
    with quiet_torch_logging(), numpy_absence_known():  # each stage's symbolic arithmetic (sym_max) imports numpy
        report = one(contract, kernel, options)
        if kernel.other is not None:  # plain FakeTensorMode runs another kernel: checked too (prove/modes.py)
            from .modes import with_other_mode

            report = with_other_mode(report, contract, kernel, options, one)
        return report


def _verify_contract(contract: Contract, kernel: Kernel, options: Options, on_case: Callable[[str], None] | None,
                     budget: Budget | None = None, resume: Resume | None = None, send: Send | None = None) -> Report:
    """One kernel's run. ``resume`` and ``send`` in a supervised child (prove/crashes.py): the cases an earlier
    child finished (or crashed in), and the channel that reports each case as it starts and ends."""
    start = time.perf_counter()
    solver = make_solver(contract, options.timeout_ms)
    results: list[CaseResult] = []
    violations: list[Finding] = []
    roots = SharedRoots()  # first violating guard -> the cases explored in full, and their leaf regions
    selected = [case for case in contract.cases()
                if not options.cases or any(s in case.id for s in options.cases)]
    if options.cases and not selected and not any(any(s in c.id for s in options.cases)
                                                  for c in contract.excluded_reject_cases()):
        raise UserError(f"{contract.file}: no case id contains {' or '.join(map(repr, options.cases))} "
                        f"(--case); `shapecheck verify op OP --format json` lists the case ids")
    unknown = [e for e in options.eras if e not in contract.eras]
    if unknown:  # it would select no path: nothing of the outputs checked, and a pass
        raise UserError(f"{contract.file}: no era {unknown[0]!r} (--era); the contract's eras: "
                        f"{', '.join(contract.eras)}")
    budget = budget or Budget(options.case_timeout, options.run_timeout)
    steps = _Steps(resume or Resume(), send, on_case)
    todo = [c for c in selected if c.id not in steps.resume.results]
    nothing: _Ahead = ({}, {}, {})
    first, exported, done = steps.stage(AHEAD, lambda: _ahead(kernel, todo, solver, options, budget, roots), nothing)
    batched: set[str] = set()  # the roots whose regions were traced ahead for the cases after them
    for i, case in enumerate(selected):
        if budget.run_over():
            results.extend(_not_run(c, budget) for c in selected[i:])
            violations.append(_run_over(budget, selected, i))
            break
        ahead = done.pop(case.id, None)
        if isinstance(ahead, _Cut):  # its time budget ran out ahead of its turn, in a worker or here
            ahead = _cut_short_case(case.id, ahead.over())
        run_case = functools.partial(_run_case, kernel, case, solver, options, roots, first.pop(case.id, None),
                                     exported.pop(case.id, None))
        result, found = steps.case(case.id, functools.partial(_turn, ahead, case.id, budget, run_case))
        results.append(result)
        violations.extend(found)
        if first and len(roots.leaves) > len(batched):  # a case explored a violating first guard in full
            new = [c for c in roots.leaves if c not in batched]
            batched.update(new)
            done.update(_share_ahead(kernel, [c for c in selected[i + 1:] if c.id not in done], first, exported,
                                     roots, new, solver, options, budget))
    results, violations = _finish(contract, kernel, solver, options, budget, steps, results, violations)
    # nothing checked and nothing found: inconclusive (a case that crashed the process was not checked, but its
    # SC007 is a finding: fail)
    if not any(not r.skipped or r.verdict in (Verdict.ERROR, Verdict.FAIL) for r in results):
        verdict = Verdict.INCONCLUSIVE
    else:
        verdict = verdict_of(violations)
    from .._torch import core as C

    return Report(contract.op, contract.file, kernel.name, verdict, tuple(results), tuple(violations),
                  time.perf_counter() - start, C.TORCH_VERSION, notes=kernel.notes)


_T = TypeVar("_T")
AHEAD = "the work run ahead in parallel (--jobs)"
CONFIRM = "torch.export's confirmation (--confirm-export)"


class _Steps:
    """A run's cases and the steps between them, each reported through ``send`` as it starts and ends (in a
    supervised child); a case or step an earlier child finished, or crashed in, is taken from ``resume``."""

    def __init__(self, resume: Resume, send: Send | None, on_case: Callable[[str], None] | None):
        self.resume, self.send, self.on_case = resume, send or (lambda message: None), on_case

    def case(self, case_id: str, check: Callable[[], tuple[CaseResult, list[Finding]]]) -> tuple[CaseResult, list[Finding]]:
        if case_id in self.resume.results:
            return self.resume.results[case_id]
        if self.on_case is not None:
            self.on_case(case_id)
        self.send(("case", case_id))
        result, found = check()
        self.send(("done", case_id, result, found))
        return result, found

    def stage(self, name: str, run: Callable[[], _T], instead: _T) -> _T:
        if name in self.resume.skip:
            return instead
        self.send(("stage", name, name == AHEAD))  # the cases redo in turn what was run ahead: no finding
        out = run()
        self.send(("end", name))
        return out


def _finish(contract: Contract, kernel: Kernel, solver: Solver, options: Options, budget: Budget, steps: _Steps,
            results: list[CaseResult], violations: list[Finding]) -> tuple[list[CaseResult], list[Finding]]:
    """After the cases: the [[rejects]] that take whole cases out, the paths no case reaches, the kernel's
    caveats, torch.export's confirmation and the suppressions."""
    complete = not any(_cut_short(r) for r in results)
    if not budget.run_over():
        for case_id, run_rejects in _excluded_rejects(contract, kernel, solver, options):
            result, found = steps.case(case_id, functools.partial(isolated, case_id, budget, run_rejects))
            results.append(result)
            violations.extend(found)
    if not options.cases and complete:  # a path no finished case reaches may be reached by one cut short
        violations.extend(unreachable_paths(contract, results, options) + empty_rejects(contract, solver))
    violations = with_caveats(kernel, violations)  # a kernel not wholly the file's: nothing proved, nothing refuted
    violations.extend(steps.resume.findings)  # a crash between cases: the step it was in is left out
    if options.confirm_export and not budget.run_over():
        confirm = functools.partial(_confirm_exports, contract, kernel, results, violations, solver, options)
        results = steps.stage(CONFIRM, confirm, results)
    violations = suppressions.apply(list(contract.suppressions), violations)
    return _after_suppressions(results, violations), violations


def _turn(ahead: tuple[CaseResult, list[Finding]] | None, case_id: str, budget: Budget,
          run_case: Callable[[], tuple[CaseResult, list[Finding]]]) -> tuple[CaseResult, list[Finding]]:
    """A case in its turn: its result made ahead of it, else the case checked now (``isolated``)."""
    return ahead or isolated(case_id, budget, run_case)


#: (case id -> unassumed trace, case id -> export-style run's findings, case id -> whole result or ``_Cut``)
_Ahead = tuple[dict, dict[str, list[Finding]], dict]


def _ahead(kernel: Kernel, selected: list[BoundCase], solver: Solver, options: Options, budget: Budget,
           roots: SharedRoots) -> _Ahead:
    """With --jobs, what runs in the workers ahead of the cases' turns, each case in its own time budget: (case
    id -> its unassumed trace, case id -> its export-style run's findings, case id -> its whole result or
    ``_Cut``). The first case, whose turn comes before any other's, runs whole in this process while the workers
    make the others' first traces (``_first_here``)."""
    if options.jobs == 1:
        return {}, {}, {}
    from ..trace.parallel import NotDone, map_cases, prefetch_cases

    within, caught = functools.partial(_budgeted, budget), _cut
    if options.full or options.explore:  # no case depends on another: whole cases in workers
        done = map_cases(lambda c: _run_case(kernel, c, solver, options, None), selected, options.jobs,
                         valid=lambda v: isinstance(v, _Cut) or (isinstance(v, tuple) and len(v) == 2),
                         within=within, caught=caught)
        return {}, {}, done
    # each case's first trace and its export-style run (prove.helper_guards) depend on no other case
    from .helper_guards import helper_guards

    whole: dict[str, tuple[CaseResult, list[Finding]]] = {}
    here = functools.partial(_first_here, kernel, selected[0], solver, options, budget, roots, whole) if selected else None
    fetched = prefetch_cases(kernel, selected, options.jobs, track_return=options.explore or options.show_obligations,
                             also=lambda c: helper_guards(kernel, c, solver), within=within, caught=caught, here=here)
    fetched.update(whole)
    done = {k: v for k, v in fetched.items() if isinstance(v, _Cut) or k in whole}
    ran = {k: v for k, v in fetched.items() if k not in done}
    return ({k: root for k, (root, _) in ran.items()},
            {k: found for k, (_, found) in ran.items() if not isinstance(found, NotDone)}, done)


def _first_here(kernel: Kernel, case: BoundCase, solver: Solver, options: Options, budget: Budget,
                roots: SharedRoots, whole: dict[str, tuple[CaseResult, list[Finding]]], warm: dict) -> None:
    """The first case's turn taken early, in this process, while the workers trace the cases after it: nothing
    runs before its turn, so it is the same run as in turn (``isolated``, the same ``roots``), only overlapped.
    The cases that share its regions can start as soon as the map ends."""
    got = warm.get(case.id)
    if not isinstance(got, tuple):  # its first trace was cut short or raised: left to its turn
        return
    from ..trace.parallel import NotDone

    root, found = got
    one = dataclasses.replace(options, jobs=1)  # no workers of workers
    run = functools.partial(_run_case, kernel, case, solver, one, roots, root,
                            None if isinstance(found, NotDone) else found)
    whole[case.id] = isolated(case.id, budget, run)


def _after_suppressions(results: list[CaseResult], violations: list[Finding]) -> list[CaseResult]:
    """Each checked case's verdict from its findings once the contract's [[suppress]] tables have accepted some:
    a case whose only findings are accepted passes, as the run does (it read "fail" in the JSON). A case cut
    short, skipped or failed by shapecheck itself keeps its verdict."""
    by_case: dict[str, list[Finding]] = {}
    for v in violations:
        by_case.setdefault(v.case, []).append(v)
    out = []
    for r in results:
        if not r.skipped and r.verdict in (Verdict.FAIL, Verdict.INCONCLUSIVE):
            r = replace(r, verdict=verdict_of(by_case.get(r.case, [])))
        out.append(r)
    return out


DISPATCHER_ONLY = ("wholly rejected by a dispatcher-limit [[rejects]] (the op itself may run there): nothing is "
                   "checked in this case")
EMPTY_DOMAIN = ("its domain is empty: no input satisfies [domain] requires and exclude within the dims' ranges and "
                "outside every [[rejects]] region, so nothing is checked in this case")


def _run_case(kernel: Kernel, case: BoundCase, solver: Solver, options: Options, roots: SharedRoots | None,
              first: Trace | NotApplicable | None = None,
              exported: list[Finding] | None = None) -> tuple[CaseResult, list[Finding]]:
    """One case, explored and proved: its result and its findings (before suppressions). ``first`` and
    ``exported``: its unassumed trace and its export-style run's findings, where a worker made them."""
    domain = solver.satisfiable([case.domain])
    if domain.sat is Sat.UNSAT:  # every obligation would hold of no input: a pass
        return CaseResult(case.id, Verdict.PASS, skipped=EMPTY_DOMAIN), []
    if domain.sat is Sat.UNKNOWN:  # whatever is proved below may hold of no input: nothing is known to be checked
        why = Finding(code=RuleCode.INCONCLUSIVE, case=case.id, expr="[domain]", counterexample={},
                      message=f"z3 could not decide whether the case's domain has any input ({domain.reason}): "
                              "nothing is known to be checked in this case")
        return CaseResult(case.id, Verdict.INCONCLUSIVE, skipped=why.message), [why]
    try:
        run = explore_case(kernel, case, solver, options, roots, first=first)
    except NotApplicable as why:
        return CaseResult(case.id, Verdict.PASS, skipped=str(why)), []
    from .replay import concrete_runs

    with concrete_runs():  # the static runs at concrete sizes below, once a point
        return _proved(kernel, case, solver, options, roots, run, exported)


def _proved(kernel: Kernel, case: BoundCase, solver: Solver, options: Options, roots: SharedRoots | None,
            run: CaseRun, exported: list[Finding] | None) -> tuple[CaseResult, list[Finding]]:
    """A case's obligations discharged, after its exploration (``_run_case``), and its passes run."""
    shown = run.obligations if options.show_obligations else None
    checks, found = output_obligations(case, run.leaves, solver, options.eras, kernel.definition, shown)
    notes: list[str] = []
    found += spec_obligations(case, run.leaves, solver, options.eras, checks, kernel.definition, notes)
    run.paths.extend(checks)
    from .fixes import suggest_fixes
    from .replay import replay

    # the passes: each takes the case's findings and returns new ones (frozen findings, never edited in place)
    findings: list[Finding] = run.violations + [fallback_note(v, run.leaves, solver) for v in found]  # guard_or_* sides
    findings = replay(kernel, case, findings, solver)  # every counterexample run with static sizes
    from .layouts_seen import confirmed_layouts

    findings, unproved = confirmed_layouts(kernel, case, findings, solver, run.leaves)  # each SC018 on concrete sizes too
    wrong = {v.path for v in findings if v.path is not None and v.code is not RuleCode.INCONCLUSIVE}
    run.paths = [PathCheck(c.path, PathStatus.UNKNOWN) if c.path in unproved - wrong and c.status is PathStatus.REFUTED
                 else c for c in run.paths]
    findings = findings + exported_findings(kernel, case, solver, exported, findings)  # export's guards, or its raise
    findings = findings + unexplored(run, findings, solver, options) + uncovered(case, solver, options)
    from .least import least_point

    findings = findings + least_point(kernel, case, solver, findings)  # sizes 0 and 1 on concrete sizes
    from .other_side import other_sides

    sides = other_sides(kernel, case, run.leaves, solver, options.eras, findings)  # guard_or_* sides, concretely
    findings = findings + sides
    refuted = {v.path for v in sides if v.path is not None}
    run.paths = [PathCheck(c.path, PathStatus.REFUTED) if c.path in refuted else c for c in run.paths]
    if case.rejects:
        from .rejects import reject_obligations
        from .replay import placed

        findings = findings + placed(kernel, case, reject_obligations(kernel, case, solver, options.max_traces,
                                                                      run.trace_cache))
    findings = suggest_fixes(run, findings, solver)
    run.violations = findings
    pmap = None
    if options.explore:
        from .pathmap import path_map

        pmap = path_map(run, solver, path_name)
    outputs = tuple(dict.fromkeys(tuple(o.formula for o in leaf.trace.outputs) for leaf in run.leaves))
    return (CaseResult(case.id, verdict_of(run.violations), run.traces, len(run.leaves), tuple(run.paths), "",
                       run.truncated, run.shared_with, pmap, outputs=outputs, notes=tuple(notes),
                       obligations=tuple(run.obligations)), run.violations)


def _budgeted(budget: Budget, run: Callable[[], tuple[CaseResult, list[Finding]]]) -> tuple[CaseResult, list[Finding]]:
    """A case within its own and the run's time budget: over it, ``OverBudget``, also where the timer's exception
    came out as something else or not at all (``interrupted``). A case run ahead of its turn (in a worker or
    this process) that raises it is run again in turn, where ``isolated`` reports it."""
    with budget.case():
        out = run()
    over = interrupted()
    if over is not None:
        raise over
    return out


def _share_ahead(kernel: Kernel, later: list[BoundCase], first: dict, exported: dict[str, list[Finding]],
                 roots: SharedRoots, new: list[str], solver: Solver, options: Options,
                 budget: Budget) -> dict[str, tuple[CaseResult, list[Finding]]]:
    """With --jobs, once cases ``new`` explored their violating first guards in full: every later case expected
    to share their regions (``will_share``) runs whole, in parallel, as it would run in turn. Such a case
    changes nothing another case reads (only a case that explores its guard in full adds regions), so its
    result is the same in any order; one that did not share as expected is run again in turn."""
    from ..trace.parallel import map_cases

    expected = {c.id: r for c in later for r in new if will_share(c, first.get(c.id), roots, r)}
    cases = [c for c in later if c.id in expected]
    one = dataclasses.replace(options, jobs=1)  # no workers of workers

    def ran_as_expected(v: object) -> bool:
        return isinstance(v, _Cut) or (isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], CaseResult)
                                       and v[0].shared_with == expected.get(v[0].case))

    return map_cases(lambda c: _run_case(kernel, c, solver, one, roots, first.get(c.id), exported.get(c.id)),
                     cases, options.jobs, valid=ran_as_expected, warm=False,
                     within=functools.partial(_budgeted, budget), caught=_cut)


@dataclass(frozen=True)
class _Cut:
    """A case whose time budget ran out while it ran ahead of its turn (in a worker, or in this process): it
    is reported cut short in turn, not run again for a second budget."""

    scope: str
    seconds: float

    def over(self) -> OverBudget:
        return OverBudget(self.scope, self.seconds)


def _cut(exc: Exception) -> _Cut | None:
    """``map_cases``' ``caught``: the time budget that ran out in a case run ahead (the timer's exception may
    come out as torch's own, ``interrupted``); None for anything else, which the case's own turn sees again."""
    over = over_budget(exc)
    return _Cut(over.scope, over.seconds) if over is not None else None


def _excluded_rejects(contract: Contract, kernel: Kernel, solver: Solver,
                      options: Options) -> list[tuple[str, Callable[[], tuple[CaseResult, list[Finding]]]]]:
    """The cases a ``[[rejects]]`` takes out of the domain whole, each checked for its regions only (SC021):
    per case, its id and the function that checks it, giving a result (no paths) and its findings, so that
    every report format lists them as cases."""
    return [(case.id, functools.partial(_excluded_reject_case, kernel, case, solver, options))
            for case in contract.excluded_reject_cases()
            if not options.cases or any(s in case.id for s in options.cases)]


def _excluded_reject_case(kernel: Kernel, case: BoundCase, solver: Solver,
                          options: Options) -> tuple[CaseResult, list[Finding]]:
    from .rejects import reject_obligations

    if all(r.kind == "dispatcher-limit" for r in case.rejects):  # no obligation: nothing is checked
        return (CaseResult(case.id, Verdict.PASS, skipped=DISPATCHER_ONLY), [])
    cache: dict = {}
    try:
        found = reject_obligations(kernel, case, solver, options.max_traces, cache)
    except NotApplicable as why:
        return CaseResult(case.id, Verdict.PASS, skipped=str(why)), []
    return CaseResult(case.id, verdict_of(found), traces=len(cache)), found


def isolated(case_id: str, budget: Budget,
             check: Callable[[], tuple[CaseResult, list[Finding]]]) -> tuple[CaseResult, list[Finding]]:
    """One case checked on its own: a bug in shapecheck there becomes the case's SC023 finding (with its
    traceback), and its time budget running out the case's SC005 finding; either way the other cases still
    run and report. Bad input (``UserError``, exit 2) and the user's interrupt go through."""
    try:
        return _budgeted(budget, check)
    except OverBudget as over:
        return _cut_short_case(case_id, over)
    except UserError as err:
        if not _unbound(err):
            raise
        return CaseResult(case_id, Verdict.ERROR, skipped=f"internal error: {type(err).__name__}"), [internal_error(case_id, err)]
    except Exception as err:  # noqa: BLE001 - isolation: a bug in one case never loses the others
        rang = interrupted()
        if rang is not None:  # torch turned the timer's exception into its own (a RuntimeError)
            return _cut_short_case(case_id, rang)
        return CaseResult(case_id, Verdict.ERROR, skipped=f"internal error: {type(err).__name__}"), [internal_error(case_id, err)]


def _unbound(err: UserError) -> bool:
    """An expression evaluated at a point that lacks one of its names: the loader checked that every name is a
    dim, so the point is shapecheck's (a bug: SC023 for the case, the others still run), not the contract's
    (hunt 54: a point of the arguments' dims alone, for an output that names a dim only the domain has)."""
    return isinstance(err, ExprError) and "unbound name" in str(err)


def _cut_short_case(case_id: str, over: OverBudget) -> tuple[CaseResult, list[Finding]]:
    return (CaseResult(case_id, Verdict.INCONCLUSIVE, skipped=f"cut short: {over}"),
            [Finding(code=RuleCode.INCONCLUSIVE, case=case_id, expr="time budget", counterexample={},
                     message=f"{over} before the case was checked: nothing is proved in this case "
                     "(raise --timeout; the z3 timeout per query is --timeout-ms)")])


def internal_error(case_id: str, err: BaseException) -> Finding:
    """The SC023 finding of a bug in shapecheck while it checked ``case_id``."""
    import traceback

    what = f"{type(err).__name__}: {said(err)}".splitlines()[0] if said(err) else type(err).__name__
    return Finding(code=RuleCode.INTERNAL_ERROR, case=case_id, expr=type(err).__name__, counterexample={},
                     message=f"internal error in this case (a bug in shapecheck, please report it): {what}; nothing "
                     "is known about the case. The traceback is in the JSON report, and on stderr with "
                     "SHAPECHECK_DEBUG=1 or --debug",
                     traceback="".join(traceback.format_exception(err)))


def _not_run(case: BoundCase, budget: Budget) -> CaseResult:
    return CaseResult(case.id, Verdict.INCONCLUSIVE, skipped=f"not checked: the run's time budget ({budget.run_s:g} s, "
                      "--timeout run=S) ran out before this case")


def _run_over(budget: Budget, selected: list[BoundCase], done: int) -> Finding:
    return Finding(code=RuleCode.INCONCLUSIVE, case="*", expr="time budget", counterexample={},
                     message=f"the run's time budget ({budget.run_s:g} s, --timeout run=S) ran out after {done} of "
                     f"{len(selected)} cases: the other {len(selected) - done} were not checked, nothing is proved "
                     "there")


def _cut_short(result: CaseResult) -> bool:
    """Whether the case stopped before it was checked (a bug in shapecheck, or the time budget)."""
    return result.verdict is Verdict.ERROR or result.skipped.startswith(("cut short", "not checked", "crashed"))


def _confirm_exports(contract, kernel, results, violations, solver, options):
    from .._torch import core as C
    from ..contract.find import normalize_op
    from ..contract.model import bind_case
    from .export import ExportResult, confirm

    try:
        op = kernel.op if kernel.op is not None else C.resolve_op(normalize_op(contract.op))
    except UnknownOpError:  # a --meta function of an op torch does not know: there is nothing to export
        why = f"torch {C.TORCH_VERSION} has no operator {contract.op} to export (the kernel is a --meta function)"
        return [replace(r, export=ExportResult(False, None, None, why)) if not r.skipped else r for r in results]
    cases = {c.id: c for c in contract.cases()}
    sample = export_sample([cases[r.case] for r in results if r.verdict == Verdict.PASS and not r.skipped
                            and r.case in cases], options.export_sample)
    rejected = {c.id for c in contract.excluded_reject_cases()}  # no domain point: nothing for export to run
    out = []
    for r in results:
        wanted = (r.verdict != Verdict.PASS or r.case in sample) and r.case not in rejected
        if wanted and not r.skipped:
            case = cases.get(r.case) or bind_case(contract, {})
            assert case is not None  # a case that ran is a case of the contract
            mine = [v for v in violations if v.case == r.case]
            x = confirm(case, r, mine, kernel, op, solver)
            r = replace(r, export=x)
            if x.agrees is False and x.explanation.startswith("not explained"):
                violations.append(_unexplained(r, x))
        out.append(r)
    return out


def _unexplained(r: CaseResult, x: ExportResult) -> Finding:
    """A disagreement with torch.export (``x``, the case's) that no established cause explains: shapecheck's
    verdict on the case is not one to bet on, so the run is inconclusive (SC005), never a pass or a plain fail."""
    said = "succeeds" if x.succeeded else "fails"
    return Finding(code=RuleCode.INCONCLUSIVE, case=r.case, expr="torch.export disagrees", counterexample=dict(x.example or {}),
                     message=f"torch.export(strict=True) {said} on this case, shapecheck says {r.verdict.value}, and "
                     f"no established cause explains the difference ({x.explanation}); at {x.example}")


def export_sample(passing: list[BoundCase], least: int) -> set[str]:
    """The passing cases to export: every value of every choice at least once (an index tensor's rank, a
    mask kind), then the first ones up to ``least``."""
    chosen: list[str] = []
    covered: set[tuple] = set()
    for case in passing:
        new = {(k, repr(v)) for k, v in case.values.items()} - covered
        if new:
            chosen.append(case.id)
            covered |= new
    for case in passing:
        if len(chosen) >= least:
            break
        if case.id not in chosen:
            chosen.append(case.id)
    return set(chosen)


def verify_op(op: str, *, contract: str | None = None, source: KernelSource | None = None, meta: str | None = None,
              meta_source: str | None = None, options: Options = Options()) -> Report:
    """The Python API behind ``shapecheck verify op``. The kernel comes from ``source``, or from ``meta``
    (``FILE.py:FUNC``) / ``meta_source`` (``FILE.py``) as on the command line, else the installed torch."""
    from ..kernel.load import load_target

    c, kernel = load_target(op, contract, source or sources.from_options(meta, meta_source))
    return verify_contract(c, kernel, options)


def explore_op(op: str, *, contract: str | None = None, source: KernelSource | None = None, meta: str | None = None,
               meta_source: str | None = None, options: Options | None = None) -> Report:
    """``verify_op`` with every meta-kernel path of every case mapped: each ``report.cases[i].path_map`` is a
    ``prove.pathmap.PathMap``."""
    opts = replace(options or Options(max_traces=32), explore=True)
    return verify_op(op, contract=contract, source=source, meta=meta, meta_source=meta_source, options=opts)
