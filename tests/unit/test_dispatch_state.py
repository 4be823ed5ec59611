"""A kernel whose error leaves torch's thread-local dispatch state changed (a meta kernel's ``.item()`` on an
input recurses in torch; the guard objects held by the error's frames put back stale states when freed) is a
finding of its own, and the stages after it run as before: never an internal error."""

from pathlib import Path

import pytest
import torch

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
CONTRACT = str(KERNELS / "meta_item.toml")


def _dispatch_state() -> tuple:
    key = torch._C.DispatchKey
    return (str(torch._C._dispatch_tls_local_include_set()), str(torch._C._dispatch_tls_local_exclude_set()),
            torch._C._dispatch_tls_is_dispatch_key_included(key.PythonDispatcher),
            torch._C._meta_in_tls_dispatch_include())


@pytest.mark.slow
def test_a_kernel_that_reads_an_inputs_data_fails_and_leaves_torch_as_it_was():
    before = _dispatch_state()
    r = verify_op("aten::take", contract=CONTRACT, meta=f"{KERNELS / 'meta_item.py'}:take_reads_index",
                  options=Options(jobs=1))
    assert r.verdict is Verdict.FAIL
    codes = {v.code for v in r.violations}
    assert RuleCode.KERNEL_ERROR in codes and RuleCode.INTERNAL_ERROR not in codes, [v.message for v in r.violations]
    error = next(v for v in r.violations if v.code is RuleCode.KERNEL_ERROR)
    assert error.location is not None and error.location.file.endswith("meta_item.py")
    assert _dispatch_state() == before
    # torch itself works after the run: a fake tensor made from a real one, and an op on it
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode() as mode:
        assert torch.take(mode.from_tensor(torch.ones(2, 3)), mode.from_tensor(torch.zeros(4, dtype=torch.long))).shape == (4,)
    fixed = verify_op("aten::take", contract=CONTRACT, meta=f"{KERNELS / 'meta_item.py'}:take_fixed",
                      options=Options(jobs=1))
    assert fixed.verdict is Verdict.PASS


def test_what_guard_attribution_keeps_on_an_exception_pickles():
    import pickle

    from torch._subclasses.fake_tensor import FakeTensorMode

    from shapecheck._torch.dispatch_state import dispatch_state_kept

    with FakeTensorMode() as mode:
        x = mode.from_tensor(torch.ones(2, 3))
        try:
            with dispatch_state_kept():
                torch.mm(x, x)  # a size mismatch raised inside FakeTensor's dispatch
        except RuntimeError as err:
            caught = err
    kept = getattr(caught, "_shapecheck_dispatched", {})
    assert kept and all(isinstance(v, str) for v in kept.values() if v is not None), kept
    assert pickle.loads(pickle.dumps(caught)).args == caught.args


def test_an_assumption_torch_already_knows_false_refuses_the_region():
    """A region's fact that torch decides false from the facts before it (``A == 1`` after ``A >= 2``): the region
    is refused as an empty one (AssumptionRejected), not torch's RuntimeError out of ``torch._check``."""
    from shapecheck._torch import core as C
    from shapecheck.logic import expr as E

    with C.TraceEnv(frozenset()) as env:
        a, b = env.size(1, 2**31 - 1), env.size(1, 2**31 - 1)
        C.assume(E.parse("A >= 2 and B >= 2"), {"A": a, "B": b})
        with pytest.raises(C.AssumptionRejected):
            C.assume(E.parse("A == 1 or B == 1"), {"A": a, "B": b})
