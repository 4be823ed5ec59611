"""What torch decides on its own (SC016), and the kernel's guard_or_false/guard_or_true as torch means them.

z3 settles many guards that torch's own static reasoning cannot: ``2 * (H // 2) - 2 >= H`` is false for every
H, but torch's value ranges do not show it. torch.export then installs the guard and rejects the ``Dim``
range, while shapecheck's proof says nothing is wrong. For every guard and guard_or_* fallback that z3
settles over the region, torch's own answer is asked too (``_compat.static_decision``: the static
evaluation export applies against its ``Dim`` ranges, through the compatibility module). z3 settles it and
torch cannot: **SC016**. The installed torch cannot answer: SC005, never a pass.

A guard_or_false/guard_or_true fallback that torch decides, under export's ranges, the way the unbacked trace
assumed is no guard at all: export traces the fallback side for every size, so the obligation is that the
fallback's outputs are the contract's on the whole region (the caller keeps the trace as a leaf, and the output
obligations check it there, the points where the condition really holds included).
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from .._torch import static as CS
from ..contract.model import BoundCase
from ..findings import Finding
from ..logic import expr as E
from ..logic.solver import Outcome, Solver
from ..rules import RuleCode
from .premises import conjuncts, definition, implied_steps, modulo_step, quotient

# A kernel assert (torch._check) is not asked here: verify's unbacked trace defers it as a runtime assert, but
# with export's backed sizes it is a guard (strict export's default), so prove.helper_guards asks it in the
# run made as export makes it (tests/unit/test_export_undischarged.py).

#: torch.export never traces sizes 0 and 1 of a dynamic dim: its backed sizes start at 2
_EXPORT_MIN = 2

FIX_GUARD = ("the branch is dead over the contract's domain (z3 proves it), but torch cannot see it from the Dim "
             "ranges, so torch.export installs the guard: remove the branch where it is dead (put a condition on "
             "the op's static arguments in front of it that holds only where the branch can be taken), or compute "
             "the value without a guard with torch.sym_min/torch.sym_max, whose bounds torch's value ranges follow")


class TorchView:
    """One case as torch.export sees it: each dim a backed size with the ``Dim`` range the domain implies
    (from 2 up for a dynamic dim), the requires' equalities as derived dims, the other requires as facts."""

    def __init__(self, case: BoundCase, solver: Solver):
        self.case, self.solver = case, solver
        self._ranges: dict[str, tuple[int, int]] | None = None
        self._domain: dict[str, tuple[int, int]] = {}
        self._constrained = E.free_names(case.domain)
        self.derived: dict[str, E.Node] = {}
        self.facts: list[E.Node] = []
        self.quotients: dict[str, tuple[str, int, int]] = {}  # X_k -> (X, k, r): X % k == r is X == k * X_k + r
        dynamic = {d.name for d in case.contract.dims if d.dynamic}
        for part in conjuncts(case.domain):
            eq = definition(part, set(case.contract.dim_names), self.derived)
            step = modulo_step(part)
            if eq is not None:
                self.derived[eq[0]] = eq[1]
            elif step is not None and step[0] in dynamic and step[0] not in self.derived \
                    and f"{step[0]}_{step[1]}" not in case.contract.dim_names \
                    and not any(step[0] in E.free_names(v) for v in self.derived.values()):
                x, k, r = step  # export states it as the derived Dim k * X_k + r (prove.export.export_dims)
                q = f"{x}_{k}"
                self.quotients[q] = step
                self.derived[x] = E.Arith("+", E.Arith("*", E.Const(k), E.Var(q)), E.Const(r))
            elif part != E.TRUE:
                self.facts.append(part)
        # a step the requires imply without writing it (A1 even from B0 == 2 * (A1 // 2) and A1 == B0): export
        # states it the same way, on the dim at the end of the equalities (B0 for A1 := B0)
        for x, k, r in implied_steps(case.domain, dynamic, solver):
            while isinstance(self.derived.get(x), E.Var):
                x = cast(E.Var, self.derived[x]).name
            q = f"{x}_{k}"
            if x in dynamic and x not in self.derived and q not in case.contract.dim_names and q not in self.quotients \
                    and not any(x in E.free_names(v) and not isinstance(v, E.Var) for v in self.derived.values()):
                self.quotients[q] = (x, k, r)
                self.derived[x] = E.Arith("+", E.Arith("*", E.Const(k), E.Var(q)), E.Const(r))
        self._same_dim()

    def _same_dim(self) -> None:
        """``X == Y`` of two dims left as a fact because Y is derived already (``C == 2 * C_2`` from
        ``C % 2 == 0``): export gives X and Y one Dim, so X is derived as Y is (chains resolve in CS)."""
        for part in list(self.facts):
            if not (isinstance(part, E.Cmp) and part.op == "==" and isinstance(part.left, E.Var)
                    and isinstance(part.right, E.Var)):
                continue
            for x, y in ((part.left.name, part.right.name), (part.right.name, part.left.name)):
                if x in self.derived or x == y or x not in self.case.contract.dim_names \
                        or any(x in E.free_names(v) for v in self.derived.values()):
                    continue
                self.derived[x] = E.Var(y)
                self.facts.remove(part)
                break

    def domain_range(self, name: str) -> tuple[int, int]:
        """A dim's least and greatest value in the domain (the requires included): the Dim range export gets."""
        if name not in self._domain:
            d = self.case.contract.dim(name)
            if name not in self._constrained:  # no requires reads it: its declared range
                self._domain[name] = (d.min, d.max)
                return self._domain[name]
            lo = self.solver.extreme([self.case.domain], name, lowest=True)
            hi = self.solver.extreme([self.case.domain], name, lowest=False)
            self._domain[name] = (d.min if lo is None else lo, d.max if hi is None else hi)
        return self._domain[name]

    def _export_low(self, name: str) -> int:
        """A constrained dim's least value with every dynamic dim from 2 up at once, as export's backed sizes
        are: a root whose derived dim ``A0 == I0 - 1`` must be 2 starts at 3 (export suggests ``min=3``)."""
        if name not in self._constrained:
            return _EXPORT_MIN
        ge2 = [E.Cmp(">=", E.Var(d.name), E.Const(_EXPORT_MIN)) for d in self.case.contract.dims
               if d.dynamic and d.name in self._constrained and self.domain_range(d.name)[1] >= _EXPORT_MIN]
        lo = self.solver.extreme([self.case.domain, *ge2], name, lowest=True)
        return _EXPORT_MIN if lo is None else lo

    def ranges(self) -> dict[str, tuple[int, int]]:
        if self._ranges is None:
            out = {}
            # the case's dims and every dim a requires reads (a root dim of no input: Ci == C * r * r)
            read = set().union(*(E.free_names(n) for n in self.derived.values())) if self.derived else set()
            wanted = {d.name for d in self.case.dims} | read
            for d in self.case.contract.dims:
                if d.name not in wanted:
                    continue
                lo, hi = self.domain_range(d.name)
                if d.dynamic and hi >= _EXPORT_MIN:
                    lo = max(lo, _EXPORT_MIN, self._export_low(d.name))
                out[d.name] = (lo, hi)
            for x, k, r in self.quotients.values():  # a root Dim of its own, from 2 up as export's are
                q, qlo, qhi = quotient(x, k, r, *self.domain_range(x))
                out[q] = (max(qlo, _EXPORT_MIN) if qhi >= _EXPORT_MIN else qlo, qhi)
            self._ranges = out
        return self._ranges

    def decides(self, expr, pc: list[E.Node]) -> bool | None:
        """torch's answer for a condition (its sympy expression or a contract expression) in the region
        ``pc``: True/False, or None when torch would install a guard. Raises CS.TorchCannotSay."""
        return self.answer(expr, pc)[0]

    def rejects(self, expr, pc: list[E.Node]) -> bool:
        """Whether torch.export rejects the Dim ranges over this condition: torch installs it as a guard, and
        with the derived dims replaced it reads a single dim (``CS.static_answer``). Raises CS.TorchCannotSay."""
        says, reads = self.answer(expr, pc)
        return says is None and reads == 1

    def answer(self, expr, pc: list[E.Node]) -> tuple[bool | None, int]:
        """``decides``'s answer and how many dims the condition reads once the derived dims are replaced."""
        derived, facts = dict(self.derived), list(self.facts)
        for part in pc:  # an earlier guard: an equality is a replacement in torch, the rest an axiom
            eq = definition(part, set(self.case.contract.dim_names), derived)
            if eq is not None:
                derived[eq[0]] = eq[1]
            else:
                facts.append(part)
        # a requires over dims this case lacks (an absent optional's): export has no such size, nor the fact
        known = set(self.ranges())
        derived = {n: v for n, v in derived.items() if n in known and E.free_names(v) <= known}
        facts = [f for f in facts if E.free_names(f) <= known]
        return CS.static_answer(expr, self.ranges(), derived, facts)

    def guarded_dynamic(self, names: set[str]) -> bool:
        return self.case.contract.guard_free and any(d.dynamic for d in self.case.contract.dims if d.name in names)

    def span(self, names) -> str:
        return ", ".join(f"{n} in [{self.domain_range(n)[0]}, {self.domain_range(n)[1]}]" for n in sorted(names))


