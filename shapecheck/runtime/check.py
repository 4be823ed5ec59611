"""Checking one fuzz example: ``Checker`` runs the meta kernel on meta tensors and under a static FakeTensorMode
against the contract (check 1), then, where the op has a runtime reference (``reference.reference_for``), output 0
against the runtime's (check 2) and the runtime's values against the math (check 3).

Checks 2 and 3 follow ``ref check``: dispatch (SC010), whether the runtime accepts the input (SC014), output 0
against the meta kernel's (SC011: shape; dtype and density too) and the runtime's values against the float64
math (SC012), with the rule codes, tolerances, quirks and contract suppressions ``ref check`` uses."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from ..contract import suppressions
from ..contract.model import BoundCase, BoundPath, Contract
from ..errors import said
from ..findings import PathId
from ..kernel.sources import Kernel, NotApplicable
from ..logic import expr as E
from ..logic.compiled import fast_holds
from ..rules import RuleCode
from ..search.examples import TORCH_ELEMENTS, Example, largest_storage, largest_tensor
from ..search.plan import DEFAULT_MAX_ELEMENTS
from ..trace import reuse
from ..trace.reuse import TraceReuse
from ..trace.run import call_args
from .fuzz_report import CHECK_RULES, FAILURE_TYPES, Failure, FuzzFailure
from .outputs import as_verify_says, contract_differences, density, describe, dtype_name, same_shape
from .reference import Unmodelled, accepted_by, compare_values, live_runtime_suppressions, reference_for

_PROBE = object()  # stands for a tensor argument when probing the kernel's signature


#: guard failures kept per run (``Checker.collected``); the rest are counted in a note
MOST_GUARDS = 8


class Checker:
    """Runs the three checks on one example; raises a FuzzFailure subclass on the first that fails (a guard's is kept
    in ``collected`` instead, where that is set)."""

    def __init__(self, contract: Contract, kernel: Kernel, *, eras: tuple[str, ...] = (),
                 max_elements: int = DEFAULT_MAX_ELEMENTS, replay: Callable[[str], str] | None = None,
                 device: str = "cpu", both_modes: bool = False):
        self.contract = contract
        self.kernel = kernel
        self.eras = eras or contract.eras
        self.max_elements = max_elements
        self.replay = replay
        self.reference, why = reference_for(contract.op, device=device)
        if self.reference is None:
            self.reference_note = f"{why}: checks 2 and 3 skipped"
        else:
            self.reference_note = self.reference.describe(self.eras)
        # runtime deviations the contract accepts ([[suppress]] of SC010-SC014, as `ref check` reads them)
        self.accepted = live_runtime_suppressions(contract)
        # guards the contract accepts ([[suppress]] of SC001, SC016, SC022...), as verify and gate read them
        self.accepted_guards = suppressions.in_force(contract.suppressions)
        self.both_modes = both_modes
        self._decided: dict[tuple, str | None] = {}  # (case, guard, export only) -> the rule it breaks
        self.from_two: dict[tuple, bool] = {}  # (case, guard, its symbols' names) -> export_program's answer
        self._z3: Any = None
        # backed-size runs reused wherever an example meets all of an earlier run's guards (trace/reuse.py)
        self.reuse = TraceReuse() if reuse.ENABLED else None
        self.timings: dict[str, float] = {}
        self.notes: Counter[str] = Counter()
        self.paths: Counter[str] = Counter()
        self.count = 0
        # where set (``fuzz op``'s search), a guard failure is kept here, once per rule and place, instead of raised:
        # a guard is judged over the whole domain, so raised it failed the first example and the search stopped
        # soon after, never reaching an output that is wrong at some sizes only (hunt 49)
        self.collected: dict[tuple[str, str], Failure] | None = None
        self._collected_seen: set[tuple[str, str]] = set()
        self._pending: list[tuple[Kernel, Any, _Fail, bool]] = []

    def applicable(self, case: BoundCase) -> bool:
        """False when the kernel cannot be called on this case (an argument it lacks)."""
        try:
            call_args(self.kernel, case, lambda a: _PROBE, lambda a: _PROBE)
        except NotApplicable:
            return False
        return True

    def _time(self, key: str, start: float) -> None:
        self.timings[key] = self.timings.get(key, 0.0) + time.perf_counter() - start

    def check(self, ex: Example) -> None:
        """Run the checks on one example; raise a FuzzFailure subclass on the first that fails."""
        import torch

        from .._torch.core import numpy_absence_known, quiet_torch_logging

        # Examples are small: one intra-op thread is as fast, and on a loaded machine OpenMP's barriers
        # can stall a 1 ms matmul for a second (measured on 2 shared cores).
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            # once per example, not per trace, as verify's run has them (each costs about 1 ms: logging.disable
            # clears every logger's cache, and sym_max imports numpy); not around Hypothesis's engine, which
            # takes an entry "numpy" in sys.modules for the module
            with quiet_torch_logging(), numpy_absence_known():
                self._check(ex)
        finally:
            torch.set_num_threads(threads)

    def _check(self, ex: Example) -> None:
        """Every check of the example; the guards the fake runs installed last: a guard is judged over the whole
        domain, so raised first it would stand for every example and hide the example's own output failures
        from the search (hunt 49: a planted stride bug behind a pooling guard)."""
        self._pending = []
        self._check_outputs(ex)
        for kernel, run, fail, counted in self._pending:
            self._guards(kernel, run, ex, fail, counted)
        self._pending = []

    def _check_outputs(self, ex: Example) -> None:
        if max(largest_tensor(ex), largest_storage(ex)) > TORCH_ELEMENTS:  # not counted (only these: inconclusive)
            return self.notes.update(["example beyond what torch can address (2**63 - 1 elements): not run"])
        self.count += 1
        holding = {era: [p for p in ex.case.paths if p.era == era and fast_holds(p.when, ex.values)]
                   for era in self.eras}
        for era, ps in holding.items():
            for p in ps:
                self.paths[f"{p.id}@{era}"] += 1
        fail = _Fail(self, ex, holding)
        outs = self._meta_checks(ex, holding, fail)
        if self.reference is None:
            return
        if max(largest_tensor(ex), largest_storage(ex)) > self.max_elements:
            self.notes["example beyond the size bound: runtime and values unchecked"] += 1
            return
        # 2. output 0 against the runtime reference; 3. the reference's values against the math
        start = time.perf_counter()
        args = self.reference.arguments(ex.case, ex.values, ex.seed)
        self._time("tensors", start)
        for era in self.eras:
            if era not in self.reference.eras:
                self.notes[f"{era}: the reference has no such era"] += 1
                continue
            self._runtime_checks(ex, era, holding[era], args, outs, fail)

    def _meta_checks(self, ex: Example, holding: dict[str, list[BoundPath]], fail: _Fail) -> list[Any]:
        """Check 1: the fake kernel run as torch runs fakes (FakeTensorMode with a ShapeEnv, backed sizes at the
        example: ``fake_run``), for the kernel torch.export runs and, where plain FakeTensorMode runs another,
        that one too (its failures count with ``both_modes``, else they are notes): the kernel raises nothing,
        installs no guard that restricts the contract's dims, and returns the contract's outputs (shapes, and
        what output tables state: dtype, layout, None, a data-dependent size's range). Where a dynamic dim is 0
        or 1, the program torch.export builds (traced from 2) is run at the example too. Returns the export
        kernel's outputs at the example (meta tensors; ``DataDependent`` where the data decides a size)."""
        paths = [p for ps in holding.values() for p in ps]
        if not paths:
            self.notes["no contract path holds: output shapes unchecked"] += 1
        runs = [("meta-shape", self.kernel, True)]
        if self.kernel.other is not None:
            runs.append(("fake-shape", self.kernel.other, self.both_modes))
        found = []
        for check, kernel, counted in runs:
            start = time.perf_counter()
            outs = self._fake(kernel, ex, fail, counted)
            self._time("fake" if check == "fake-shape" else "meta", start)
            if outs is None:
                continue
            found.append(outs)
            # what an output table states (dtype, layout, None) is the runtime reference's to compare where there
            # is one (SC015: the real op's layout); without one, the table is all there is to compare with
            tables = "all" if self.reference is None else "sizes"
            for code, expected, actual, message in self._differences(ex)(paths, outs, ex.values, tables):
                self._failed(fail, counted, kernel, check, expected, actual, message, code)
        if len(found) == 2:
            for j, (a, b) in enumerate(zip(*found)):
                if describe(a) != describe(b) or dtype_name(a) != dtype_name(b):
                    self._failed(fail, self.both_modes, self.kernel.other, "fake-shape",
                                 f"{describe(a)} {dtype_name(a)}", f"{describe(b)} {dtype_name(b)}",
                                 f"output {j} under plain FakeTensorMode differs from torch.export's kernel's")
        if found and paths:
            from .export_program import check_export_program

            check_export_program(self, ex, paths, fail, self._differences(ex))
            self._static_sizes(ex, found[0], fail)
        return found[0] if found and runs[0][2] else []

    def _differences(self, ex: Example) -> Callable[..., list[tuple[RuleCode, str, str, str]]]:
        """``contract_differences`` less what the contract accepts: a ``[[suppress]]`` of the rule on the case and
        path (a ``message`` in the difference's text), as verify and gate read it of the same finding; each
        accepted one is a note."""
        def differences(paths: list[BoundPath], outs: list[Any], dims: Mapping[str, int],
                        tables: str = "none") -> list[tuple[RuleCode, str, str, str]]:
            out = []
            for p in paths:
                for d in contract_differences([p], outs, dims, tables):
                    code, message = d[0], d[3]
                    names, said = as_verify_says(p, d)
                    if any(suppressions.covers(s, code, ex.case.id, names, PathId(p.id, p.era))
                           and (not s.message or s.message in said) for s in self.accepted_guards):
                        self.notes[f"{message.split(' is ')[0]} differs from path {p.id}@{p.era}, accepted by the contract's "
                                   f"[[suppress]] ({code})"] += 1
                        continue
                    out.append(d)
            return out

        return differences

    def _static_sizes(self, ex: Example, backed: list[Any], fail: _Fail) -> None:
        """The kernel at the example on plain sizes must give the backed run's outputs (``static_sizes``)."""
        from .._torch import core as C
        from ..trace.fake_run import static_fake_run
        from .static_sizes import HOW, differences

        start = time.perf_counter()
        try:
            run = static_fake_run(self.kernel, ex.case, ex.values)
        except NotApplicable:
            return
        finally:
            self._time("meta", start)
        if run.error is not None:
            if isinstance(run.error, C.DATA_ERRORS):
                return
            text = str(run.error).strip().splitlines()[0] if str(run.error).strip() else ""
            raise fail("kernel-error", "outputs", type(run.error).__name__, f"the meta kernel raised "
                       f"{type(run.error).__name__} {HOW}, not with backed sizes: {text}", RuleCode.KERNEL_ERROR) \
                from run.error
        for code, expected, actual, message in differences(run.outputs, backed):
            raise fail("meta-shape", expected, actual, message, code)

    def _fake(self, kernel: Kernel, ex: Example, fail: _Fail, counted: bool) -> list[Any] | None:
        from ..trace.fake_run import fake_run

        run = fake_run(kernel, ex.case, ex.values, reuse=self.reuse, record_outputs=kernel is self.kernel)
        if run.error is not None:
            err = run.error
            text = said(err).strip().splitlines()[0] if said(err).strip() else ""
            self._failed(fail, counted, kernel, "kernel-error", "outputs", type(err).__name__,
                         f"the meta kernel raised {type(err).__name__} under FakeTensorMode: {text}", cause=err)
            return None
        self._pending.append((kernel, run, fail, counted))  # judged once the example's other checks pass
        return run.outputs

    def _guards(self, kernel: Kernel, run: Any, ex: Example, fail: _Fail, counted: bool) -> None:
        """A guard the run installed at this example that does not hold on the whole range of the contract's
        dynamic dims: the kernel branches on them (SC001), needs a value (SC003), narrows a range (SC004), or
        torch's helper did (SC022). A plain guard of the kernel's own counts over the whole domain (0 and 1
        too, as verify's); a guard_or_false/guard_or_true, a helper's or one torch's C++ code asked, only where
        torch.export would install it (sizes from 2), and never one about a size of 1."""
        from .._torch import translate as T
        from .._torch.backed import OUTPUT_METADATA
        from ..logic import expr as E
        from ..logic.solver import Decision

        if not self.contract.guard_free:
            return
        judged, ones, left_to_wider = self._sorted_guards(run, ex)
        # a dim at 0 is a constant in the run (``fake_run``): the guards read it as 0 (hunt 66: replication_pad1d's
        # ``W - PL + PR >= 1`` read ``W - PL >= 1`` at PR = 0, which the domain's ``W - PL + PR >= 2`` implies there)
        symbolic = set(run.names.values())
        zeros = tuple(d.name for d in ex.case.dims if ex.values.get(d.name) == 0 and d.name not in symbolic)
        facts = [*ones, *(E.Cmp("==", E.Var(d), E.Const(0)) for d in zeros)]
        for g, node, names, export_only in judged:
            if facts and node is not None and self._solver().decide([ex.case.domain, *facts], node)[0] is Decision.TRUE:
                continue  # it follows from the guards about a size of 1 left aside (torch replaced B by 1 after
                # expand's ``B == 1``, so the kernel's ``B2 == B`` reads ``B2 == 1``, which the domain's B2 == B
                # implies there: hunt 63), or from the dims at 0: no range it restricts beyond theirs
            text = E.to_text(node) if node is not None else T.rename_symbols(g.expr, run.names)
            key = (ex.case.id, text, export_only, zeros)
            if key not in self._decided:
                self._decided[key] = self._finding(ex.case, g, node, run.names, names, export_only, zeros)
            code = self._decided[key]
            if code is None:
                continue
            who = f"{g.origin} (reached from the kernel's line {g.kernel_line.line})" if g.origin and g.kernel_line \
                else (g.origin or "the kernel")
            at = f" at {g.kernel_line.file}:{g.kernel_line.line}" if g.kernel_line and not g.origin else ""
            why = ("torch cannot decide it from the Dim ranges, so torch.export installs it and rejects them"
                   if code == RuleCode.GUARD_TORCH_CANNOT_DISCHARGE or (code == RuleCode.GUARD_IN_TORCH_HELPER and g.fallback and self._settled(ex.case, node))
                   else f"it does not hold on the whole range of {', '.join(sorted(names))}")
            message = (f"{who}{at} installs the guard {text} when the example runs with backed sizes under "
                       f"FakeTensorMode (as torch.compile's dynamic shapes run it; torch.export only where its "
                       f"trace reaches the same code with such sizes), and {why}")
            # a suppression's ``message`` narrows it to findings whose text holds it, as verify and gate read it
            if any(suppressions.covers(s, code, ex.case.id, names) and (not s.message or s.message in message)
                   for s in self.accepted_guards):
                self.notes[f"the guard {text}, accepted by the contract's [[suppress]] ({code})"] += 1
                continue
            try:
                self._failed(fail, counted, kernel, "guard", "no guard on the dynamic dims", text, message, code)
            except FuzzFailure as err:
                if self.collected is None:
                    raise
                # one failure per rule and place: the same fix, whatever the case (the kernel's line; torch's
                # record of the outputs, whichever of its helpers asked)
                place = f"{g.kernel_line.file}:{g.kernel_line.line}" if g.kernel_line else \
                    OUTPUT_METADATA if g.origin.startswith(OUTPUT_METADATA) else g.origin
                key = (str(code), place)
                if key in self.collected:
                    if (ex.case.id, text) not in self._collected_seen:
                        self._collected_seen.add((ex.case.id, text))
                        self.notes[f"{code} at {place}: the same place's guard in another case or form "
                                   "(reported once)"] += 1
                elif len(self.collected) < MOST_GUARDS:
                    self.collected[key] = err.failure
                    self._collected_seen.add((ex.case.id, text))
                else:
                    self.notes[f"more guard failures than the {MOST_GUARDS} reported"] += 1
        if left_to_wider:
            self.notes["examples where an output size is 0 or 1 and torch's code guarded it (torch.export makes such "
                       "a size a constant: docs/findings.md F13): its guards left to the examples where it is 2 or "
                       "more"] += 1

    def _sorted_guards(self, run: Any, ex: Example) -> tuple[list[tuple[Any, Any, set[str], bool]], list[Any], bool]:
        """The run's guards on dynamic dims to judge, each (guard, its node or None, its dims, export_only); the
        nodes of those about a size of 1 left aside (``_at_a_size_of_one``); whether an output size of 0 or 1 left
        some to the wider examples."""
        from .._torch import translate as T
        from ..logic import expr as E

        left_to_wider = False
        judged, ones = [], []
        for g in run.guards:
            # torch's C++ code's guard too (``g.native``): a contiguity test's ``Ci > 1``, asked because a size of 1 is
            # kept symbolic here, is decided from export's Dim ranges (sizes from 2) with no guard (hunt 50)
            export_only = bool(g.origin) or g.fallback or g.native
            try:
                node = T.to_node(g.expr, run.names)
                names = E.free_names(node)
            except T.Unsupported:
                node, names = None, T.dims_of(T.with_dim_names(g.expr, run.names))
            if not names or not any(self.contract.dim(n).dynamic for n in names if n in self.contract.dim_names):
                continue
            if export_only and self._at_a_size_of_one(run, ex, names):
                left_to_wider = left_to_wider or run.recorded is False
                ones += [node] if node is not None else []
                continue
            judged.append((g, node, names, export_only))
        return judged, ones, left_to_wider

    def _at_a_size_of_one(self, run: Any, ex: Example, names: set[str]) -> bool:
        """Whether torch's guard (a helper's, a fallback, torch's C++ code's) at this example is left to others:
        an output size was 0 or 1 (``run.recorded`` False), and torch's code asked its C++ contiguity tests about
        it (fake_impls' conv: ``max(1, H - 2) * max(1, W - 2) <= 1``), which torch.export makes a constant (F13;
        verify runs export's trace where it is 2 or more, as fuzz does at its other examples); or it names a
        dynamic dim at 1, kept symbolic to see the kernel's own branches at 1, which no torch mode makes: export
        and torch.compile make 1 a constant, and from 2 torch's code may take another path (fake_impls' conv: its
        C++ backend choice ``N < 16`` and contiguity tests ``Ci <= 1`` at sizes of 1 only; hunt 50)."""
        if run.recorded is False:
            return True
        return any(ex.values.get(n) == 1 for n in names if n in self.contract.dim_names
                   and self.contract.dim(n).dynamic)

    def _finding(self, case: BoundCase, g: Any, node: Any, names: dict, dims: set[str],
                 export_only: bool, zeros: tuple[str, ...] = ()) -> RuleCode | None:
        """The rule a guard the run installed breaks, or None: it is false somewhere in the case's domain (from 2
        up for ``export_only``; with the ``zeros``, the dims the run made the constant 0, at 0) and true elsewhere
        (z3 where it translated, else torch's expression at real points): a branch (``guard_rule``); it holds (or
        fails) on the whole domain but torch cannot decide it from the Dim ranges, so torch.export installs it and
        rejects the range: SC016, SC022 for a helper's."""
        from .._torch import static as CS
        from .._torch import translate as T
        from .._torch.backed import OUTPUT_METADATA
        from ..logic import expr as E
        from ..logic.solver import Decision
        from ..prove.helper_guards import export_floors
        from ..prove.obligations import probe_points
        from ..prove.torch_decides import TorchView

        floors = export_floors(case, self._solver()) if export_only else []
        conds = [case.domain, *(E.Cmp("==", E.Var(d), E.Const(0)) for d in zeros),
                 *(f for f in floors if not E.free_names(f) & set(zeros))]
        named = T.with_dim_names(g.expr, names)
        if node is not None:
            verdict = self._solver().decide(conds, node)[0]
            if verdict is Decision.BOTH:
                return guard_rule(g, node)
            if verdict not in (Decision.TRUE, Decision.FALSE) or g.origin.startswith(OUTPUT_METADATA):
                return None  # the output record runs after export's constraint check: a guard of it that holds on
                # the whole domain rejects no range (verify's ``_undischarged``)
            try:
                rejects = TorchView(case, self._solver()).rejects(named, [])
            except CS.TorchCannotSay:
                return None
            # one that holds on the whole domain, the kernel's or a helper's, that torch cannot decide: SC016, as
            # verify names it (a helper's was SC022 here, "does not hold on the whole range", hunt 49)
            return RuleCode.GUARD_TORCH_CANNOT_DISCHARGE if rejects else None
        seen = set()
        for point in probe_points(case, self._solver(), conds, sorted(dims)):
            seen.add(T.value_at(named, point))
            if True in seen and False in seen:
                return guard_rule(g, None)
        return None

    def _settled(self, case: BoundCase, node: Any) -> bool:
        from ..logic.solver import Decision

        return node is not None and self._solver().decide([case.domain], node)[0] in (Decision.TRUE, Decision.FALSE)

    def _solver(self) -> Any:
        if self._z3 is None:
            from ..prove.verify import make_solver

            self._z3 = make_solver(self.contract, 2_000)
        return self._z3

    def _failed(self, fail: _Fail, counted: bool, kernel: Kernel, check: str, expected: str, got: str,
                message: str, code: str | None = None, cause: BaseException | None = None) -> None:
        """Raise the failure, or, for plain FakeTensorMode's kernel without ``both_modes``, count it as a note."""
        if kernel is self.kernel.other:
            message = f"[plain FakeTensorMode ({kernel.name})] {message}"
        if not counted:
            self.notes[f"{message} (not counted: the verdict is torch.export's kernel's; --both-modes counts "
                       "it)"] += 1
            return
        raise fail(check, expected, got, message, code) from cause

    def _runtime_checks(self, ex: Example, era: str, holding: list[BoundPath], args: Mapping[str, Any],
                        outs: list[Any], fail: _Fail) -> None:
        """Checks 2 and 3 in one era of the runtime, in ``ref check``'s order: dispatch (SC010), the runtime
        accepts the input (SC014), output 0 (SC011), values (SC012). ``outs``: the meta kernel's outputs. A
        reference that is the real op (``compares_all_outputs``) compares every output, strides included. A
        deviation the contract accepts with a ``[[suppress]]`` of that rule, as ``ref check`` reads it, is a note."""
        ref, ids = self.reference, [p.id for p in holding]
        out0 = outs[0] if outs else None
        try:
            rpath, real, error = self._run(args, era)
        except Unmodelled as err:
            self.notes[f"{era}: not modelled by the reference: {str(err).splitlines()[0][:80]}"] += 1
            return
        pid = None if rpath is None else ref.path_id(rpath)
        if rpath is not None:
            fail.runtime_paths[era] = rpath
        mismatch = f"{era}: the runtime takes {rpath}, the contract says {'/'.join(ids)}"
        if ids and pid is not None and pid not in ids and not self._accepted(RuleCode.DISPATCH_MISMATCH, ids, ex, mismatch):
            raise fail("runtime", "/".join(ids), str(pid), f"the runtime ({era}) takes {rpath}; the contract's "
                       f"`when` names {'/'.join(ids)}", RuleCode.DISPATCH_MISMATCH)
        if error is not None:
            what = f"{era}: the runtime rejects the input ({type(error).__name__})"
            claim = [pid] if pid in ids else ids
            if ids and not self._accepted(RuleCode.RUNTIME_REJECTS, claim, ex, f"{what} on contract path {'/'.join(claim)}"):
                where = f"{era}, {rpath}" if rpath is not None else ref.describe(())
                raise fail("runtime", "outputs", type(error).__name__, f"the runtime ({where}) raises "
                           f"{type(error).__name__} on an input contract path {'/'.join(claim)} admits: "
                           f"{str(error).strip().splitlines()[0][:200]}", RuleCode.RUNTIME_REJECTS) from error
            if not ids:
                self.notes[what] += 1
            return
        if not ids:
            self.notes[f"{era}: the runtime takes {rpath} where no contract path holds"] += 1
        ref0 = real[0]
        if getattr(ref, "compares_all_outputs", False):
            self._all_outputs(ex, ids, outs, real, fail)
            return
        want = f"{describe(ref0)} {dtype_name(ref0)} {density(ref0)}"
        got = f"{describe(out0)} {dtype_name(out0)} {density(out0)}"
        if want != got and not data_dependent_like(out0, ref0):
            shape = describe(ref0) != describe(out0)
            code = RuleCode.RUNTIME_OUTPUT_SHAPE if shape and ids else None
            if shape and self._accepted(RuleCode.RUNTIME_OUTPUT_SHAPE, [pid], ex,
                                   f"{era}: the runtime's output 0 on {rpath} differs from the contract"):
                return
            raise fail("runtime", want, got, f"output 0 of the meta kernel is {got}; the runtime ({era}, "
                       f"{rpath}) returns {want}", code)
        self._values(ex, era, rpath, args, ref0, fail)


    def _all_outputs(self, ex: Example, ids: list[str], outs: list[Any], real: tuple[Any, ...],
                     fail: _Fail) -> None:
        """Every output of the meta kernel against the real kernel's: shape (SC011 for output 0 on a contract
        path), dtype and significant strides (SC015), as torch's fake-tensor cross-check compares them."""
        from .reference import outputs_differ

        ref = self.reference
        if len(outs) != len(real):
            raise fail("runtime", f"{len(real)} outputs", f"{len(outs)} outputs", f"the meta kernel returns "
                       f"{len(outs)} outputs, the runtime ({ref.describe(())}) {len(real)}")
        for j, (m, r) in enumerate(zip(outs, real)):
            why = None if data_dependent_like(m, r) else outputs_differ(m, r)
            if why is None:
                continue
            shape = why.startswith("shape")
            code = RuleCode.RUNTIME_OUTPUT_SHAPE if shape and ids and j == 0 else None
            if code and self._accepted(RuleCode.RUNTIME_OUTPUT_SHAPE, ids, ex, f"the runtime's output {j} differs from the contract"):
                continue
            if code is None and self._accepted(RuleCode.META_RUNTIME_MISMATCH, ids, ex, f"output {j} of the meta kernel differs "
                                                                      "from the runtime's"):
                continue
            raise fail("runtime", _layout(r), _layout(m), f"output {j} of the meta kernel has {why} "
                       f"({ref.describe(())})", code)


    def _run(self, args: Mapping[str, Any], era: str) -> tuple[str | None, Any, BaseException | None]:
        """(the runtime's path, its outputs, None), or (its path or None, None, what it raised where the real
        op raises too); ``Unmodelled`` propagates."""
        ref, rpath = self.reference, None
        start = time.perf_counter()
        try:
            rpath = ref.select_path(args, era)
            return rpath, tuple(ref.run(args, era, rpath)), None
        except Unmodelled:
            raise
        except ref.rejects as err:
            return rpath, None, err
        finally:
            self._time(ref.name, start)


    def _values(self, ex: Example, era: str, rpath: str, args: Mapping[str, Any], ref0: Any,
                fail: _Fail) -> None:
        """Check 3: the runtime's output 0 against the float64 math, within the dtype's tolerance (SC012)."""
        ref = self.reference
        start = time.perf_counter()
        ref_math = ref.expected(args, era, rpath)
        self._time("math", start)
        if ref_math is None:
            return
        accept = f"{era}: the runtime's values on {rpath} differ from the math"
        if ref_math.numel() != ref0.numel():
            if not self._accepted(RuleCode.RUNTIME_VALUES, [ref.path_id(rpath)], ex, accept):
                raise fail("values", f"{tuple(ref_math.shape)} values", describe(ref0), f"the runtime ({era}, "
                           f"{rpath}) returns {ref0.numel()} values, the math {ref_math.numel()}", RuleCode.RUNTIME_VALUES)
            return
        atol, rtol = ref.tolerance(args, dtype_name(ref0))
        bad = compare_values(ref0, ref_math, atol, rtol)
        if bad is not None and not self._accepted(RuleCode.RUNTIME_VALUES, [ref.path_id(rpath)], ex, accept):
            raise fail("values", f"{bad.want:.6g} (math)", f"{bad.got:.6g}",
                       f"the runtime ({era}, {rpath}) differs from the math at index {bad.index} "
                       f"({bad.bad} of {bad.total} values; atol={atol}, rtol={rtol})", RuleCode.RUNTIME_VALUES)


    def _accepted(self, rule: str, path_ids: list[str], ex: Example, note: str) -> bool:
        """Whether a ``[[suppress]]`` of ``rule`` on one of ``path_ids`` accepts the deviation; if so, count
        ``note`` (with the rule) as a note."""
        if any(accepted_by(self.accepted, rule, pid, ex.case.id) for pid in path_ids):
            self.notes[f"{note}, accepted by the contract's [[suppress]] ({rule})"] += 1
            return True
        return False


class _Fail:
    """Makes the FuzzFailure of one example: ``raise fail(check, expected, got, message)``."""

    def __init__(self, checker: Checker, ex: Example, holding: dict[str, list[BoundPath]]):
        self.checker = checker
        self.ex = ex
        self.holding = holding
        self.runtime_paths: dict[str, str] = {}  # era -> the path the runtime took (filled by check 2)

    def __call__(self, check: str, expected: str, got: str, message: str, code: RuleCode | None = None) -> FuzzFailure:
        ex, replay = self.ex, self.checker.replay
        paths = {era: [p.id for p in ps] for era, ps in self.holding.items()}
        f = Failure(check, ex.text(), ex.case.id, ex.values, ex.seed, paths, dict(self.runtime_paths), expected,
                    got, message, replay(ex.text()) if replay else "", code or CHECK_RULES[check])
        return FAILURE_TYPES[check](f)


def _layout(x: Any) -> str:
    if not hasattr(x, "stride"):
        return describe(x)
    return f"{describe(x)} {dtype_name(x)} strides {tuple(x.stride())}"


def data_dependent_like(meta: Any, real: Any) -> bool:
    """A fake output with data-dependent sizes (``DataDependent``) that fits the runtime's: the known sizes
    equal, the dtype the same (its strides are not known)."""
    from .._torch.backed import DataDependent

    if not isinstance(meta, DataDependent):
        return False
    if meta.dtype != getattr(real, "dtype", None) or describe(real) == "nothing":
        return False
    return same_shape(describe(meta), describe(real))


def guard_rule(g: Any, node: Any) -> RuleCode:
    """The rule of a guard the fake run installed: torch's helper (SC022), a torch._check (SC004), a size's
    value (SC003: ``dim == constant``, a dim itself pinned, as ``int(n)`` pins it), else a branch (SC001:
    ``N % 2 == 1`` is a branch on the parity, not a value)."""

    if g.origin:
        return RuleCode.GUARD_IN_TORCH_HELPER
    if g.assertion:
        return RuleCode.ASSERT_NARROWS_RANGE
    value = isinstance(node, E.Cmp) and node.op == "==" and any(
        isinstance(a, E.Var) and isinstance(b, E.Const) for a, b in ((node.left, node.right), (node.right, node.left)))
    return RuleCode.VALUE_SPECIALIZATION if value else RuleCode.GUARD_ON_DYNAMIC_DIM
