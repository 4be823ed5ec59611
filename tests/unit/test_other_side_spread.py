"""The other side of a kernel's own guard_or_false is run at a point with the other dims at 2 or more where the
domain allows only some of them so, and at one with them apart from each other (hunt 61: two false PASSes)."""

from __future__ import annotations

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode
from tests.conftest import KERNELS, ROOT

K = KERNELS / "other_side_spread.py"
CONTRACTS = ROOT / "contracts" / "aten"


def _shape_findings(r):
    return [v for v in r.violations if v.code is RuleCode.OUTPUT_SHAPE_MISMATCH and not v.suppressed]


@pytest.mark.slow
def test_a_swap_where_the_domain_ties_another_dim_to_the_conditions_is_found():
    r = verify_op("aten::_scaled_dot_product_attention_math_for_mps", meta=f"{K}:sdpa_heads_swapped",
                  options=Options(jobs=1, cases=("rank=4,mask=none,is_causal=false,dtype=float32,enable_gqa=false",)))
    assert r.verdict is Verdict.FAIL
    (v, *_) = _shape_findings(r)
    cx = v.counterexample
    assert cx["H"] == 1 and cx["L"] >= 2, cx  # where the swap shows: a real point of the other side


@pytest.mark.slow
def test_a_swap_of_two_sizes_is_found_at_a_point_where_they_differ():
    r = verify_op("aten::convolution", contract=str(CONTRACTS / "convolution.toml"), meta=f"{K}:conv_spatial_swapped",
                  options=Options(jobs=1))
    assert r.verdict is Verdict.FAIL
    found = _shape_findings(r)
    assert found and all(v.counterexample["Ci"] == 1 and v.counterexample["H"] != v.counterexample["W"]
                         for v in found), [v.counterexample for v in found]


@pytest.mark.slow
def test_an_output_wrong_on_a_path_is_not_blamed_on_a_fallback_in_its_other_era():
    r = verify_op("aten::_scaled_dot_product_attention_math_for_mps", meta=f"{K}:sdpa_key_dim_for_value_dim",
                  options=Options(jobs=1, cases=("rank=3,mask=none,is_causal=false,dtype=float32,enable_gqa=false",)))
    found = _shape_findings(r)
    assert len(found) == 1 and found[0].expr == "output 0 = (H, L, E), contract (H, L, Ev)", [v.expr for v in found]
    assert not [v for v in r.violations if "layout logic" in v.message]
    assert {str(p.path): p.status for c in r.cases for p in c.paths}["general@current"] == "refuted"
