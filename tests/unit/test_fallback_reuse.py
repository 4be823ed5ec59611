"""A trace stands for the side of its first unsettled fallback that torch assumed (``explore._reuse``): only the
other side is traced again. The verdicts, findings, paths and outputs are those of a fresh trace on each side,
with fewer traces; a trace whose own later fallback is the other way on that side (``K == 1`` and ``K != 1``, both
assumed false) is traced there again, never left inconclusive."""

import pytest

import tests.kernels.fallback_reuse  # noqa: F401 - registers scfbreuse::rows
from shapecheck.prove import explore
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # two verify runs of four cases (about 3 s)

CONTRACT = str(ROOT / "tests" / "kernels" / "fallback_reuse.toml")


def _run():
    r = verify_op("scfbreuse::rows", contract=CONTRACT, options=Options(jobs=1))
    cases = {c.case: (c.verdict, c.meta_paths, c.paths, c.outputs, c.truncated) for c in r.cases}
    found = sorted((v.code.value, v.case, v.expr, tuple(sorted(v.counterexample.items())), v.message)
                   for v in r.violations)
    return r, cases, found


@pytest.fixture(scope="module")
def both():
    reused = _run()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(explore._CaseExplorer, "_reuse", lambda *args, **kwargs: None)
        fresh = _run()
    return reused, fresh


def test_the_report_is_that_of_fresh_traces_with_fewer_traces(both):
    (r, cases, found), (r0, cases0, found0) = both
    assert r.verdict is r0.verdict
    assert cases == cases0 and found == found0
    traces = {c.case: c.traces for c in r.cases}
    traces0 = {c.case: c.traces for c in r0.cases}
    assert all(traces[k] < traces0[k] for k in traces), (traces, traces0)
    assert traces["variant=0"] == 4 and traces0["variant=0"] == 7  # the 4 leaves of N == 1 and M == 1 alone


def test_each_side_is_still_checked(both):
    (r, cases, found), _ = both
    wrong = {(case, expr) for code, case, expr, *_ in found if code == RuleCode.OUTPUT_SHAPE_MISMATCH.value}
    # wrong where N is 1 (the side traced again) and where it is not (the side the first trace stands for)
    assert ("variant=1", "output 0 = (2, M, K), contract (N, M, K)") in wrong
    assert ("variant=2", "output 0 = (N + 1, M, K), contract (N, M, K)") in wrong
    assert cases["variant=0"][0].value == "pass"


def test_a_trace_that_stands_for_no_point_of_the_side_is_traced_again(both):
    (r, cases, found), _ = both
    assert cases["variant=3"][0].value == "pass"
    assert not [f for f in found if f[0] == RuleCode.INCONCLUSIVE.value]
    assert len(cases["variant=3"][3]) == 8  # K == 1 and K != 1 on each of the four regions of N and M
