"""``_torch.continued``: a trace that answers a condition torch cannot decide goes on with that side assumed
(torch then decides the same condition, and what follows from it, itself), the side is no assert of the
kernel's, and a condition the caller does not answer stops the trace as it did."""

import pytest
import torch

from shapecheck._torch import core as C
from shapecheck._torch.continued import continued


def _kernel(s):
    if s <= 8:  # the condition answered
        small = True
    else:
        small = False
    again = bool(s <= 8)  # decided by torch now, not asked again
    torch._check(s >= 2)  # the kernel's own assert
    return small, again, bool(s <= 20)  # follows from the side taken


def test_an_answered_condition_is_assumed_and_the_trace_goes_on():
    asked = []
    with C.TraceEnv() as env:
        s = env.size(0, 100)
        env.mark_baseline()
        with continued(env, lambda cond: asked.append(str(cond)) or True):
            got = _kernel(s)
        kernel_asserts = [str(e) for e, _ in env.kernel_asserts()]
    assert got == (True, True, True)
    assert len(asked) == 1 and "8" in asked[0]  # asked once: torch decides it afterwards
    assert len(kernel_asserts) == 1 and "2" in kernel_asserts[0]  # the kernel's s >= 2 only, not the side


def test_the_other_side_and_an_unanswered_condition():
    with C.TraceEnv() as env:
        s = env.size(0, 100)
        env.mark_baseline()
        with continued(env, lambda cond: False):
            small, again, _ = _kernel(s)
    assert (small, again) == (False, False)
    with C.TraceEnv() as env:
        s = env.size(0, 100)
        with continued(env, lambda cond: None), pytest.raises(C.GuardError):
            _kernel(s)


def test_an_error_of_the_answer_stops_the_trace_as_an_unanswered_condition_does():
    def broken(cond):
        raise ValueError("a bug of the caller's")

    with C.TraceEnv() as env:
        s = env.size(0, 100)
        with continued(env, broken), pytest.raises(C.GuardError):
            _kernel(s)
