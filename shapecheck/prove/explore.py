"""Exploring one case: trace the kernel, and at every guard the domain does not decide, report it when it
restricts a dynamic dim and trace again under each side, until every finished trace (a ``Leaf``) is known.

The state of one case's exploration is a ``CaseRun``; the leaf and output obligations are then discharged
over its leaves (``obligations``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from .._torch.core import AssumptionRejected
from ..contract.model import BoundCase
from ..findings import Finding, PathStatus
from ..kernel.sources import Kernel, NotApplicable
from ..logic import expr as E
from ..logic.solver import Decision, Sat, Solver, restrict
from ..result.report import PathCheck
from ..rules import RuleCode
from ..trace import isolate
from ..trace.run import (
    Failed,
    Fallback,
    Finished,
    Guarded,
    Trace,
    as_guard,
    guard_dims,
    guard_value_at,
    trace_case,
)
from . import budget
from .fallback_asserts import aside
from .obligations import Kind, Leaf, Obligation, ShownObligation, leaf_obligations, probe_points, show
from .torch_decides import TorchView, settled_guard


@dataclass
class CaseRun:
    case: BoundCase
    leaves: list[Leaf] = field(default_factory=list)
    violations: list[Finding] = field(default_factory=list)
    traces: int = 0
    truncated: bool = False
    paths: list[PathCheck] = field(default_factory=list)
    shared_with: str = ""
    # every trace made, by its assumptions (``pc_key``): a trace does not depend on the domain, so the
    # [[rejects]] regions of the case (``rejects``) reuse them
    trace_cache: dict[tuple[str, ...], Trace] = field(default_factory=dict)
    obligations: list[ShownObligation] = field(default_factory=list)  # discharged, with --show-obligations


@dataclass
class SharedRoots:
    """The default mode's shortcut, shared by the cases of one contract as they run in turn: ``guards``: a first
    violating guard (its text and kernel line) -> the cases that explored it in full; ``leaves``: such a case's
    id -> the regions of its finished traces, whose splits a later case with the same first guard takes as it
    asks them."""

    guards: dict[tuple[str, tuple[str, int] | None], list[str]] = field(default_factory=dict)
    leaves: dict[str, list[list[E.Node]]] = field(default_factory=dict)
    signature: dict[str, tuple[str, tuple[str, int] | None]] = field(default_factory=dict)  # root -> its guard


def signature(t: Guarded) -> tuple[str, tuple[str, int] | None] | None:
    """A first guard as the shortcut matches it: its text and kernel line (None: untranslated)."""
    if t.guard is None:
        return None
    return E.to_text(t.guard), (t.loc.file, t.loc.line) if t.loc else None


def will_share(case: BoundCase, first: object, roots: SharedRoots, root: str) -> bool:
    """Whether ``case``, whose unassumed trace is ``first``, is expected to share the regions of ``root`` (a case
    that explored its violating first guard in full): its first trace stops at the same guard, and its dims are
    those the regions name. A guess, made ahead of the case's own run, which decides."""
    regions = roots.leaves.get(root)
    return (regions is not None and isinstance(first, Guarded) and signature(first) == roots.signature.get(root)
            and own_regions(case, regions))


def pc_key(pc: Sequence[E.Node]) -> tuple[str, ...]:
    """The key of a trace's assumptions in ``CaseRun.trace_cache``."""
    return tuple(E.to_text(n) for n in pc)


def dynamic(case: BoundCase, names: set[str]) -> bool:
    return any(d.dynamic for d in case.contract.dims if d.name in names)


def explore_case(kernel: Kernel, case: BoundCase, solver: Solver, options,
                 roots: SharedRoots | None = None, first: Trace | NotApplicable | None = None) -> CaseRun:
    """``first``: the case's unassumed trace, when it was already made (parallel.prefetch_roots).
    ``roots``: the default mode's shortcut (``SharedRoots``); None: none (whole cases in parallel workers)."""
    if isinstance(first, NotApplicable):
        raise first
    run = _CaseExplorer(kernel, case, solver, options, roots).run(first)
    if run.truncated and run.shared_with:
        # past the trace bound on the earlier case's splits (hunt 58 B4: 64 traces shared, 20 alone): it is
        # explored guard by guard, as --full explores it
        spent = run.traces
        run = _CaseExplorer(kernel, case, solver, options, None).run(first)
        run.traces += spent
    return run


