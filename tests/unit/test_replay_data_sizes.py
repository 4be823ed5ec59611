"""The replay of an SC002 compares the rank and the known sizes where the contract leaves a size to the data
(an output's ``sizes`` name): a wrong rank is reproduced, not lost to 'unbound name n' as inconclusive (hunt 56,
unique_consecutive over the columns)."""

from pathlib import Path

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode

KERNELS = Path(__file__).resolve().parents[1] / "kernels"


def _verify(kernel: str):
    return verify_op("aten::unique_consecutive", contract=str(KERNELS / "unique_columns.toml"),
                     meta=f"{KERNELS / 'unique_columns.py'}:{kernel}", options=Options(jobs=1))


@pytest.mark.slow
def test_a_wrong_rank_beside_a_data_dependent_size_is_an_sc002_and_the_right_rank_passes():
    r = _verify("one_rank_too_many")
    assert r.verdict is Verdict.FAIL, [(v.code, v.message) for v in r.violations]
    (v,) = r.violations
    assert v.code is RuleCode.OUTPUT_SHAPE_MISMATCH and "rank 3" in v.message
    assert _verify("right_rank").verdict is Verdict.PASS
