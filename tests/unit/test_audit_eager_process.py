"""A death of the eager worker is a point's only where a fresh process dies there too (hunt 48: torch-harmonics'
kernels left the reused worker broken, so SIGABRTs and time-outs were laid on later, innocent points, and two
identical runs gave 79 and 77 findings). Kernel: tests/kernels/audit_poison.py."""

from __future__ import annotations

import os

import pytest

LIBRARY = "tests.kernels.audit_poison"


@pytest.mark.slow  # an audit
@pytest.mark.skipif(not hasattr(os, "fork"), reason="the audit's eager worker is a forked process")
def test_a_process_an_earlier_call_broke_is_no_points_crash_and_the_run_says_so():
    from shapecheck.audit.run import run_audit

    def once():
        run = run_audit(("auditpoison::*",), (LIBRARY,), jobs=1)
        (rec,) = run.records
        return rec

    rec = once()
    assert rec["findings"] == [], rec["findings"]
    assert rec["status"] == "clean", rec
    note = next(n for n in rec["notes"] if "after earlier calls" in n)
    assert "SIGABRT" in note and "a fresh process answered each otherwise" in note
    assert once()["findings"] == []  # and again: the run does not depend on which call came first


def test_a_death_in_a_fresh_worker_is_the_points_own():
    """The worker is asked again only where it had answered other calls: a kernel that dies on its first call
    dies in the fresh one too, and that is reported."""
    from shapecheck.audit.eager import EagerResult, EagerWorker

    calls = []

    class Scripted(EagerWorker):
        def _answer(self, *args):
            calls.append(args[2])
            return EagerResult(False, "the eager kernel killed its process (SIGSEGV)", crashed=True)

    w = Scripted()
    res = w.call("x::y", None, {"A": 1})
    assert res.crashed and calls == [{"A": 1}]  # a fresh worker: asked once
    w._served, w._proc = 3, type("Alive", (), {"is_alive": lambda self: True})()
    res = w.call("x::y", None, {"A": 2})
    assert res.crashed and not res.broken_by_earlier and calls[1:] == [{"A": 2}, {"A": 2}]  # asked again, dies again


@pytest.mark.slow  # a forked worker that imports the op's eager kernel
@pytest.mark.skipif(not hasattr(os, "fork"), reason="the audit's eager worker is a forked process")
def test_a_constant_whose_class_pickle_cannot_find_reaches_the_eager_kernel():
    """torch 2.13's ``torch._C._ScalingType`` calls itself ``torch.nn.functional._ScalingType``, so pickle cannot
    send one: the OpInfo sample of ``_scaled_mm_v2`` passes such members, and its whole audit was an internal
    error (exit 4). The request now carries it by the module attribute that holds its class."""
    import pickle

    import torch

    from shapecheck.audit.eager import EagerWorker, _dumps
    from shapecheck.audit.inputs import OpInputs

    tensor_wise = torch.nn.functional.ScalingType.TensorWise
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(tensor_wise)  # the standard way fails: the test would not show the fix otherwise
    assert pickle.loads(_dumps(tensor_wise)) is tensor_wise
    swizzle = torch.nn.functional.SwizzleType.NO_SWIZZLE
    f8 = "float8_e4m3fn"
    scale = ("list", [("tensor", ("s_0",), (1,), "float32")])
    inputs = OpInputs("aten::_scaled_mm_v2.default", "opinfo", (
        ("self", False, ("tensor", ("a_0", "a_1"), (2, 3), f8)),
        ("mat2", False, ("tensor", ("b_0", "b_1"), (4, 5), f8)),
        ("scale_a", False, scale), ("recipe_a", False, ("list", [("const", tensor_wise)])),
        ("swizzle_a", False, ("list", [("const", swizzle)])),
        ("scale_b", False, scale), ("recipe_b", False, ("list", [("const", tensor_wise)])),
        ("swizzle_b", False, ("list", [("const", swizzle)])),
        ("bias", False, ("const", None)), ("out_dtype", False, ("dtype", "bfloat16"))))
    w = EagerWorker()
    try:
        res = w.call("aten::_scaled_mm_v2.default", inputs, dict(inputs.dims()))
    finally:
        w.close()
    assert not res.crashed and res.ok is False, res  # the eager kernel's own answer: 2x3 and 4x5 do not multiply
    assert "cannot be multiplied" in res.error, res.error