class _CaseFindings:
    """One case's findings, each kept once (by rule, expression, line and path)."""

    def __init__(self, case: BoundCase, solver: Solver):
        self.case, self.solver = case, solver
        self.state = CaseRun(case)
        self.dims = case.point_dims
        self.premises = [case.domain]
        self.seen: set[tuple] = set()

    @staticmethod
    def key(code, expr, loc, path=None) -> tuple:
        return (code, expr, (loc.file, loc.line) if loc else None, path)

    def add(self, v: Finding) -> None:
        k = self.key(v.code, v.expr, v.location, v.path)
        if k not in self.seen:
            self.seen.add(k)
            self.state.violations.append(v)

    def point(self, conds: list[E.Node]) -> dict[str, int]:
        return restrict(self.solver.small_model(conds), self.dims)

    def inconclusive(self, expr: str, loc, why: str) -> None:
        self.add(Finding(code=RuleCode.INCONCLUSIVE, case=self.case.id, expr=expr, location=loc, counterexample={}, message=why))


class _CaseExplorer(_CaseFindings):
    """A work list of assumption sets (path conditions); each is traced once."""

    def __init__(self, kernel: Kernel, case: BoundCase, solver: Solver, options, roots: SharedRoots | None):
        super().__init__(case, solver)
        self.kernel, self.options, self.roots = kernel, options, roots
        self.work: list[list[E.Node]] = [[]]
        self.view = TorchView(case, solver)
        self.is_root = False  # the case explored a violating first guard in full: its regions go in ``roots``
        self.traced: dict[tuple[str, ...], Trace] = {}  # the shared regions' traces, made by workers (--jobs)
        # regions of ``traced`` that an earlier trace stands for, each with the region that trace was made in
        self.reused: dict[tuple[str, ...], list[E.Node]] = {}
        # the default mode's shortcut: the splits of the earlier case's regions, whose sides a trace takes as it
        # goes (``_answer``); ``taken``: the sides the last trace took, which its region gains
        self.splits: set[E.Node] = set()
        self.taken: list[E.Node] = []

    # -- the loop ------------------------------------------------------------------------------------------
    def run(self, first: Trace | None) -> CaseRun:
        run = self.state
        while self.work:
            if run.traces >= self.options.max_traces:
                run.truncated = True
                break
            budget.check()  # --timeout: a case over its time budget stops here
            pc = self.work.pop()
            key = pc_key(pc)
            made: Trace | None = None
            own = True  # a trace made for this region (an earlier one standing for it is not counted)
            if not pc and first is not None:
                made, first = first, None
            elif key in self.traced:
                made = self.traced.pop(key)
                if key in self.reused:  # an earlier trace stands for this side, unless it stands for no point
                    where = self.reused.pop(key)
                    own = contradicted_anew(made, self.premises + where, self.premises + pc, self.solver)
                    made = None if own else made
            if made is None:
                made = self._trace(pc)
                if made is None:
                    continue
                pc = pc + self.taken
            t = made
            run.traces += own
            run.trace_cache[pc_key(pc)] = t
            pending = self._as_guard_or_recorded(t, pc)
            if pending is None:
                continue
            queued = len(self.work)
            if self.guarded(pending, pc) == "stop":
                break
            if isinstance(t, (Finished, Failed)):
                self._reuse(t, pending, pc, self.work[queued:])
        if self.is_root and not run.truncated and self.roots is not None:  # (is_root only where there are roots)
            self.roots.leaves[self.case.id] = [list(leaf.pc) for leaf in run.leaves]
        return run

    def _trace(self, pc: list[E.Node]) -> Trace | None:
        """The kernel traced on the region ``pc``; None where torch refuses its assumptions (reported)."""
        isolate.note(("trace", self.case.id, pc))  # a crash in it is reported with its region
        self.taken = []
        try:
            return trace_case(self.kernel, self.case, pc, track_return=self.options.explore
                              or getattr(self.options, "show_obligations", False),  # the return's line
                              answer=functools.partial(self._answer, pc) if self.splits else None)
        except AssumptionRejected as why:
            self.rejected_region(pc, str(why))
            return None

    def _answer(self, pc: list[E.Node], guard: E.Node) -> bool | None:
        """The side of a split of the earlier case's regions that a trace on ``pc`` asks (the sides it took so
        far added), where the region decides it or both sides have points: the true side, the other queued, as
        exploring it would; None for any other guard (the trace stops there and it is explored)."""
        if guard not in self.splits and E.negate(guard) not in self.splits:
            return None
        verdict = self.solver.decide(self.premises + pc + self.taken, guard)[0]
        if verdict not in (Decision.TRUE, Decision.FALSE, Decision.BOTH):
            return None
        if verdict is Decision.BOTH:
            self.work.append(pc + self.taken + [E.negate(guard)])
        self.taken.append(E.negate(guard) if verdict is Decision.FALSE else guard)
        return verdict is not Decision.FALSE

    def _reuse(self, t: Finished | Failed, fallback: Guarded, pc: list[E.Node], queued: list[list[E.Node]]) -> None:
        """``t`` stands for the side of its fallback that torch assumed (``assumed_side``), where that side is
        queued: it is not traced again."""
        side = assumed_side(pc, fallback)
        if side is not None and any(pc_key(w) == pc_key(side) for w in queued) and pc_key(side) not in self.traced:
            self.traced[pc_key(side)] = t
            self.reused[pc_key(side)] = pc

    def rejected_region(self, pc: list[E.Node], why: str) -> None:
        """torch refused the region's assumptions: nothing to check where z3 finds the region empty on the
        domain, else the region is not checked (SC005), never passed."""
        if self.solver.satisfiable([self.case.domain, *pc]).sat is Sat.UNSAT:
            return
        region = " and ".join(E.to_text(c) for c in pc) or "true"
        self.inconclusive(region, None, f"torch refuses to assume the region {region} ({why}), which z3 does not "
                                        "find empty: the region is not checked")

    def failed(self, t: Failed, pc: list[E.Node]) -> None:
        if t.missing_name:
            # a name the kernel's environment lacks (a candidate written for another torch, whose import the
            # file would have run, or which calls a torch API the installed torch lacks): nothing is known
            # about the shapes, but nothing passes
            self.inconclusive(t.error, t.loc, f"the kernel cannot run here: {t.error} (its environment does "
                              "not define the name; with --meta-source, neither the file's own functions nor the "
                              "installed torch's meta-registration namespace do: written for another torch?)")
            return
        self.add(Finding(code=RuleCode.KERNEL_ERROR, case=self.case.id, expr=t.error, location=t.loc,
                           counterexample=self.point(self.premises + pc), message=f"the kernel raised {t.error}"))

    def guarded(self, t: Guarded, pc: list[E.Node]) -> str | None:
        if t.helper and (t.guard is None or t.is_specialization):
            self.inconclusive(t.guard_raw, t.loc, f"torch's own helper assumed {t.guard_raw} is {t.fallback_value} "
                              "(guard_or_false/guard_or_true) and shapecheck cannot explore the other side")
            return None
        if t.guard is None:
            found = refute_untranslated(self.case, t, self.solver, self.premises + pc)
            self._show(Kind.VALUE if t.is_specialization else Kind.GUARD, t.guard_raw, guard_dims(t), pc, t.loc,
                       PathStatus.UNKNOWN if found is None else PathStatus.REFUTED)
            if found is not None and self.key(found.code, found.expr, found.location) not in self.seen:
                self.add(found)
            elif found is None:
                self.inconclusive(t.guard_raw, t.loc, f"cannot translate the guard {t.guard_raw}")
            return None
        if t.is_specialization:
            self._specialization(t, pc)
            return None
        text = E.to_text(t.guard)
        if t.guard in pc or E.negate(t.guard) in pc:
            self.inconclusive(text, t.loc, f"torch raised the guard {text} again under the assumption that decides it")
            return None
        verdict, pos, neg = self.solver.decide(self.premises + pc, t.guard)
        gdims = E.free_names(t.guard)
        if verdict in (Decision.TRUE, Decision.FALSE):
            found = settled_guard(self.view, t, pc, verdict is Decision.TRUE)
            self._show(Kind.GUARD, text, gdims, pc, t.loc, PathStatus.PROVED if found is None else PathStatus.REFUTED,
                       settled=verdict is Decision.TRUE)
            if found is not None:
                self.add(found)
        elif verdict is Decision.UNKNOWN:
            self._show(Kind.GUARD, text, gdims, pc, t.loc, PathStatus.UNKNOWN)
        if verdict is Decision.TRUE:
            self.work.append(pc + [t.guard])
        elif verdict is Decision.FALSE:
            self.work.append(pc + [E.negate(t.guard)])
        elif verdict is Decision.UNKNOWN:
            self.inconclusive(text, t.loc, f"z3 could not decide the guard {text} ({pos.reason or neg.reason})")
        elif verdict is Decision.BOTH:
            return self._branch(t, pc)
        return None

    def _show(self, kind: Kind, text: str, dims: set[str] | tuple[str, ...], pc: list[E.Node], loc,
              status: PathStatus, settled: bool | int | None = None, why: str = "") -> None:
        """With --show-obligations: a guard's (or a needed value's) obligation, as exploration discharged it.
        An obligation exists only for a condition on a dynamic dim: that it holds everywhere or nowhere on the
        trace's region (a guard, where the contract is guard-free), or that the value is one constant there."""
        if not getattr(self.options, "show_obligations", False) or not dynamic(self.case, set(dims)):
            return
        if kind is Kind.GUARD and not self.case.contract.guard_free:
            return  # the contract allows branches: a guard is a split of the region, not an obligation
        names = sorted(d for d in dims if dynamic(self.case, {d}))
        if kind is Kind.GUARD:
            side = "" if settled is None else f" (it is {str(settled).lower()} there)"
            what = f"guard {text} is decided by the region{side}" if not why else f"guard {text}: {why}"
        else:
            side = "" if settled is None else f" ({settled} at the least point)"
            what = f"the value of {text} is one constant on the region{side}"
        ob = Obligation(tuple(self.premises + pc), kind=kind, what=what, line=loc,
                        key=", ".join(f"dims.{n}" for n in names))
        self.state.obligations.append(show(ob, status))

    def _as_guard_or_recorded(self, t: Trace, pc: list[E.Node]) -> Guarded | None:
        """The guard to explore next; None when ``t`` was recorded: a failure, or a leaf with its obligations."""
        if isinstance(t, Failed):
            pending = unsettled_fallback(t, self.solver, self.premises + pc, self.view, pc, self.add, helpers_only=True)
            if pending is None:
                self.failed(t, pc)
            return pending  # the kernel raised on the side torch's own helper assumed: explore both
        if isinstance(t, Finished):
            pending = unsettled_fallback(t, self.solver, self.premises + pc, self.view, pc, self.add)
            if pending is None:
                leaf = Leaf(pc, t)
                self.state.leaves.append(leaf)
                shown = self.state.obligations if getattr(self.options, "show_obligations", False) else None
                settle = functools.partial(aside, leaf=leaf, case=self.case, solver=self.solver, view=self.view,
                                           kernel=self.kernel)
                for v in leaf_obligations(self.case, leaf, self.solver, shown, settle):
                    self.add(v)
            return pending  # the kernel's guard_or_false/guard_or_true: handled as the guard it is in export
        return t

    def _specialization(self, t: Guarded, pc: list[E.Node]) -> None:
        """The kernel needs the value of ``t.guard``: explore the least point's value, or report SC003 when
        the value varies over a dynamic dim."""
        guard = t.guard
        assert guard is not None  # guarded() reports an untranslated guard before it gets here
        text = E.to_text(guard)
        conds = self.premises + pc
        base = self.solver.satisfiable(conds)
        if base.sat is not Sat.SAT:
            self.inconclusive(text, t.loc, "could not find a point of the domain")
            return
        # the smallest point, not whichever z3 finds first: the value explored is reproducible
        at = self.solver.small_model(conds) or base.model
        value = cast(int, E.evaluate(guard, at or {}))
        differs = E.Cmp("!=", guard, E.Const(value))
        other = self.solver.satisfiable(conds + [differs])
        gdims = tuple(sorted(E.free_names(guard)))
        self._show(Kind.VALUE, text, set(gdims), pc, t.loc, {Sat.UNSAT: PathStatus.PROVED, Sat.UNKNOWN: PathStatus.UNKNOWN}
                   .get(other.sat, PathStatus.REFUTED), settled=value)
        # the value's side, without the values explored before it (implied)
        same = [c for c in pc if not (isinstance(c, E.Cmp) and c.op == "!=" and c.left == guard)] + [
            E.Cmp("==", guard, E.Const(value))]
        if other.sat is Sat.UNSAT:
            self.work.append(same)
        elif other.sat is Sat.UNKNOWN:
            self.inconclusive(text, t.loc, f"z3 could not decide whether {text} is constant ({other.reason})")
        elif not dynamic(self.case, set(gdims)):
            # a value of static dims only, which the kernel may specialise on (docs/contracts.md): each value is
            # explored, this one first, the others at the next trace's least point (hunt 65: the region was
            # dropped, SC005, and a kernel wrong at one value passed as unexplored as the right one)
            self.work.append(pc + [differs])
            self.work.append(same)
        elif self.key(RuleCode.VALUE_SPECIALIZATION, text, t.loc) not in self.seen:
            self.add(Finding(code=RuleCode.VALUE_SPECIALIZATION, case=self.case.id, expr=text, node=guard, dims=gdims, location=t.loc,
                               counterexample=self.point(conds + [differs]), witness=restrict(at, self.dims),
                               message=f"the kernel needs the concrete value of {text} (int() or similar): it "
                               f"specialises a dynamic dim"))

    def _from_two(self, guard: E.Node) -> Decision:
        """What z3 says of ``guard`` on the case's domain with every dynamic dim from 2, as export traces (the
        region's own conditions aside: export's one path is not this region's)."""
        ge2: list[E.Node] = [E.Cmp(">=", E.Var(d.name), E.Const(2)) for d in self.case.dims if d.dynamic and d.max >= 2]
        return self.solver.decide(self.premises + ge2, guard)[0]

    def _branch(self, t: Guarded, pc: list[E.Node]) -> str | None:
        """A guard with points on both sides: SC001 when it restricts a dynamic dim; both sides explored."""
        guard = t.guard
        assert guard is not None  # guarded() reports an untranslated guard before it gets here
        text = E.to_text(guard)
        gdims = tuple(sorted(E.free_names(guard)))
        conds = self.premises + pc
        # torch's own helper (broadcasting, layout) assumed one side: both sides are explored, since the trace
        # holds only where the assumption does, but the branch is torch's, not the kernel's
        violating = self.case.contract.guard_free and dynamic(self.case, set(gdims)) and not t.helper
        # a guard torch's helper (or a sub-op's C++ kernel) asked for, reached from the kernel's line: SC022, only
        # where export could install it, as for the export-style run's (prove.helper_guards): with both sides on
        # the domain with sizes from 2 (the region's own conditions aside: export's one path is not this
        # region's). One that only sizes 0 or 1 decide (a contiguity check's ``Co > 1``) is no guard of export's;
        # the kernel's own guards stay SC001 at 0 and 1 too
        # A guard_or_* of the kernel's own line (a C++ check behind ``.contiguous()``, as diag_embed's) likewise:
        # the unbacked trace takes its fallback and installs nothing, so the guard is export's alone; one that
        # sizes from 2 settle is none of export's (torch decides it, or it reads two dims and export accepts it),
        # unless torch cannot prove it over one dim (SC016)
        if violating and (t.origin or t.fallback_value is not None):
            two = self._from_two(guard)
            if two is not Decision.BOTH:
                violating = False
                found = settled_guard(self.view, t, [], two is Decision.TRUE) \
                    if not t.origin and two in (Decision.TRUE, Decision.FALSE) else None
                if found is not None:
                    self.add(found)
        if self.case.contract.guard_free and not t.helper:  # shown as discharged, after export's sizes had their say
            self._show(Kind.GUARD, text, set(gdims), pc, t.loc, PathStatus.REFUTED if violating else PathStatus.PROVED,
                       why="" if violating else "both sides explored; with sizes from 2, as torch.export traces, "
                       "it is settled, so no guard restricts the range")
        code = RuleCode.GUARD_IN_TORCH_HELPER if t.origin else RuleCode.GUARD_ON_DYNAMIC_DIM
        if violating and self.key(code, text, t.loc) not in self.seen:
            via = ("" if t.fallback_value is None else
                   f" (through guard_or_false/guard_or_true: with unbacked sizes torch assumed "
                   f"{t.fallback_value}; with example sizes, as torch.export traces, the call installs a guard)")
            who = f"{t.origin}, reached from the kernel's line," if t.origin else "the kernel"
            self.add(Finding(
                code=code, case=self.case.id, expr=text, node=guard, dims=gdims, location=t.loc,
                counterexample=self.point(conds + [E.negate(guard)]), witness=self.point(conds + [guard]),
                restricts=restriction(self.solver, self.case, conds, guard, gdims),
                message=f"{who} branches on {text}, which does not hold on the whole range of "
                f"{', '.join(gdims)}{via}"))
        # the default mode's shortcut, only where the case's verdict is already fail (its first guard is a
        # violation that an earlier case explored): the case's traces go on through that case's splits
        # (``_answer``), so that every output obligation is checked without exploring them one by one (a guard
        # of its own is still explored); --full explores it guard by guard
        if violating and not pc and self.roots is not None and not (self.options.full or self.options.explore):
            sig = (text, (t.loc.file, t.loc.line) if t.loc else None)
            explored = self.roots.guards.setdefault(sig, [])
            for earlier in explored:
                regions = self.roots.leaves.get(earlier)
                if regions is not None and own_regions(self.case, regions):
                    # each trace takes the sides of that case's splits as the kernel asks them, the other sides
                    # queued: a case that never asks a split is traced once for both its sides
                    self.state.shared_with = earlier
                    self.splits = {c for r in regions for c in r}
                    self.work = [pc + [E.negate(guard)], pc + [guard]]
                    return None
            explored.append(self.case.id)  # explored guard by guard: its regions serve the cases after it
            self.roots.signature[self.case.id] = sig
            self.is_root = True
        # explore both sides: the false side first is popped last
        self.work.append(pc + [E.negate(guard)])
        self.work.append(pc + [guard])
        return None