def torch_question(view: TorchView, expr, pc: list[E.Node], value: bool, *, code_text: str, loc, what: str,
                   dims: set[str], node: E.Node | None) -> Finding | None:
    """z3 settled ``expr`` to ``value`` over the region ``pc``: SC016 when torch cannot decide it, SC005 when
    the installed torch cannot say; None when torch decides it as z3 does."""
    case = view.case
    if not view.guarded_dynamic(dims):
        return None
    if any(view.guarded_dynamic(E.free_names(p)) and view.solver.implies([case.domain], p).outcome
           is not Outcome.PROVED for p in pc):
        return None  # settled only on one side of an earlier branch on a dynamic dim: that is the finding (SC001)
    try:
        says, reads = view.answer(expr, pc)
    except CS.TorchCannotSay as err:
        return Finding(code=RuleCode.INCONCLUSIVE, case=case.id, expr=code_text, location=loc, counterexample={},
                         message=f"z3 settles the {what} {code_text}, but whether torch settles it on its own "
                         f"(as torch.export must) is unknown: {err}")
    if says is value:
        return None
    if says is None and reads != 1:
        return None  # a guard over two or more dims: export installs it and accepts the ranges (CS.static_answer)
    if says is not None:
        return Finding(code=RuleCode.INCONCLUSIVE, case=case.id, expr=code_text, location=loc, counterexample={},
                         message=f"z3 and torch disagree on the {what} {code_text}: z3 says always {value}, torch "
                         f"{says} under export's Dim ranges")
    span = view.span(dims)
    return Finding(
        code=RuleCode.GUARD_TORCH_CANNOT_DISCHARGE, case=case.id, expr=code_text, node=node, dims=tuple(sorted(dims)), location=loc,
        counterexample={},
        fix=FIX_GUARD,
        message=f"the {what} {code_text} is always {str(value).lower()} for {span} (proved by z3); torch "
        f"cannot prove it from the Dim ranges, so torch.export installs the guard and rejects the Dim range")


