"""One op's audit: trace its kernel on its inputs with every dim an independent unbacked size, and at every
guard decide, as verify does, whether the region already settles it. A guard with points on both sides is
checked against the op itself: the kernel is run at static sizes on each side, beside the op's example. A side
the op rejects makes the guard a relation (an inferred ``requires``, assumed after); otherwise it is a finding
of the class its form gives (``audit.classify``), and both sides are explored. Its result: ``OpAudit``."""

from __future__ import annotations

import time
from typing import Any

from .._torch import audit as CA
from .._torch import core as C
from ..findings import SourceLoc
from ..kernel.sources import Kernel
from ..logic import expr as E
from ..logic.solver import Bounds, Decision, Outcome, Solver, restrict
from ..prove.explore import assumed_side, contradicted_anew, pc_key, unsettled_fallback
from ..prove.premises import simplified
from ..trace.run import (
    Failed,
    Finished,
    Guarded,
    Trace,
    demanded,
)
from .asserts import BROADCAST, export_cannot_prove, parsed_requires
from .candidates import BROKEN
from .classify import RELATION, classify_guard, raw_class
from .inputs import INTS_ONLY, OpInputs, held_constant, static_error
from .traced import MAX_SIZE, MIN_SIZE, Finding, OpAudit, trace_inputs

#: torch's broadcasting errors (torch 2.13): under unbacked sizes it raises them where a guard would broadcast
BROADCAST_ERRORS = ("Attempting to broadcast a dimension", "must match the size of tensor b")


#: how a note of an exploration that did not cover its regions begins (its op is explored only in part)
STOPPED = ("stopped after", "z3 could not", "cannot translate", "the kernel cannot run", "torch could not take")


