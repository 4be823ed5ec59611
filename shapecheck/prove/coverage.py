"""Where nothing is proved, said so (never a pass): a region of a case's domain no finished trace reached
(``unexplored``), a part of it where no contract path's ``when`` holds (``uncovered``), and a contract path no
case reaches (``unreachable_paths``, SC006)."""

from __future__ import annotations

from ..contract.model import BoundCase, Contract
from ..findings import Finding, PathStatus
from ..logic import expr as E
from ..logic.solver import Sat, Solver, restrict
from ..options import VerifyOptions as Options
from ..result.report import CaseResult
from ..rules import RuleCode
from .explore import CaseRun
from .obligations import path_name


def unexplored(run: CaseRun, findings: list[Finding], solver: Solver, options: Options) -> list[Finding]:
    """Nothing is proved where no finished trace reached: without a failure, that is inconclusive (SC005). A
    failure the contract accepts (``[[suppress]]``) is no failure here: the run would pass with it."""
    if _fails(run.case, findings):
        return []
    union = E.disj([E.conj(leaf.pc) for leaf in run.leaves])
    rest = solver.satisfiable([run.case.domain, E.negate(union)])
    if rest.sat is Sat.UNSAT:
        return []
    why = (f"exploration stopped at the trace bound ({options.max_traces} traces, --max-traces)" if run.truncated
           else "part of the domain has no finished trace")
    point = restrict(solver.small_model([run.case.domain, E.negate(union)]), [d.name for d in run.case.dims])
    return [Finding(code=RuleCode.INCONCLUSIVE, case=run.case.id, path=None, expr="unexplored region", dims=(),
                    location=None, counterexample=point,
                    message=f"{why}: nothing is proved there, e.g. at the example point")]


def uncovered(case: BoundCase, solver: Solver, options: Options) -> list[Finding]:
    """No output is checked where no contract path holds (the paths' ``when`` leave part of the case's domain
    out, or hold nowhere): inconclusive (SC005), never a pass, whatever else the case found (a property of the
    contract, not of the kernel: a failure the contract accepts must not hide it)."""
    union = E.disj([p.when for p in case.paths if not options.eras or p.era in options.eras])
    rest = solver.satisfiable([case.domain, E.negate(union)])
    if rest.sat is Sat.UNSAT:
        return []
    if rest.sat is Sat.UNKNOWN:
        return [Finding(code=RuleCode.INCONCLUSIVE, case=case.id, path=None, expr="no contract path", dims=(),
                        location=None, counterexample={},
                        message=f"z3 could not decide whether the contract's paths cover the case's domain "
                                f"({rest.reason}): the outputs may be checked nowhere in part of it")]
    point = restrict(solver.small_model([case.domain, E.negate(union)]), case.point_dims)
    return [Finding(code=RuleCode.INCONCLUSIVE, case=case.id, path=None, expr="no contract path", dims=(),
                    location=None, counterexample=point,
                    message="no path of the contract holds in part of the case's domain (every path's `when` is "
                            "false there): no output is checked there, e.g. at the example point")]


def _fails(case: BoundCase, findings: list[Finding]) -> bool:
    """Whether a finding fails the run after the contract's suppressions."""
    from ..contract import suppressions
    from ..rules import FAILING

    live = suppressions.in_force(case.contract.suppressions)
    return any(v.code in FAILING and not any(suppressions.matches(s, v) for s in live) for v in findings)


def unreachable_paths(contract: Contract, results: list[CaseResult], options: Options) -> list[Finding]:
    """SC006 for a contract path whose precondition holds in no case: a contract smell, never a pass."""
    checked = [r for r in results if not r.skipped]
    out = []
    for p in contract.paths:
        if options.eras and p.era not in options.eras:
            continue
        name = path_name(p)
        statuses = [s.status for r in checked for s in r.paths if s.path == name]
        if statuses and all(s is PathStatus.UNREACHABLE for s in statuses):
            out.append(Finding(code=RuleCode.UNREACHABLE_PATH, case="*", path=name, expr=E.to_text(p.when), dims=(), location=None, counterexample={},
                                 message=f"the precondition of path {name} holds for no input of any case"))
    return out


def empty_rejects(contract: Contract, solver: Solver) -> list[Finding]:
    """SC006 for a ``[[rejects]]`` region that holds for no input of any case (hunt 42: ``C == 0`` with C from 1
    was accepted in silence, while a path no case reaches is SC006): its check proves nothing."""
    regions: dict[str, list] = {}
    for case in (*contract.cases(), *contract.excluded_reject_cases()):
        for r in case.rejects:
            regions.setdefault(r.id, []).append(r)
    out = []
    for rid, bound in regions.items():
        if all(solver.satisfiable([r.when]).sat is Sat.UNSAT for r in bound):
            r = bound[0]
            out.append(Finding(code=RuleCode.UNREACHABLE_PATH, case="*", path=r.pid, expr=r.text or E.to_text(r.when),
                               dims=(), location=None, counterexample={},
                               message=f"the [[rejects]] region {rid} holds for no input of any case (the dims' "
                                       "ranges leave it empty): it checks nothing"))
    return out

