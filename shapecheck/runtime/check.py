"""Checking one fuzz example: ``Checker`` runs the meta kernel on meta tensors and under a static FakeTensorMode
against the contract (check 1), then, where the op has a runtime reference (``runtime.reference_for``), output 0
against the runtime's (check 2) and the runtime's values against the math (check 3).
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
from ..trace.run import call_args, concrete_size, made
from .fuzz_report import CHECK_RULES, FAILURE_TYPES, Failure, FuzzFailure, describe, dtype_name, fmt_value
from .fuzz_runtime import runtime_checks
from .reference import live_runtime_suppressions, reference_for

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
        outs = _meta_checks(self, ex, holding, fail)
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
            runtime_checks(self, ex, era, holding[era], args, outs, fail)


def _meta_checks(checker: Checker, ex: Example, holding: dict[str, list[BoundPath]], fail: _Fail) -> list[Any]:
    """Check 1: the meta kernel on meta tensors and under a static FakeTensorMode; returns its outputs (on
    meta tensors)."""
    dims = ex.values
    start = time.perf_counter()
    outs = _call(checker.kernel, ex.arguments("meta"), ex, fail, "meta")
    checker._time("meta", start)
    start = time.perf_counter()
    with checker.fake:
        fake_outs = _call(checker.kernel, ex.arguments(None), ex, fail, "FakeTensorMode")
    checker._time("fake", start)
    paths = [p for ps in holding.values() for p in ps]
    if not paths:
        checker.notes["no contract path holds: output shapes unchecked"] += 1
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


def _call(kernel: Kernel, args: Mapping[str, Any], ex: Example, fail: _Fail, where: str) -> list[Any]:
    pos, kw = call_args(kernel, ex.case, made(args), lambda a: concrete_size(a, ex.values))
    try:
        result = kernel.fn(*pos, **kw)
    except Exception as err:  # the kernel failed on a valid input: a finding
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