def assumed_side(pc: list[E.Node], fallback: Guarded) -> list[E.Node] | None:
    """The region ``pc`` on the side of an unsettled fallback (``as_guard``) that torch assumed, or None (a value,
    not a condition). The trace that asked is traced there already: it took that side at every point of ``pc``, and
    each of its other decisions holds on all of ``pc`` (decided there) or is a fallback of its own, explored or
    settled in turn as this one is. So it stands for that side as a trace made there would (the leaves are then
    those whose every fallback the region settles), unless it is ``contradicted_anew`` there. The other side is traced:
    there the kernel may take another branch."""
    if fallback.guard is None or fallback.is_specialization or fallback.fallback_value is None:
        return None
    return pc + [fallback.guard if fallback.fallback_value else E.negate(fallback.guard)]


def contradicted_anew(t: Trace, made: list[E.Node], conds: list[E.Node], solver: Solver) -> bool:
    """Whether a fallback ``t`` took is the other way on the whole region ``conds`` (torch assumed both ``W == 1``
    and ``W != 1`` false where it could decide neither), where the region ``made`` (where ``t`` was traced) does
    not have it so already: ``t`` then stands for no point there. Its layout logic's answers too: a trace made
    there would lay its output out as torch decides it there (avg_pool2d's channels-last output, which the
    answers of the region without the side made contiguous). A fallback its own region contradicts already
    (linalg_pinv's contiguity answer ``max(1, s1) * ... == s1 * ...``, which torch answers false where z3 proves it
    true; 80 of im2col's 224 reuses) is the trace's on every side of its later fallbacks, and is explored on its
    own: a trace made again on such a side takes it the same way."""
    return any(_against(fb, conds, solver) and not _against(fb, made, solver)
               for fb in (*getattr(t, "fallbacks", ()), *getattr(t, "layout_fallbacks", ())))


