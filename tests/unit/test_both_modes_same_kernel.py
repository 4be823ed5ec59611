"""``--both-modes`` checks plain FakeTensorMode (the Python dispatcher off) also where both ways of running the
op reach the same kernel: its callees may be dispatched otherwise there. ``_refs``' ``narrow_copy`` calls
``narrow``, whose C++ kernel under plain FakeTensorMode takes every size as a constant (it raised or specialised
each one, where export's run keeps them symbolic), and the run passed."""

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import KERNELS

CONTRACT = str(KERNELS / "narrow_copy_plain.toml")


@pytest.mark.slow
def test_plain_fake_tensor_mode_is_checked_when_both_modes_reach_one_kernel():
    export_only = verify_op("aten::narrow_copy", contract=CONTRACT, options=Options(jobs=1))
    assert export_only.verdict is Verdict.PASS and export_only.kernel_modes == ()
    both = verify_op("aten::narrow_copy", contract=CONTRACT, options=Options(jobs=1, both_modes=True))
    assert both.verdict is Verdict.FAIL and len(both.kernel_modes) == 2
    assert both.violations and all(v.mode == "fake" and "[plain FakeTensorMode" in v.message for v in both.violations)
    assert [m.verdict for m in both.kernel_modes] == [Verdict.PASS, Verdict.FAIL]
