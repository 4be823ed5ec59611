"""A fallback's other side, run on concrete sizes, that raises only because the kernel's own torch._check at
that line fails there is that assert's finding (SC004), not a raise caused by the fallback (hunt 53:
max_unpool2d's ``C > 0`` at C = 0 was also an SC007 blaming the layout logic's ``C < 2``)."""

from pathlib import Path

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode

KERNELS = Path(__file__).resolve().parents[1] / "kernels"


@pytest.mark.slow
def test_the_kernels_own_assert_failing_on_a_fallbacks_other_side_is_its_sc004_alone():
    r = verify_op("aten::max_unpool2d", contract=str(KERNELS / "unpool_from_zero.toml"),
                  options=Options(jobs=1, cases=("dtype=float32,rank=4",)))
    assert r.verdict is Verdict.FAIL
    codes = {v.code for v in r.violations}
    assert codes == {RuleCode.ASSERT_NARROWS_RANGE}, [(v.code, v.message) for v in r.violations]
    (v,) = r.violations
    assert v.expr == "C > 0" and v.counterexample["C"] == 0