def _against(fb: Fallback, conds: list[E.Node], solver: Solver) -> bool:
    """Whether ``conds`` decide a fallback's condition the other way from torch's answer."""
    if fb.guard is None or fb.data_dependent or not isinstance(fb.value, bool):
        return False
    return solver.decide(conds, fb.guard)[0] is (Decision.FALSE if fb.value else Decision.TRUE)


def own_regions(case: BoundCase, regions: list[list[E.Node]]) -> bool:
    """Whether every region of the earlier case is a condition on this case's dims. A case whose dims
    differ (a rank choice, an argument absent in this case) cannot be traced under the other case's
    assumptions: it is explored guard by guard."""
    mine = {d.name for d in case.dims}
    return all(E.free_names(n) <= mine for r in regions for n in r)


def refute_untranslated(case: BoundCase, t: Guarded, solver: Solver, conds: list[E.Node]) -> Finding | None:
    """A guard outside the contract language (a float comparison, say) cannot go to z3, but torch's own
    expression can be evaluated at concrete sizes. Two points of the region where it differs prove that the
    kernel branches on (or specialises) a dynamic dim: a violation with two real counterexample points.
    None when no such pair turns up (the caller reports inconclusive)."""
    gdims = tuple(sorted(guard_dims(t)))
    if not gdims or not dynamic(case, set(gdims)) or (not t.is_specialization and not case.contract.guard_free):
        return None
    dims = case.point_dims
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
        return Finding(code=RuleCode.VALUE_SPECIALIZATION, case=case.id, expr=t.guard_raw, dims=gdims, location=t.loc,
                         counterexample=restrict(p2, dims), witness=restrict(p1, dims),
                         message=f"the kernel needs the concrete value of {t.guard_raw} (torch's expression; int() "
                         f"or similar), which is {v1} at the witness and {v2} at the counterexample: it specialises "
                         f"a dynamic dim")
    cex, wit = (p1, p2) if v1 is False else (p2, p1)
    return Finding(code=RuleCode.GUARD_ON_DYNAMIC_DIM, case=case.id, expr=t.guard_raw, dims=gdims, location=t.loc,
                     counterexample=restrict(cex, dims), witness=restrict(wit, dims),
                     message=f"the kernel branches on {t.guard_raw} (torch's expression, outside the contract "
                     f"language: evaluated at the two points, not proved by z3), which is false at the "
                     f"counterexample and true at the witness")


