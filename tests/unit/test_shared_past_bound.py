"""A case traced on an earlier case's regions that runs past the trace bound there is explored on its own, as
``--full`` explores it, before anything is called inconclusive (hunt 58 B4: an avg_pool2d mutant's channels-last
case stopped at 64 shared traces with an SC005, where it needs 20 alone)."""

import pytest

import tests.kernels.shared_regions  # noqa: F401 - registers scshared::pick
from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode
from tests.conftest import ROOT

CONTRACT = ROOT / "tests" / "kernels" / "shared_regions.toml"


@pytest.mark.slow
def test_a_case_past_the_bound_on_shared_regions_is_explored_alone():
    # the first case explores L <= 8 and X <= 4 in 11 traces; the second, on those regions, splits each on
    # Y <= 4 again and needs more than 15, alone fewer
    r = verify_op("scshared::pick", contract=str(CONTRACT), options=Options(jobs=1, max_traces=15))
    assert r.verdict is Verdict.FAIL
    by_case = {c.case: c for c in r.cases}
    assert not by_case["flag=false"].truncated and not by_case["flag=true"].truncated
    assert by_case["flag=true"].shared_with == ""  # explored guard by guard in the end
    assert not [v for v in r.violations if v.code is RuleCode.INCONCLUSIVE]
    found = sorted((v.case, v.expr) for v in r.violations if v.code is RuleCode.GUARD_ON_DYNAMIC_DIM)
    assert found == [("flag=false", "L <= 8"), ("flag=false", "X <= 4"), ("flag=true", "L <= 8"),
                     ("flag=true", "Y <= 4")]


@pytest.mark.slow
def test_within_the_bound_the_case_keeps_sharing():
    r = verify_op("scshared::pick", contract=str(CONTRACT), options=Options(jobs=1))
    by_case = {c.case: c for c in r.cases}
    assert by_case["flag=true"].shared_with == "flag=false" and not by_case["flag=true"].truncated