def settled_guard(view: TorchView, t, pc: list[E.Node], value: bool) -> Finding | None:
    """A guard the kernel raised (``trace.run.Guarded``) that z3 settles to ``value`` over ``pc``."""
    expr = t.guard_expr if t.guard_expr is not None else t.guard
    what = "guard_or_* condition" if t.fallback_value is not None else "guard"
    return torch_question(view, expr, pc, value, code_text=E.to_text(t.guard), loc=t.loc, what=what,
                          dims=E.free_names(t.guard), node=t.guard)


def _on_the_taken_side(v: Finding, fb, solver: Solver) -> Finding | None:
    """``v`` moved to a point of its region where ``fb``'s condition has the value torch assumed, if the output
    is wrong there too (hunt 56: triangular_solve's ignored batch broadcast was blamed on a helper's
    ``guard_or_false(N == 0)`` at N = 0, its least point); None where the region has no such point."""
    if not isinstance(v.region, tuple) or v.expected is None:
        return None
    from .obligations import moved_to

    taken = fb.guard if fb.value else E.negate(fb.guard)
    model = solver.small_model([v.region[0], taken])
    point = {d: model[d] for d in v.counterexample if d in model} if model else None
    if point is None or len(point) != len(v.counterexample):
        return None
    try:
        return moved_to(v, point)
    except Exception:  # noqa: BLE001 - a formula the point does not decide: keep the finding as it was
        return None


def fallback_note(v: Finding, leaves, solver: Solver | None = None) -> Finding:
    """An SC002 at a point where a guard_or_* fallback of the leaf covering it took the side its condition does
    not have there (a fallback torch decides for every size export traces, so the leaf stood for the whole
    region): say so, with that point."""
    if v.code != RuleCode.OUTPUT_SHAPE_MISMATCH or not v.counterexample:
        return v
    for leaf in leaves:
        if E.evaluate(E.conj(leaf.pc), v.counterexample) is not True:
            continue
        for fb in leaf.trace.fallbacks:
            if fb.guard is not None and E.evaluate(fb.guard, v.counterexample) is (not fb.value):
                moved = _on_the_taken_side(v, fb, solver) if solver is not None else None
                if moved is not None:
                    return moved  # wrong where the fallback's answer holds too: the answer is not the cause
                at = ", ".join(f"{k}={x}" for k, x in v.counterexample.items())
                return replace(v, fallback=fb, message=(
                    f"{v.message}; at {at} the kernel's {asked_by(fb)}({E.to_text(fb.guard)}) "
                    f"takes its fallback side ({fb.value}, as torch.export does for every size, since torch "
                    f"decides it from the Dim ranges) although the condition is {not fb.value} there: the "
                    f"fallback must give the contract's outputs on the whole domain"))
    return v


def asked_by(fb) -> str:
    """The call that gave a fallback, as the kernel's line writes it: ``guard_size_oblivious`` and
    ``statically_known_true``/``_false`` are answered as fallbacks too (``_torch.answers``)."""
    text = fb.loc.text if fb.loc is not None else ""
    for name in ("guard_size_oblivious", "statically_known_true", "statically_known_false"):
        if name + "(" in text:
            return name
    return f"guard_or_{str(fb.value).lower()}"