def unsettled_fallback(t: Finished | Failed, solver: Solver, conds: list[E.Node], view: TorchView | None = None,
                       pc: Sequence[E.Node] = (), report=None, helpers_only: bool = False) -> Guarded | None:
    """The first guard_or_* fallback of a trace that export would install as a guard, as a guard trace; None
    when the trace stands as a leaf over its whole region.

    A fallback stands when the region settles it the way torch assumed (and torch decides it too, else SC016
    through ``report``), or when torch decides it that way under export's Dim ranges: export then traces the
    fallback side for every size, and the leaf's outputs are checked on the whole region (the points where the
    condition really holds included). ``helpers_only``: only torch's own helpers' fallbacks (a failed trace:
    where the helper's assumption fails, the kernel may not raise)."""
    for fb in t.fallbacks:
        if (helpers_only and fb.own) or fb.data_dependent:  # export takes a data-dependent one's fallback too
            continue
        verdict = solver.decide(conds, fb.guard)[0] if fb.guard is not None else None
        if verdict is Decision.EMPTY:
            continue
        settled = verdict is (Decision.TRUE if fb.value else Decision.FALSE)
        if not fb.own:  # torch's own helper (broadcasting): both sides are traced, as eager takes either
            if settled:
                continue
            return as_guard(fb)
        if view is None:
            if settled:
                continue
            return as_guard(fb)
        guard = as_guard(fb)
        if settled:
            found = settled_guard(view, guard, list(pc), fb.value)
            if found is not None and report is not None:
                report(found)
            continue
        if fb.expr is not None and _torch_takes(view, fb, list(pc)):
            continue
        return guard
    return None


