"""A case that shares an earlier case's regions (the default mode's shortcut) is split only on the splits its own
kernel asks: its traces answer those as they go (``_torch.continued``). Traced straight on the earlier case's
leaf regions, the second case here was split on a dim it never reads and ran past the trace bound (hunt 58 B4:
an avg_pool2d mutant's channels-last case stopped at 64 shared traces with an SC005, where it needs 20 alone);
a case past the bound on shared splits is still explored on its own, as ``--full`` explores it."""

import pytest

import tests.kernels.shared_regions  # noqa: F401 - registers scshared::pick
from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode
from tests.conftest import ROOT

CONTRACT = ROOT / "tests" / "kernels" / "shared_regions.toml"


@pytest.mark.slow
def test_a_case_is_not_split_on_an_earlier_cases_split_its_kernel_never_asks():
    # the first case explores L <= 8 and X <= 4; the second reads Y, never X: on the first case's leaf regions it
    # needed more than 15 traces (each split on Y again), now as many as alone
    shared = verify_op("scshared::pick", contract=str(CONTRACT), options=Options(jobs=1, max_traces=15))
    alone = verify_op("scshared::pick", contract=str(CONTRACT), options=Options(jobs=1, max_traces=15, full=True))
    assert shared.verdict is Verdict.FAIL
    by_case = {c.case: c for c in shared.cases}
    assert not by_case["flag=false"].truncated and not by_case["flag=true"].truncated
    assert by_case["flag=true"].shared_with == "flag=false"
    assert by_case["flag=true"].traces <= {c.case: c for c in alone.cases}["flag=true"].traces
    assert not [v for v in shared.violations if v.code is RuleCode.INCONCLUSIVE]
    # the guard a continued trace stops at is the kernel's own (SC001), not a helper's (the trace's answering
    # frames are no caller of the kernel's)
    found = sorted((v.case, v.code, v.expr) for v in shared.violations)
    assert found == sorted((v.case, v.code, v.expr) for v in alone.violations)
    assert found == [("flag=false", RuleCode.GUARD_ON_DYNAMIC_DIM, "L <= 8"),
                     ("flag=false", RuleCode.GUARD_ON_DYNAMIC_DIM, "X <= 4"),
                     ("flag=true", RuleCode.GUARD_ON_DYNAMIC_DIM, "L <= 8"),
                     ("flag=true", RuleCode.GUARD_ON_DYNAMIC_DIM, "Y <= 4")]


@pytest.mark.slow
def test_within_the_bound_the_case_keeps_sharing():
    r = verify_op("scshared::pick", contract=str(CONTRACT), options=Options(jobs=1))
    by_case = {c.case: c for c in r.cases}
    assert by_case["flag=true"].shared_with == "flag=false" and not by_case["flag=true"].truncated
