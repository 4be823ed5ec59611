"""Hunt 63's misreadings of verify (nine aten ops against strict torch.export)."""

import tests.kernels.hunt63_kernels  # noqa: F401 - registers schunt63::windows
from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode
from tests.conftest import ROOT

KERNELS = ROOT / "tests" / "kernels"


def test_a_fake_that_returns_a_negative_size_where_the_runtime_raises_is_sc021_not_a_crash():
    # torch's unfold without its size check returns [-1, 0, 2] at A = B = 0: shapecheck's own concrete run of that
    # output raised "negative dimension", an internal error (exit 4)
    r = verify_op("schunt63::windows", contract=str(KERNELS / "hunt63_windows.toml"), options=Options(jobs=1))
    assert r.verdict is Verdict.FAIL
    assert not [v for v in r.violations if v.code is RuleCode.INTERNAL_ERROR]
    found = [v for v in r.violations if v.code is RuleCode.META_ACCEPTS_REJECTED_INPUT]
    assert found and found[0].counterexample == {"A": 0, "B": 0} and "(-1, 0, 2)" in found[0].message


def test_a_guard_torchs_cpp_code_asks_at_the_kernels_line_is_not_the_kernels_own():
    # adaptive_max_pool2d's meta kernel calls .to(memory_format=...), whose C++ contiguity test asks C > 1: only a
    # size of 1 decides it, export installs nothing (strict export over N from 0 and C from 1 succeeds)
    r = verify_op("aten::adaptive_max_pool2d", contract=str(KERNELS / "adaptive_max_pool2d_contiguous.toml"),
                  options=Options(jobs=1))
    assert r.verdict is Verdict.PASS, [(v.code, v.expr, v.message[:200]) for v in r.violations]


def test_an_output_is_compared_only_where_the_kernels_own_asserts_hold():
    # unfold's strides are (max(1, B), 1, 1): (B, 1, 1) wherever its own B >= 2 holds; at B = 0 it raises (SC004),
    # and an SC018 "at A=2, B=0 for shape (2, -1, 2)" named a point where no output exists
    r = verify_op("aten::unfold", contract=str(KERNELS / "unfold_past_assert.toml"), options=Options(jobs=1))
    codes = {v.code for v in r.violations}
    assert RuleCode.ASSERT_NARROWS_RANGE in codes
    assert RuleCode.OUTPUT_LAYOUT_MISMATCH not in codes, [v.message for v in r.violations]


def test_fuzz_reads_no_guard_into_a_consequence_of_a_size_of_one_it_leaves_aside():
    # at B = B2 = 1, expand's guard B == 1 (torch's helper, about a size of 1: left aside) replaced B by 1, so the
    # kernel's own check B2 == B was recorded as B2 == 1, which the domain's B2 == B implies there: fuzz failed a
    # correct kernel (strict export and verify pass it)
    from tests.conftest import invoke

    got = invoke("fuzz", "op", "aten::baddbmm", "--contract", KERNELS / "baddbmm_broadcast_self.toml",
                 "--example", ";B=1,B2=1,N=3,M=2,P=3")
    assert got.returncode == 0, got.stdout + got.stderr
    assert got.stdout.startswith("PASS")


def test_fuzz_still_sees_a_branch_that_the_size_of_one_it_leaves_aside_does_not_imply():
    from tests.conftest import invoke

    got = invoke("fuzz", "op", "schunt63::baddbmm_branchy", "--contract", KERNELS / "baddbmm_branchy.toml",
                 "--example", ";B=1,B2=1,N=3,M=2,P=3")
    assert got.returncode == 1, got.stdout
    assert "N <= 4" in got.stdout and "hunt63_kernels.py:39" in got.stdout