def _torch_takes(view: TorchView, fb, pc: list[E.Node]) -> bool:
    """Whether torch decides the fallback's condition the way the trace assumed, from export's Dim ranges."""
    from .._torch import static as CS

    try:
        return view.decides(fb.expr, pc) is fb.value
    except CS.TorchCannotSay:
        return False  # explored as the guard it may be


def restriction(solver: Solver, case: BoundCase, premises: list[E.Node], guard: E.Node, gdims: tuple[str, ...]) -> str:
    """'restricts L from [1, 2147483647] to [1, 8]' for a guard on one dim; empty unless the guarded side's
    range really is narrower than the dim's range where the guard is reached (a guard such as ``L % 2 == 0``
    excludes points, not a range)."""
    if len(gdims) != 1:
        return ""
    name = gdims[0]
    lo = solver.extreme(premises + [guard], name, lowest=True)
    hi = solver.extreme(premises + [guard], name, lowest=False)
    lo0 = solver.extreme(premises, name, lowest=True)
    hi0 = solver.extreme(premises, name, lowest=False)
    if None in (lo, hi, lo0, hi0) or (lo, hi) == (lo0, hi0):
        return ""
    return f"restricts {name} from [{lo0}, {hi0}] to [{lo}, {hi}] on the guarded side"
