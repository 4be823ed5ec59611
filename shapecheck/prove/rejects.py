"""The obligation of ``[[rejects]]``: on a runtime-check region the meta kernel must raise too (SC021).

A region lies outside its case's domain, so the domain's exploration says nothing about it. Each region is
explored on its own, as a case whose dims range over the region: the case's arguments, every dim an unbacked
size in its declared range, and z3's premises ``when`` instead of the domain. At a guard the region does not
decide, both sides are traced (a guard there is no finding: the region is not the domain). Each finished
trace is where the kernel accepts the input, on its path condition ``pc``, wherever its own runtime asserts,
range refinements and replacements hold. So the kernel raises on the whole region exactly when, for every
finished trace,

    when /\\ pc /\\ asserts /\\ refinements /\\ replacements

is unsatisfiable; a model of it is a point of the region where the meta kernel accepts the input: SC021 with
that point as counterexample. A trace that raises (a ``torch._check`` whose condition is false for a static
size, an error) rejects its whole ``pc``. Nothing unexplored passes: the trace bound, an untranslated guard
or assert, or a z3 ``unknown`` makes the region SC005.

``dispatcher-limit`` regions have no obligation: the op itself may run there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from .._torch.backed import NegativeSize
from .._torch.core import AssumptionRejected
from ..contract.model import BoundCase, BoundReject
from ..findings import Finding, SourceLoc
from ..kernel.sources import Kernel, NotApplicable
from ..logic import expr as E
from ..logic.solver import Decision, Sat, Solver, restrict
from ..rules import RULES, RuleCode
from ..trace.run import Failed, Finished, Guarded, Trace, trace_case
from .explore import pc_key, unsettled_fallback
from .obligations import _holds

RULE = RuleCode.META_ACCEPTS_REJECTED_INPUT
_NOT_A_REFUSAL = ("data-dependent guard:", "UnsupportedOperatorException", "DynamicOutputShapeException",
                  "DataDependentOutputException", "UnsupportedFakeTensorException")
"""Errors of a trace (``Failed.error`` starts with the exception's name) that are the tracing's limits rather
than the kernel refusing the input: in a reject region they are inconclusive, never a proof that it raises."""


@dataclass
class _Region:
    """The exploration of one reject region in one case."""

    kernel: Kernel
    case: BoundCase
    reject: BoundReject
    solver: Solver
    max_traces: int
    found: list[Finding] = field(default_factory=list)
    traces: int = 0
    accepting: list[tuple[list[E.Node], Finished]] = field(default_factory=list)  # (where it accepts, trace)
    points: list[tuple[dict[str, int], Finished]] = field(default_factory=list)  # (a point it accepts, trace)

    @property
    def dims(self) -> list[str]:
        return [d.name for d in self.case.dims]

    def where(self) -> str:
        return f"[[rejects]] {self.reject.id} ({self.reject.text})"

    def inconclusive(self, expr: str, loc: SourceLoc | None, why: str) -> None:
        self.found.append(Finding(code=RuleCode.INCONCLUSIVE, case=self.case.id, path=self.reject.pid, expr=expr,
                                    location=loc, counterexample={}, message=f"{self.where()}: {why}"))

    def run(self, cache: dict[tuple[str, ...], Trace]) -> None:
        premises = [self.reject.when]
        base = self.solver.satisfiable(premises)
        if base.sat is Sat.UNSAT:
            return  # the region is empty in this case: nothing to reject
        if base.sat is Sat.UNKNOWN:
            self.inconclusive(E.to_text(self.reject.when), None, f"z3 could not decide the region ({base.reason})")
            return
        least = self.solver.small_model(premises)
        if least is not None and self._accepts_at(restrict(least, self.dims)):
            return  # a concrete counterexample: no trace needed
        work: list[list[E.Node]] = [[]]
        while work:
            if self.traces >= self.max_traces:
                self.inconclusive("unexplored region", None, f"exploration stopped at the trace bound "
                                  f"({self.max_traces} traces, --max-traces): nothing is proved there")
                return
            pc = work.pop()
            key = pc_key(pc)
            t = cache.get(key)
            if t is None:
                try:
                    t = cache[key] = trace_case(self.kernel, self.case, pc)
                except AssumptionRejected as why:  # torch finds the region empty: z3 must agree, else unchecked
                    if self.solver.satisfiable(premises + pc).sat is Sat.UNSAT:
                        continue
                    region = " and ".join(E.to_text(c) for c in pc) or "true"
                    self.inconclusive(region, None, f"torch refuses to assume the region {region} ({why}), which "
                                      "z3 does not find empty: whether the kernel rejects it is not proved")
                    return
            self.traces += 1
            if isinstance(t, Failed):
                if t.missing_name or t.error.startswith(_NOT_A_REFUSAL):
                    # not the kernel refusing the input: a name it lacks, a guard torch did not expose, or
                    # what fake tensors cannot do (which says nothing about the input)
                    self.inconclusive(t.error, t.loc, f"the kernel cannot be traced here: {t.error}")
                    return
                continue  # the kernel raises on the whole of pc: rejected
            if isinstance(t, Finished):
                pending = unsettled_fallback(t, self.solver, premises + pc)
                if pending is None:
                    if self._accepts(t, premises + pc) == "stop":
                        return
                    if self.accepting or self.points:
                        break  # one counterexample per region and case
                    continue
                t = pending
            if not self._branch(t, premises + pc, pc, work):
                return
        self._report()

    def _branch(self, t: Guarded, conds: list[E.Node], pc: list[E.Node], work: list[list[E.Node]]) -> bool:
        """Queue the sides of a guard the region does not decide; False when exploration cannot go on."""
        if t.guard is None:
            self.inconclusive(t.guard_raw, t.loc, f"cannot translate the guard {t.guard_raw}")
            return False
        text = E.to_text(t.guard)
        if t.guard in pc or E.negate(t.guard) in pc:
            self.inconclusive(text, t.loc, f"torch raised the guard {text} again under the assumption that decides it")
            return False
        if t.is_specialization:
            at = self.solver.small_model(conds)
            if at is None:
                self.inconclusive(text, t.loc, "could not find a point of the region")
                return False
            value = E.Const(cast(int, E.evaluate(t.guard, at)))
            work.append(pc + [E.Cmp("!=", t.guard, value)])
            work.append(pc + [E.Cmp("==", t.guard, value)])
            return True
        verdict, pos, neg = self.solver.decide(conds, t.guard)
        if verdict is Decision.UNKNOWN:
            self.inconclusive(text, t.loc, f"z3 could not decide the guard {text} ({pos.reason or neg.reason})")
            return False
        if verdict is Decision.BOTH:
            # the side holding the region's least point is explored first (the last pushed is popped first):
            # the first trace that accepts is then where the least counterexample usually lies
            at = self.solver.small_model(conds)
            first = t.guard if at is not None and E.evaluate(t.guard, at) is True else E.negate(t.guard)
            work.append(pc + [E.negate(first)])
            work.append(pc + [first])
        elif verdict is Decision.FALSE:
            work.append(pc + [E.negate(t.guard)])
        elif verdict is Decision.TRUE:
            work.append(pc + [t.guard])
        return True

    def _accepts(self, t: Finished, conds: list[E.Node]) -> str | None:
        """Where the finished trace accepts a point of ``conds``, its least such point joins ``self.accepting``;
        "stop" when that cannot be decided (SC005 is recorded)."""
        accepted = list(conds)
        untranslated = []
        for a in t.asserts:
            if a.expr is not None:
                accepted.append(a.expr)
            elif a.sym is not None:
                untranslated.append(a)
            else:
                self.inconclusive(a.raw, a.loc, f"cannot translate the runtime assert {a.raw}")
                return "stop"
        for name, lo, hi in t.refinements:
            accepted += [E.Cmp(">=", E.Var(name), E.Const(lo))] if lo is not None else []
            accepted += [E.Cmp("<=", E.Var(name), E.Const(hi))] if hi is not None else []
        for name, node, raw in t.replacements:
            if node is None:
                self.inconclusive(raw, None, f"cannot translate the replacement {name} -> {raw}")
                return "stop"
            accepted.append(E.Cmp("==", E.Var(name), node))
        result = self.solver.satisfiable(accepted)
        if result.sat is Sat.UNSAT:
            return None
        if result.sat is Sat.UNKNOWN:
            self.inconclusive(E.to_text(self.reject.when), t.returned_at, f"z3 could not decide whether the "
                              f"kernel accepts part of the region ({result.reason})")
            return "stop"
        if not untranslated:
            self.accepting.append((accepted, t))
            return None
        point = restrict(self.solver.small_model(accepted) or result.model, self.dims)
        checks = [_holds(a.sym)(point) for a in untranslated]
        if any(c is not True for c in checks):
            # an assert outside the contract language that the point does not satisfy: not proved either way
            self.inconclusive(untranslated[0].raw, untranslated[0].loc, "the kernel's runtime assert "
                              f"{untranslated[0].raw} is outside the contract language; whether it rejects the "
                              "whole region is not proved")
            return "stop"
        self.points.append((point, t))
        return None

    def _accepts_at(self, point: dict[str, int]) -> bool:
        """Run the kernel at one point of the region (concrete sizes) as FakeTensorMode and torch.export run it: if
        it returns in both, it accepts that input, and the point is the counterexample (SC021)."""
        try:
            outputs = self._returns_at(point)
        except NotApplicable:  # it cannot be called so: the symbolic exploration decides
            return False
        if isinstance(outputs, str):  # it raises there (it rejects the point): exploration decides
            return False
        shapes = ", ".join("?" if o is None else str(o) for o in outputs)
        r = self.reject
        said = f" with {r.message!r}" if r.message else ""
        self.found.append(Finding(
            code=RULE, case=self.case.id, path=r.pid, expr=r.text, node=r.when,
            dims=tuple(sorted(E.free_names(r.when))), location=self.kernel.definition, counterexample=point,
            fix=RULES[RULE].fix,
            message=f"the runtime raises on {self.where()}{said}, but the meta kernel accepts the input: at the "
                    f"counterexample (the region's least point) it returns {shapes or 'nothing'}"))
        return True

    def _returns_at(self, point: dict[str, int]) -> tuple | str:
        """The kernel at ``point``: its outputs where it returns both as FakeTensorMode runs it (static sizes, in
        torch's slot: FakeTensor's own rule where torch has one, never the meta device's kernel) and as
        torch.export runs it (backed sizes); else what it raised, and in which run. NotApplicable where it cannot
        be called so."""
        from ..trace.fake_run import fake_run
        from .replay import run_at

        run = run_at(self.kernel, self.case, point, follow=False)
        if run.error is not None:
            return f"run as FakeTensorMode runs it (static sizes), it raises {run.error}"
        exported = fake_run(self.kernel, self.case, point)
        if exported.error is not None and not isinstance(exported.error, NegativeSize):  # a negative size returned
            return (f"run as torch.export runs it (backed sizes), it raises "
                    f"{type(exported.error).__name__}: {str(exported.error)[:200]}")
        return run.outputs

    def _report(self) -> None:
        """One finding per region and case: the least point where some finished trace accepts (one z3 query over
        the union of the traces' accepting regions)."""
        points = list(self.points)
        if self.accepting:
            union = E.disj([E.conj(conds) for conds, _ in self.accepting])
            point = restrict(self.solver.small_model([union]) or {}, self.dims)
            t = next((t for conds, t in self.accepting if E.evaluate(E.conj(conds), point) is True), None)
            if t is not None:
                points.append((point, t))
            else:  # z3 gave no model of a satisfiable union: take each trace's own
                points += [(restrict(self.solver.satisfiable(c).model, self.dims), t) for c, t in self.accepting]
        if points:
            order = [d.name for d in self.case.dims]
            point, t = min(points, key=lambda a: tuple(a[0].get(n, 0) for n in order))
            try:
                returned = self._returns_at(point)
            except NotApplicable:  # no concrete call: the symbolic trace's word stands
                returned = ()
            if isinstance(returned, str):
                # the unbacked trace accepts, a concrete run rejects (a check that reads size hints, as FakeTensor's
                # convolution rule does): no real counterexample, and no proof that the region is rejected
                at = ", ".join(f"{k}={x}" for k, x in point.items())
                self.inconclusive(E.to_text(self.reject.when), t.returned_at,
                                  f"the symbolic trace (unbacked sizes) accepts the region, but at its least point "
                                  f"{at}, {returned}: the kernel's check needs concrete sizes, so whether it "
                                  "rejects the whole region is not proved")
                return
            self.found.append(self._violation(t, point))

    def _violation(self, t: Finished, point: dict[str, int]) -> Finding:
        r = self.reject
        said = f" with {r.message!r}" if r.message else ""
        return Finding(
            code=RULE, case=self.case.id, path=r.pid, expr=r.text, node=r.when,
            dims=tuple(sorted(E.free_names(r.when))), location=t.returned_at or self.kernel.definition,
            counterexample=point, fix=RULES[RULE].fix,
            message=f"the runtime raises on {self.where()}{said}, but the meta kernel accepts the input and "
                    f"returns {', '.join(o.formula for o in t.outputs) or 'nothing'} at the counterexample")


def reject_obligations(kernel: Kernel, case: BoundCase, solver: Solver, max_traces: int,
                       cache: dict[tuple[str, ...], Trace] | None = None) -> list[Finding]:
    """SC021 (and SC005) for each runtime-check ``[[rejects]]`` region of ``case``. ``cache``: the traces
    already made for the case, by assumptions (the domain's exploration's: a trace does not depend on the
    domain); the regions' own traces join it."""
    cache = {} if cache is None else cache
    found: list[Finding] = []
    for r in case.rejects:
        if r.kind != "runtime-check":
            continue
        region = _Region(kernel, case, r, solver, max_traces)
        region.run(cache)
        found.extend(region.found)
    return found
