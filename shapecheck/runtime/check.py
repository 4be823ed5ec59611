"""Checking one fuzz example: ``Checker`` runs the meta kernel on meta tensors and under a static FakeTensorMode
against the contract (check 1), then, where the op has a runtime reference (``reference.reference_for``), output 0
against the runtime's (check 2) and the runtime's values against the math (check 3).

Checks 2 and 3 follow ``ref check``: dispatch (SC010), whether the runtime accepts the input (SC014), output 0
against the meta kernel's (SC011: shape; dtype and density too) and the runtime's values against the float64
math (SC012), with the rule codes, tolerances, quirks and contract suppressions ``ref check`` uses.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from .._torch import core as C
from ..contract.model import BoundCase, BoundPath, Contract
from ..kernel.sources import Kernel, NotApplicable
from ..logic import expr as E
from ..logic.compiled import fast_holds
from ..search.examples import Example, largest_tensor
from ..search.plan import DEFAULT_MAX_ELEMENTS
from ..trace.run import call_args, concrete_size, kernel_failure, made
from .fuzz_report import CHECK_RULES, FAILURE_TYPES, Failure, FuzzFailure
from .reference import Unmodelled, accepted_by, compare_values, live_runtime_suppressions, reference_for

_PROBE = object()  # stands for a tensor argument when probing the kernel's signature


class Checker:
    """Runs the three checks on one example; raises a FuzzFailure subclass on the first that fails."""

    def __init__(self, contract: Contract, kernel: Kernel, *, eras: tuple[str, ...] = (),
                 max_elements: int = DEFAULT_MAX_ELEMENTS, replay: Callable[[str], str] | None = None,
                 device: str = "cpu"):
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
        self.fake = C.static_fake_mode()
        self.timings: dict[str, float] = {}
        self.notes: Counter[str] = Counter()
        self.paths: Counter[str] = Counter()
        self.count = 0

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

        # Examples are small: one intra-op thread is as fast, and on a loaded machine OpenMP's barriers
        # can stall a 1 ms matmul for a second (measured on 2 shared cores).
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            self._check(ex)
        finally:
            torch.set_num_threads(threads)

    def _check(self, ex: Example) -> None:
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
        if largest_tensor(ex) > self.max_elements:
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
        """Check 1: the meta kernel on meta tensors and under a static FakeTensorMode; returns its outputs (on
        meta tensors)."""
        dims = ex.values
        start = time.perf_counter()
        outs = _call(self.kernel, ex.arguments("meta"), ex, fail, "meta")
        self._time("meta", start)
        start = time.perf_counter()
        with self.fake:
            fake_outs = _call(self.kernel, ex.arguments(None), ex, fail, "FakeTensorMode")
        self._time("fake", start)
        paths = [p for ps in holding.values() for p in ps]
        if not paths:
            self.notes["no contract path holds: output shapes unchecked"] += 1
        for check, got in (("meta-shape", outs), ("fake-shape", fake_outs)):
            for p in paths:
                for j, want in enumerate(p.outputs):
                    if want is None:
                        continue
                    expected = E.evaluate(want, dims)
                    actual = describe(got[j]) if j < len(got) else "nothing"
                    if actual != fmt_value(expected):
                        raise fail(check, fmt_value(expected), actual,
                                   f"output {j} is {actual} but path {p.id}@{p.era} says {fmt_value(expected)}")
        for j, (a, b) in enumerate(zip(outs, fake_outs)):
            if describe(a) != describe(b) or dtype_name(a) != dtype_name(b):
                raise fail("fake-shape", f"{describe(a)} {dtype_name(a)}", f"{describe(b)} {dtype_name(b)}",
                           f"output {j} under FakeTensorMode differs from the meta tensor run")
        return outs

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
        if ids and pid is not None and pid not in ids and not self._accepted("SC010", ids, ex, mismatch):
            raise fail("runtime", "/".join(ids), str(pid), f"the runtime ({era}) takes {rpath}; the contract's "
                       f"`when` names {'/'.join(ids)}", "SC010")
        if error is not None:
            what = f"{era}: the runtime rejects the input ({type(error).__name__})"
            claim = [pid] if pid in ids else ids
            if ids and not self._accepted("SC014", claim, ex, f"{what} on contract path {'/'.join(claim)}"):
                where = f"{era}, {rpath}" if rpath is not None else ref.describe(())
                raise fail("runtime", "outputs", type(error).__name__, f"the runtime ({where}) raises "
                           f"{type(error).__name__} on an input contract path {'/'.join(claim)} admits: "
                           f"{str(error).strip().splitlines()[0][:200]}", "SC014") from error
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
        if want != got:
            shape = describe(ref0) != describe(out0)
            code = "SC011" if shape and ids else None
            if shape and self._accepted("SC011", [pid], ex,
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
            why = outputs_differ(m, r)
            if why is None:
                continue
            shape = why.startswith("shape")
            code = "SC011" if shape and ids and j == 0 else None
            if code and self._accepted("SC011", ids, ex, f"the runtime's output {j} differs from the contract"):
                continue
            if code is None and self._accepted("SC015", ids, ex, f"output {j} of the meta kernel differs "
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
            if not self._accepted("SC012", [ref.path_id(rpath)], ex, accept):
                raise fail("values", f"{tuple(ref_math.shape)} values", describe(ref0), f"the runtime ({era}, "
                           f"{rpath}) returns {ref0.numel()} values, the math {ref_math.numel()}", "SC012")
            return
        atol, rtol = ref.tolerance(args, dtype_name(ref0))
        bad = compare_values(ref0, ref_math, atol, rtol)
        if bad is not None and not self._accepted("SC012", [ref.path_id(rpath)], ex, accept):
            raise fail("values", f"{bad.want:.6g} (math)", f"{bad.got:.6g}",
                       f"the runtime ({era}, {rpath}) differs from the math at index {bad.index} "
                       f"({bad.bad} of {bad.total} values; atol={atol}, rtol={rtol})", "SC012")


    def _accepted(self, rule: str, path_ids: list[str], ex: Example, note: str) -> bool:
        """Whether a ``[[suppress]]`` of ``rule`` on one of ``path_ids`` accepts the deviation; if so, count
        ``note`` (with the rule) as a note."""
        if any(accepted_by(self.accepted, rule, pid, ex.case.id) for pid in path_ids):
            self.notes[f"{note}, accepted by the contract's [[suppress]] ({rule})"] += 1
            return True
        return False


def _call(kernel: Kernel, args: Mapping[str, Any], ex: Example, fail: _Fail, where: str) -> list[Any]:
    pos, kw = call_args(kernel, ex.case, made(args), lambda a: concrete_size(a, ex.values))
    try:
        result = kernel.fn(*pos, **kw)
    except BaseException as err:  # noqa: BLE001 - the kernel failed on a valid input (sys.exit too): a finding
        if not kernel_failure(err):
            raise
        raise fail("kernel-error", "outputs", f"{type(err).__name__}",
                   f"the meta kernel raised {type(err).__name__} on {where} tensors: "
                   f"{str(err).strip().splitlines()[0] if str(err).strip() else ''}") from err
    return list(result) if isinstance(result, (tuple, list)) else [result]


class _Fail:
    """Makes the FuzzFailure of one example: ``raise fail(check, expected, got, message)``."""

    def __init__(self, checker: Checker, ex: Example, holding: dict[str, list[BoundPath]]):
        self.checker = checker
        self.ex = ex
        self.holding = holding
        self.runtime_paths: dict[str, str] = {}  # era -> the path the runtime took (filled by check 2)

    def __call__(self, check: str, expected: str, got: str, message: str, code: str | None = None) -> FuzzFailure:
        ex, replay = self.ex, self.checker.replay
        paths = {era: [p.id for p in ps] for era, ps in self.holding.items()}
        f = Failure(check, ex.text(), ex.case.id, ex.values, ex.seed, paths, dict(self.runtime_paths), expected,
                    got, message, replay(ex.text()) if replay else "", code or CHECK_RULES[check])
        return FAILURE_TYPES[check](f)


def _layout(x: Any) -> str:
    if not hasattr(x, "stride"):
        return describe(x)
    return f"{describe(x)} {dtype_name(x)} strides {tuple(x.stride())}"


def describe(x: Any) -> str:
    """An output as a report shows it: a tensor's shape, an integer, 'nothing' or a type name."""
    import torch

    if isinstance(x, torch.Tensor):
        return str(tuple(int(d) for d in x.shape))
    if isinstance(x, (int, torch.SymInt)):
        return str(int(x))
    return "nothing" if x is None else type(x).__name__


def fmt_value(v: Any) -> str:
    return str(tuple(v)) if isinstance(v, tuple) else str(v)


def dtype_name(x: Any) -> str:
    return str(x.dtype).replace("torch.", "") if hasattr(x, "dtype") else "-"


def density(x: Any) -> str:
    # The contract language states no strides, so only density is compared (both sides are dense tensors).
    if not hasattr(x, "is_contiguous"):
        return "-"
    return "contiguous" if x.is_contiguous() else f"strided{tuple(x.stride())}"
