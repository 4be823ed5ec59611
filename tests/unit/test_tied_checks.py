"""A kernel's check on a dim that the domain ties to another (``requires A2 == B1``, as drafts write a shared
size) is judged with both dims backed from 2 up, as torch.export's one Dim has them: a check that narrows the
range is SC004 alone (it was also called SC016, "holds for every size", with the tied dim pinned to its example
value), and a check the tie makes true is no finding."""

from pathlib import Path

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode

KERNELS = Path(__file__).resolve().parents[1] / "kernels"


def _verify(fn: str):
    return verify_op("aten::bmm", contract=str(KERNELS / "tied_checks.toml"),
                     meta=f"{KERNELS / 'tied_checks.py'}:{fn}", options=Options(jobs=1))


@pytest.mark.slow
def test_a_check_that_narrows_a_tied_dim_is_sc004_alone():
    r = _verify("checks_the_shared_size")
    assert r.verdict is Verdict.FAIL
    assert [v.code for v in r.violations] == [RuleCode.ASSERT_NARROWS_RANGE], [v.message for v in r.violations]
    assert r.violations[0].counterexample["A2"] == 1025 == r.violations[0].counterexample["B1"]


@pytest.mark.slow
def test_a_check_the_tie_makes_true_passes():
    assert _verify("checks_the_tie").verdict is Verdict.PASS
