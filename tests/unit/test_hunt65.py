"""Hunts 65 and 66: misreadings of verify, fuzz and ref check (aten ops and decompositions against strict torch.export)."""

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode
from tests.conftest import ROOT, verify_meta

KERNELS = ROOT / "tests" / "kernels"


def _rows(fn: str):
    return verify_meta("schunt65::pad_rows", "hunt65_static_rows.toml", "hunt65_kernels.py", fn)


@pytest.mark.slow
def test_a_value_specialisation_of_a_static_dim_is_explored_per_value():
    # int(x.size(0)) with N static: the region was dropped (SC005 "unexplored region"), so a kernel wrong at N = 3
    # was as inconclusive as the right one; each value is explored now, as a guard on N is
    right = _rows("int_of_rows")
    assert right.verdict is Verdict.PASS, [(v.code, v.message[:160]) for v in right.violations]
    for fn in ("int_of_rows_wrong", "branch_on_rows"):
        wrong = _rows(fn)
        shapes = [v for v in wrong.violations if v.code is RuleCode.OUTPUT_SHAPE_MISMATCH]
        assert wrong.verdict is Verdict.FAIL and shapes, (fn, [(v.code, v.message[:160]) for v in wrong.violations])
        assert shapes[0].counterexample["N"] == 3 and "where N == 3" in shapes[0].message, shapes[0].message


@pytest.mark.slow
def test_a_wrong_output_is_shown_where_the_kernel_returns_not_where_its_asserts_fail():
    # x.size(0) - 3 rows: z3's least point N = 1 is where the kernel raises (a negative size), so the SC002 was
    # replayed there and became an SC007, and the wrong shape of every N >= 3 went unreported
    r = verify_meta("schunt65::pad_rows", "hunt65_pad_rows.toml", "hunt65_kernels.py", "minus3")
    shapes = [v for v in r.violations if v.code is RuleCode.OUTPUT_SHAPE_MISMATCH]
    assert shapes and shapes[0].counterexample["N"] >= 3, [(v.code, v.counterexample) for v in r.violations]
    assert RuleCode.ASSERT_NARROWS_RANGE in {v.code for v in r.violations}


@pytest.mark.slow
def test_an_assert_past_torchs_layout_answer_is_proved_where_the_answer_holds():
    # clone_preserve_strides' storage length after guard_or_false(S * B == 0): as_strided's assert
    # B + (S - 1) * max(1, B) >= 0 fails only at S = 0, where FakeTensorMode on concrete sizes takes the other
    # branch (its other side is run: the contract states strides); every *_scatter op with an empty dim was
    # inconclusive, where strict export succeeds
    r = verify_op("aten::slice_scatter", contract=str(KERNELS / "hunt65_slice_scatter_empty.toml"),
                  options=Options(jobs=1))
    assert r.verdict is Verdict.PASS, [(v.code, v.expr, v.message[:160]) for v in r.violations]


@pytest.mark.slow
def test_a_wrong_output_the_kernel_raises_on_is_placed_at_the_line_that_raised(monkeypatch):
    # where no point of the region lets the kernel return (here: the search for one switched off), the SC002 is
    # an SC007 at the point; it was placed at the kernel's def line, not the line that raised
    from shapecheck.prove import replay

    monkeypatch.setattr(replay, "_elsewhere", lambda v, why, r, solver: (v, why))
    r = verify_meta("schunt65::pad_rows", "hunt65_pad_rows.toml", "hunt65_kernels.py", "minus3")
    raised = [v for v in r.violations if v.code is RuleCode.KERNEL_ERROR]
    assert raised and raised[0].location.text.startswith("return x.new_empty"), raised[0].location


@pytest.mark.slow
def test_fuzz_reads_a_guard_with_a_dim_at_0_made_constant_in_the_slice_it_was_made_in():
    # hunt 66: at PR = 0 (a constant in fuzz's run) replication_pad1d's check W - PL + PR >= 1 was recorded as
    # W - PL >= 1, and judged over every PR: an SC022 where verify and strict export pass; at PR = 0 the domain's
    # W - PL + PR >= 2 implies it
    from tests.conftest import invoke

    for pr in (0, 2):
        got = invoke("fuzz", "op", "aten::replication_pad1d", "--contract", KERNELS / "hunt66_pad1d_negative.toml",
                     "--example", f"rank=3,neg=true;N=40,C=2,W=14,PL=10,PR={pr};seed=1")
        assert got.returncode == 0 and got.stdout.startswith("PASS"), (pr, got.stdout[-1500:] + got.stderr[-500:])