class AuditExplorer:
    """A work list of assumption sets for one op; each is traced once, up to ``max_traces`` or ``seconds``."""

    def __init__(self, kernel: Kernel, inputs: OpInputs, max_traces: int = 16, seconds: float | None = None,
                 timeout_ms: int = 2000):
        self.kernel, self.inputs = kernel, inputs
        self.example = dict(inputs.dims())
        self.dims = list(self.example)
        self.solver = Solver([Bounds(d, MIN_SIZE, MAX_SIZE) for d in self.dims], timeout_ms, simplified)
        self.max_traces = max_traces
        self.deadline = float("inf") if seconds is None else time.monotonic() + seconds
        self.state = OpAudit(inputs)
        self.work: list[list[E.Node]] = [[]]
        self.seen: set[tuple] = set()
        self.premised: list[E.Node] = []  # the asserts kept with a region's premise (``_within``)
        self.undecided: list[tuple[Guarded, list[E.Node], str]] = []  # branches whose both sides the op refused
        self.helper_sides: set[E.Node] = set()  # the conditions of the sides of torch's helpers explored
        self.branch_sides: set[E.Node] = set()  # the sides of the kernel's branches explored, both accepted
        # one-sided branches: the relation each would be, judged once its refused side is traced (``_one_sided``)
        self.tentative: list[tuple[Guarded, list[E.Node], str, E.Node, dict | None, str]] = []
        self.returned: list[tuple[list[E.Node], list[E.Node]]] = []  # (region, its asserts) of each trace that returned
        self.ints_only: list[str] = []  # the errors of traces an op in the kernel refused SymInts in (``INTS_ONLY``)
        # regions a trace already made stands for (``_queue``), with the region it was made in
        self.reused: dict[tuple[str, ...], tuple[Trace, list[E.Node]]] = {}

    def run(self) -> OpAudit:
        st = self.state
        while self.work:
            if st.traces >= self.max_traces or time.monotonic() > self.deadline:
                st.notes.append(f"stopped after {st.traces} traces: {len(self.work)} region(s) not explored")
                break
            pc = self.work.pop()
            t, made = self.reused.pop(pc_key(pc), (None, pc))  # the trace that asked stands for its fallback's side
            if t is None or contradicted_anew(t, made, pc, self.solver):
                try:
                    t = trace_inputs(self.kernel, self.inputs, pc)
                except C.AssumptionRejected:  # torch's ranges find the region empty (z3 did not): no input there
                    continue
                st.traces += 1
            finished = None
            if isinstance(t, Finished):
                self._asserts(t, pc)
                self.returned.append((pc, [a.expr for a in t.asserts if a.expr is not None]))
                pending = unsettled_fallback(t, self.solver, pc)
                if pending is None:
                    st.leaves += 1
                    if len(st.paths) < 8:  # its outputs hold where torch's broadcasting took no size-1 side
                        held = pc + [a.expr for a in t.asserts if a.broadcast and a.expr is not None]
                        st.paths.append({"when": E.to_text(E.conj(held)) if held else "true",
                                         "outputs": [o.formula if o.kind.value in ("tensor", "int") else None
                                                     for o in t.outputs]})
                    continue
                if pending.helper and pending.guard is not None and not pending.is_specialization and \
                        (pending.guard in pc or E.negate(pending.guard) in pc):
                    self._untaken(pending, pc)  # traced again under the assumption, torch answered as before
                    continue
                if pending.helper and pending.guard is not None and not pending.is_specialization:
                    # torch's own helper (broadcasting) assumed one side: each is the op's behaviour, and export
                    # takes the helper's fallback rather than a guard, so both are explored and nothing is found.
                    # On a size of 0 or 1 only the example's side goes on, as for the kernel's own zero-one
                    # branches (export specialises those sizes, and the eager comparison runs them), and export's
                    # side past 1 too where the example sits at 1 (a [6, 1] scale)
                    sides = self._helper_sides(pending.guard, pc, lifted=True)
                    self.helper_sides.update(side[-1] for side in sides)
                    self._queue(sides, t, pending, pc)
                    continue
                finished = t
                t = Guarded(pending.guard, pending.guard_raw, pending.loc, pending.is_specialization, (),
                            pending.guard_expr, pending.fallback_value)
            if isinstance(t, Failed):
                if self._failed_on_a_side(t, pc):
                    continue
                self._failed(t, pc)
            else:
                before = len(self.work)
                self._guarded(t, pc)
                if finished is not None:
                    self._stands_for(finished, t, pc, self.work[before:])
        self._one_sided()
        self._undecided()
        return st

    def _failed_on_a_side(self, t: Failed, pc: list[E.Node]) -> bool:
        """A trace that raised after torch's own helper assumed a side of an undecided size condition (squeeze,
        broadcasting: ``guard_or_false(s == 1)``): the raise holds on that side only, so each side is explored as
        a region of its own (True), as for a trace that returned; an eager kernel that takes the other side is
        traced there, not called a relation."""
        pending = unsettled_fallback(t, self.solver, pc, helpers_only=True)
        if pending is None or pending.guard is None or pending.is_specialization:
            return False
        sides = [side for side in self._helper_sides(pending.guard, pc) if side[-1] not in self.helper_sides]
        if not sides:
            return False
        self.helper_sides.update(side[-1] for side in sides)
        self._queue(sides, t, pending, pc)
        return True

    def _queue(self, sides: list[list[E.Node]], t: Trace, pending: Guarded, pc: list[E.Node]) -> None:
        """The sides of a helper's fallback to explore; ``t`` stands for the side torch assumed."""
        self.work += sides
        self._stands_for(t, pending, pc, sides)

    def _untaken(self, pending: Guarded, pc: list[E.Node]) -> None:
        """A helper's fallback that the trace made under the assumption of one of its sides answered the other way
        again (linalg_pinv's ``max(1, self_0) * max(1, self_1) * ... == self_0 * self_1 * ...``, true on the region,
        which guard_or_false answers false: torch cannot use the assumption). That side cannot be traced: said, the
        op explored in part (each such trace was made again, up to the trace bound)."""
        assert pending.guard is not None
        side = pending.guard if pending.guard in pc else E.negate(pending.guard)
        where = f" at {pending.loc.short}" if pending.loc is not None else ""
        note = (f"torch could not take the side {E.to_text(side)} of its helper's {pending.guard_raw}{where}: under "
                f"that assumption guard_or_* answered {pending.fallback_value} again, so that side was not traced (the "
                "comparison with the eager kernel runs its points)")
        if note not in self.state.notes:
            self.state.notes.append(note)

    def _stands_for(self, finished: Trace, fallback: Guarded, pc: list[E.Node], queued: list[list[E.Node]]) -> None:
        """A fallback's side, queued, where torch assumed it (a helper's, from ``_queue``; the kernel's own: the
        general side of a zero-one branch, the side sizes from 2 settle, either side of a branch): the trace that
        asked stands for it (``assumed_side`` says why), unless ``contradicted_anew`` there. A chain of such fallbacks
        (pixel_shuffle's ``self_0 == 0``, ``self_1 == 0``, ``self_2 == 0``, which sizes from 2 settle) then costs one
        trace, not one a fallback."""
        side = assumed_side(pc, fallback)
        if side is not None and any(pc_key(w) == pc_key(side) for w in queued):
            self.reused[pc_key(side)] = (finished, pc)

    def _helper_sides(self, guard: E.Node, pc: list[E.Node], lifted: bool = False) -> list[list[E.Node]]:
        """The sides of a helper's size condition to explore: both, or for a zero-one condition the example's
        (``lifted``: and the side of the example with its sizes past 1, export's, where that is the other one: a
        [6, 1] scale whose column count the op may demand be 1, or may not)."""
        sides = [pc + [E.negate(guard)], pc + [guard]]
        if classify_guard(guard) != "zero-one":
            return sides
        try:
            here = E.evaluate(guard, self.example)
            general = E.evaluate(guard, {k: max(v, 2) for k, v in self.example.items()}) if lifted else here
        except Exception:  # noqa: BLE001 - a name the example has no value for: both sides
            return sides
        if not isinstance(here, bool) or not isinstance(general, bool):
            return sides
        if general is not here:  # the example sits at 1: its side, and export's past it (work is a stack)
            return [pc + [guard if here else E.negate(guard)], pc + [guard if general else E.negate(guard)]]
        note = ("the 0/1 sides of branches in torch's own helpers (broadcasting) were not traced symbolically: "
                "export specialises sizes 0 and 1, and the comparison with the eager kernel runs them")
        if note not in self.state.notes:
            self.state.notes.append(note)
        return [pc + [guard if general else E.negate(guard)]]

    # -- points ------------------------------------------------------------------------------------------------
    def near(self, conds: list[E.Node], keep: set[str] = frozenset(), loose: bool = True,
             record: bool = True) -> dict[str, int] | None:
        """A point of ``conds`` with the dims outside ``keep`` at their example values where possible (the two sides
        of a guard then differ only where the guard looks), else the least point (``loose``), kept (``record``)."""
        fixed = {c.left.name: c.right.value for c in conds if isinstance(c, E.Cmp) and c.op == "=="
                 and isinstance(c.left, E.Var) and isinstance(c.right, E.Const) and c.left.name in keep}
        candidate = {**self.example, **fixed}
        if (set(keep) <= set(fixed) or not fixed) and self._holds(conds, candidate):
            # every dim one value (the only model z3 could give), or the example itself where it meets the
            # conditions: the nearest point (a side of ``(H + 1) % 2 != 0`` that the example's H = 3 lies on is
            # not H = 1, where a kernel of 2 is larger than the input and the op refuses it for that reason)
            model: dict[str, int] | None = candidate
        else:
            pinned = [E.Cmp("==", E.Var(d), E.Const(v)) for d, v in self.example.items() if d not in keep]
            model = self.solver.small_model(conds + pinned) or (self.solver.small_model(conds) if loose else None)
        point = restrict(model, self.dims) if model is not None else None
        if point is not None and keep and record and point not in self.state.points and len(self.state.points) < 32:
            self.state.points.append(point)
        return point

    def _holds(self, conds: list[E.Node], point: dict[str, Any]) -> bool:
        """Whether ``point`` (a value for every dim) lies in the solver's bounds and meets every cond."""
        bounds = self.solver.dims
        if set(point) != set(bounds):
            return False
        for name, v in point.items():
            if not isinstance(v, int) or isinstance(v, bool) or not bounds[name].lo <= v <= bounds[name].hi:
                return False
        try:
            return all(E.evaluate(c, point) is True for c in conds)
        except Exception:  # noqa: BLE001 - undefined there (a division by 0): z3 decides
            return False

    def side(self, conds: list[E.Node], keep: set[str]) -> tuple[dict[str, int] | None, str | None]:
        """A point of ``conds`` next to the example and the op's error there (None: it accepts it). A side is
        never judged by a point where one of ``keep``'s dims is 0 alone: where the op rejects it, a point with
        those dims at 1 or more, then 2 or more, is tried too (an op that rejects empty inputs does not make a
        specialisation a relation)."""
        point = self.near(conds, keep)
        err = self.rejects(point)
        if err is None or point is None or not any(point.get(d) == 0 for d in keep):
            return point, err
        for least in (1, 2):
            other = self.near(conds + [E.Cmp(">=", E.Var(d), E.Const(least)) for d in sorted(keep)], keep)
            if other is not None and self.rejects(other) is None:
                return other, None
        return point, err

    def rejects(self, point: dict[str, int] | None) -> str | None:
        return static_error(self.kernel.fn, self.inputs, point) if point is not None else "no point"

    def add(self, cls: str, expr: str, loc: SourceLoc | None, cex: dict, witness: dict | None, message: str) -> None:
        key = (cls, expr, (loc.file, loc.line) if loc else None)
        if key not in self.seen:
            self.seen.add(key)
            self.state.findings.append(Finding(cls, expr, loc, cex, witness, message))

    def require(self, expr: str, loc: SourceLoc | None, evidence: str) -> None:
        if all(r[0] != expr for r in self.state.requires):
            self.state.requires.append((expr, loc, evidence))

    def _asserts(self, t: Finished, pc: list[E.Node]) -> None:
        """The kernel's own asserts are what the op demands: inferred requires (when the region does not
        already imply them)."""
        for a in t.asserts:
            holds = None if a.expr is None else self.solver.decide(pc, a.expr)[0]
            if holds is Decision.TRUE:
                export_cannot_prove(self, a, pc, MAX_SIZE)
            if holds is not Decision.BOTH:
                continue
            if a.broadcast:  # torch's broadcasting took neither size for 1: the op demands the broadcast relation
                if self.solver.decide(pc, a.relation)[0] is Decision.BOTH:
                    self.require(E.to_text(a.expr) + BROADCAST, a.loc, f"torch's broadcasting asserts it ({a.broadcast}"
                                 "; under unbacked sizes it takes neither size for 1)")
                continue
            node = self._within(self._premised(demanded(a, t.asserts) or a.expr, pc), pc)
            if node != a.expr:  # a premised assert another one already implies (a deeper region's) is left out
                if any(self.solver.implies([old], node).outcome is Outcome.PROVED for old in self.premised):
                    continue
                self.premised.append(node)
            self.require(E.to_text(node), a.loc, a.by or "the kernel asserts it (torch._check)")

    def _premised(self, expr: E.Node, pc: list[E.Node]) -> E.Node:
        """An assert made on a side of torch's broadcasting helper (``B_1 == scales_1``, ``w_1 != 1``) that reads
        its sizes, with that side as its premise: the other side broadcasts, and the trace says nothing there."""
        names = E.free_names(expr)
        sides = [c for c in pc if c in self.helper_sides and E.free_names(c) & names]
        return E.disj([*(E.negate(c) for c in sides), expr]) if sides else expr

    def _within(self, expr: E.Node, pc: list[E.Node]) -> E.Node:
        """An assert made in a region the example lies outside, with that region's conditions as its premise:
        a broadcast's ``input_0 == 0`` where ``zero_points_0 == 0`` is no demand on the op's inputs, since the
        example (an input the op accepts) has input_0 = 3. Asserted where the example lies, it stands alone."""
        def false_at_example(n: E.Node) -> bool:
            try:
                return E.evaluate(n, self.example) is False
            except Exception:  # noqa: BLE001 - a name the example has no value for (a size the kernel made)
                return False

        if not false_at_example(expr):
            return expr
        outside = [c for c in pc if false_at_example(c)]
        return E.disj([*(E.negate(c) for c in outside), expr]) if outside else expr

    def _failed(self, t: Failed, pc: list[E.Node]) -> None:
        point = self.near(pc)
        if t.missing_name:
            self.state.notes.append(f"the kernel cannot run here: {t.error}")
            return
        if INTS_ONLY.search(t.error):  # no relation of the sizes, whatever the op rejects at the least point
            if held_constant(self.inputs) is not self.inputs:  # an int argument the audit made a size: taken as
                self.ints_only.append(t.error)  # ints (``AuditOp._explore`` traces it again, held)
            else:  # the tensors' own sizes passed as ints (lstm's hidden_size): export's trace fails on any input
                self.add("kernel-error", t.error, t.loc, point or {}, None,
                         f"the kernel raised {t.error} under symbolic sizes: it passes a size to an op that takes "
                         "ints, so torch.export's trace fails wherever the size is dynamic")
            return
        if t.error.startswith("data-dependent: "):
            self.add("data-dependent", t.error.removeprefix("data-dependent: "), t.loc, point or {}, None,
                   f"the kernel's result depends on tensor data: {t.error}")
            return
        if self.rejects(point) is not None:
            return  # the op rejects this region at static sizes too
        if any(m in t.error for m in BROADCAST_ERRORS):  # torch's broadcasting, told sizes may differ
            if any(r[0].endswith(BROADCAST) for r in self.state.requires):
                return  # the broadcast relations, in dim names, already say it
            self.require(f"(broadcastable) {t.error}", t.loc, "torch's broadcasting rejects unequal sizes that "
                       "are not 1; under unbacked sizes it raises instead of guarding")
            return
        least = restrict(self.solver.small_model(pc), self.dims)
        # FakeTensor's fallback runs the eager kernel at static sizes only: under symbolic ones it raises this
        # wherever it runs, so it is no relation, whatever other sizes the op rejects
        err = None if t.error.startswith("UnsupportedOperatorException") else self.rejects(least)
        if err is None:  # the op accepts the region's points at static sizes, yet fails under symbolic ones
            self.add("kernel-error", t.error, t.loc, point or {}, None,
                   f"the kernel raised {t.error} under symbolic sizes, where it accepts static ones")
        else:  # it demands a relation it cannot state as a guard (broadcasting under unbacked sizes)
            self.require(f"(raised) {t.error}", t.loc, f"the fake kernel accepts {_point(point)} but rejects "
                       f"{_point(least)}: {err}")

    def _guarded(self, t: Guarded, pc: list[E.Node]) -> None:
        gdims = set(_guard_dims(t))
        data = sorted(gdims - set(self.dims))
        if data:
            self.add("data-dependent", t.guard_raw, t.loc, self.near(pc) or {}, None,
                   f"the kernel guards on {t.guard_raw}, which depends on tensor data ({', '.join(data)})")
            return
        if t.guard is None:
            self._untranslated(t, pc)
            return
        if t.is_specialization:
            self._specialised(t, pc)
            return
        text = E.to_text(t.guard)
        if t.guard in pc or E.negate(t.guard) in pc:
            self.add("undischargeable", text, t.loc, self.near(pc) or {}, None,
                   f"torch raised the guard {text} again under the assumption that decides it: it cannot "
                     "discharge it from its own facts")
            return
        verdict = self.solver.decide(pc, t.guard)[0]
        if verdict in (Decision.TRUE, Decision.FALSE) and self.solver.decide([], t.guard)[0] is verdict:
            self.add("undischargeable", text, t.loc, self.near(pc) or {}, None,
                   f"{text} is {verdict is Decision.TRUE} for every input (z3 proves it), but torch cannot "
                     "decide it from its own facts: under unbacked sizes it raises, and torch.export with the dim "
                     "dynamic installs it as a guard that its constraint check may not prove either ('Constraints "
                     "violated')")
        if verdict is Decision.TRUE:
            self.work.append(pc + [t.guard])
        elif verdict is Decision.FALSE:
            self.work.append(pc + [E.negate(t.guard)])
        elif verdict is Decision.UNKNOWN:
            self.state.notes.append(f"z3 could not decide the guard {text}")
        elif verdict is Decision.BOTH:
            self._branch(t, pc, text)

    def _branch(self, t: Guarded, pc: list[E.Node], text: str) -> None:
        if t.fallback_value is not None and self._settled_from_two(t, pc, text):
            return
        keep, facts = _related(set(_guard_dims(t)), t.facts)
        # both sides meet what the kernel demanded before it asked (``y_0 == x_0`` checked, then ``y_0 <= 8``): a
        # side with only the guard's dims moved would break that demand, and the op's refusal would hide the branch
        (pos, err_pos), (neg, err_neg) = (self.side(pc + facts + [t.guard], keep),
                                          self.side(pc + facts + [E.negate(t.guard)], keep))
        if (err_pos is None) != (err_neg is None):  # the op rejects one side at this point: a relation it demands,
            # unless the refused side's own trace returns (``if x_0 > 16: torch._check(x_1 % 8 == 0)`` refuses
            # x_0=17 only with x_1 at the example's 3): both sides are traced, and ``_one_sided`` judges
            side = t.guard if err_pos is None else E.negate(t.guard)
            bad = neg if err_pos is None else pos
            self.tentative.append((t, pc, text, side, bad, err_neg or err_pos or ""))
            self.work.append(pc + [E.negate(side)])
            self.work.append(pc + [side])
            return
        if err_pos is None and self._broadcast_only(t.guard, pc):
            self.require(E.to_text(t.guard) + BROADCAST, t.loc, "the op takes unequal sizes only "
                       "when one is 1 (broadcasting)")
            self.work.append(pc + [t.guard])
            return
        if err_pos is None:
            cls = self._accepted_branch(t, text, pos, neg)
            if cls in ("zero-one", ""):  # only the general side goes on: the example's, sizes past 0/1
                self.work.append(pc + [t.guard if E.evaluate(t.guard, self.example) else E.negate(t.guard)])
                return
        else:  # both sides refused: judged again once the regions have said what the op demands (``_undecided``)
            self.undecided.append((t, pc, text))
        if err_pos is None:
            self.branch_sides.update((t.guard, E.negate(t.guard)))
        self.work.append(pc + [E.negate(t.guard)])
        self.work.append(pc + [t.guard])

    def _settled_from_two(self, t: Guarded, pc: list[E.Node], text: str) -> bool:
        """A guard_or_false/guard_or_true asked at the kernel's line (torch's C++ contiguity check behind
        ``.contiguous()``, or the kernel's own call) that sizes from 2 settle: torch answered it without a guard,
        and torch.export, whose sizes start at 2, settles it the same way and installs none. No finding (strict
        export of ``q.transpose(1, 2).contiguous()`` accepts every dim dynamic); only the side that holds from 2
        goes on, and the comparison with the eager kernel runs sizes 0 and 1."""
        assert t.guard is not None
        from_two = [E.Cmp(">=", E.Var(d), E.Const(2)) for d in sorted(E.free_names(t.guard))]
        two = self.solver.decide(from_two, t.guard)[0]
        if two not in (Decision.TRUE, Decision.FALSE):
            return False
        note = (f"torch answered {text} at the kernel's line without a guard (guard_or_false/guard_or_true), and "
                "sizes from 2, as torch.export traces, settle it: not a finding")
        if note not in self.state.notes:
            self.state.notes.append(note)
        self.work.append(pc + [t.guard if two is Decision.TRUE else E.negate(t.guard)])
        return True

    def _accepted_branch(self, t: Guarded, text: str, pos: dict[str, int] | None, neg: dict[str, int] | None) -> str:
        """A branch whose two sides the op accepts: its finding, and its class ("" for torch's layout helper on
        sizes 0 and 1, not the kernel's)."""
        cls = classify_guard(t.guard)
        helper = CA.layout_helper(list(t.frames), self.kernel.located_in)
        if helper is not None and cls == "zero-one":  # torch's layout logic, not the kernel's shape logic
            self.state.notes.append(f"torch's helper {helper} branches on {text} (a layout question on "
                                    "sizes 0 and 1, which export specialises): not the kernel's finding")
            return ""
        via = "" if t.fallback_value is None else " (through guard_or_false/guard_or_true: a guard under " \
                                                  "example sizes, as torch.export traces)"
        self.add(cls, text, t.loc, neg or {}, pos, f"the kernel branches on {text}{via}; the op accepts both sides")
        return cls

    def _one_sided(self) -> None:
        """Each branch one of whose sides the op refused at the point tried: where a trace of the refused side
        returned (under the asserts it made), the branch is the kernel's (a finding at a point of that side that
        meets them); where none did, the accepted side is a relation the op demands."""
        for t, pc, text, side, bad, err in self.tentative:
            refused = pc + [E.negate(side)]
            back = [conds + asserts for conds, asserts in self.returned if conds[:len(refused)] == refused]
            if back:
                keep = set(_guard_dims(t)) | {n for conds in back for c in conds for n in E.free_names(c)}
                there, why = self.side(back[0], keep & set(self.dims))
                here = self.near(pc + [side], set(_guard_dims(t)))
                if why is None:
                    pos, neg = (here, there) if side == t.guard else (there, here)
                    self._accepted_branch(t, text, pos, neg)
                    continue
            if err.partition(":")[0] in BROKEN:  # broken on that side, not checking the op's inputs (hunt 64)
                self.add("kernel-error", err, t.loc, bad or {}, None, f"the kernel raises {err} at {_point(bad)}, a "
                         f"side of {text} (the eager kernel too): a programming error, not a check of the op's inputs")
                continue
            # asked on a side of a branch both of whose sides the op takes (``bits == 4`` where bits != 2, after
            # ``bits in (2, 4)`` asked ``bits == 2``), or in a region the example lies outside: demanded there only
            premises = [E.negate(c) for c in pc if c in self.branch_sides]
            demand = self._within(E.disj([*premises, side]) if premises else side, pc)
            self.require(E.to_text(demand), t.loc, f"the fake kernel rejects {_point(bad)}: {err}")

    def _undecided(self) -> None:
        """The branches whose two sides the op refused, judged again with what the regions found it demands (the
        inferred requires): ``if x_0 <= 8`` before ``torch._check(y_0 == x_0)`` on both sides refused both
        sides with y_0 at the example; with y_0 == x_0 it accepts both, and the branch is the kernel's."""
        facts = parsed_requires(self.state.requires)
        for t, pc, text in self.undecided:
            keep, used = _related(set(_guard_dims(t)), (*t.facts, *facts))
            if not used or t.guard is None:
                continue
            (pos, err_pos), (neg, err_neg) = (self.side(pc + used + [t.guard], keep),
                                              self.side(pc + used + [E.negate(t.guard)], keep))
            if err_pos is None and err_neg is None:
                self._accepted_branch(t, text, pos, neg)

    def _broadcast_only(self, guard: E.Node, pc: list[E.Node]) -> bool:
        """``a == b`` between two dims, whose other side the op accepts only with a size 1 (broadcasting)."""
        if not (isinstance(guard, E.Cmp) and guard.op == "==" and isinstance(guard.left, E.Var)
                and isinstance(guard.right, E.Var)):
            return False
        beyond = [E.Cmp(">", guard.left, E.Const(1)), E.Cmp(">", guard.right, E.Const(1)), E.negate(guard)]
        point = self.near(pc + beyond, {guard.left.name, guard.right.name})
        return point is not None and self.rejects(point) is not None

    def _specialised(self, t: Guarded, pc: list[E.Node]) -> None:
        """The kernel needs a size's value: a finding whenever the op accepts the example (a specialisation is
        never a relation: export specialises it whatever the op demands). The counterexample is another value
        the op accepts, tried away from 0 (value + 1, + 2, twice the value); without one, the message says so."""
        text = E.to_text(t.guard)
        at = self.near(pc)
        if at is None:
            return
        value = E.evaluate(t.guard, at)
        fixed = E.Cmp("==", t.guard, E.Const(value))
        keep = set(_guard_dims(t))
        how = ("its C++ code reads the size as a plain int, as code that is not SymInt-aware does; at static sizes "
               "it still runs as C++ on fake tensors" if self.kernel.definition is None and "C++" in self.kernel.name
               else "int(), len() or similar")
        if self.rejects(at) is None:
            other, shown = None, None
            for v in dict.fromkeys((value + 1, value + 2, 2 * value + 1, value - 1)):
                if v == value or (v < 0 and isinstance(value, int)):
                    continue
                cand = self.near(pc + [E.Cmp("==", t.guard, E.Const(v))], keep)
                if cand is not None and self.rejects(cand) is None:
                    other, shown = cand, v
                    break
            if other is not None:
                self.add("specialization", text, t.loc, other, at,
                         f"the kernel needs the concrete value of {text} ({how}): {value} at the "
                         f"witness, {shown} at the counterexample")
            else:
                self.add("specialization", text, t.loc, at, None,
                         f"the kernel needs the concrete value of {text} ({how}): {value} here; "
                         "the op rejected the other values tried, so export's specialisation may be all it takes")
        self.work.append(pc + [fixed])

    def _untranslated(self, t: Guarded, pc: list[E.Node]) -> None:
        """A guard outside the contract language: evaluated at two points where the op accepts both."""
        keep = set(_guard_dims(t))
        a = self.near(pc)
        values: dict[Any, dict[str, int]] = {}
        for shift in (0, 1, 2, 7, 8, 9, 64, 1000):
            point = dict(a or self.example, **{d: (a or self.example)[d] + shift for d in keep})
            v = _value(t, point)
            if v is not None and v not in values and self.rejects(point) is None:
                values[v] = point
            if len(values) >= 2:
                break
        if len(values) < 2:
            self.state.notes.append(f"cannot translate or split the guard {t.guard_raw}")
            return
        (v1, p1), (v2, p2) = list(values.items())[:2]
        self.add(raw_class(t.guard_raw, t.is_specialization), t.guard_raw, t.loc, p2, p1,
               f"the kernel guards on {t.guard_raw} (torch's expression, evaluated at the two points, not "
                 f"proved): {v1} at the witness, {v2} at the counterexample")


def _related(keep: set[str], facts: tuple[E.Node, ...]) -> tuple[set[str], list[E.Node]]:
    """The guard's dims with every dim a fact ties to them (transitively), and those facts."""
    keep, used = set(keep), []
    grew = True
    while grew:
        grew = False
        for f in facts:
            names = E.free_names(f)
            if f not in used and names & keep:
                used.append(f)
                grew = grew or not names <= keep
                keep |= names
    return keep, used


def _guard_dims(t: Guarded) -> list[str]:
    from .._torch.translate import dims_of

    return sorted(dims_of(t.guard_expr)) if t.guard_expr is not None else []


def _value(t: Guarded, point: dict[str, int]) -> Any:
    from ..trace.run import guard_value_at

    return guard_value_at(t, point)


def _point(p: dict[str, int] | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in (p or {}).items())


__all__ = ["RELATION", "AuditExplorer", "Finding", "OpAudit", "trace_inputs"]
