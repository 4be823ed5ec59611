"""Who asked for a guard, where the frames between the guard and the kernel are not torch's machinery: a
kernel's own ``guard_size_oblivious`` (which torch 2.13 wraps in typing_extensions' ``deprecated``) is the
kernel's guard, SC001, not a guard of "torch's dispatch machinery" that is explored and never reported; a helper
defined in a ``--meta-source`` file is named as that file's helper, not torch's, and a contract's accepted
SC022 of torch's own output record does not hide it (``[[suppress]] message``)."""

from pathlib import Path

import pytest

from shapecheck.contract.spec import Suppression
from shapecheck.contract.suppressions import apply
from shapecheck.findings import Finding, Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode

KERNELS = Path(__file__).resolve().parents[1] / "kernels"


def _gather(kernel: str):
    return verify_op("aten::gather", contract=str(KERNELS / "static_answers.toml"),
                     meta=f"{KERNELS / 'size_oblivious.py'}:{kernel}", options=Options(jobs=1))


@pytest.mark.slow
def test_a_kernels_own_guard_size_oblivious_that_sizes_from_2_do_not_decide_is_its_guard():
    r = _gather("same_width_fast_path")
    assert r.verdict is Verdict.FAIL
    guards = [v for v in r.violations if v.code is RuleCode.GUARD_ON_DYNAMIC_DIM]
    assert guards and all(v.location is not None and v.location.file.endswith("size_oblivious.py")
                          and "guard_size_oblivious(cond)" in v.location.text for v in guards), \
        [(v.code, v.message, v.location) for v in r.violations]  # the file's own helper asked
    assert guards[0].expr == "B1 == A1" or set(guards[0].dims) == {"A1", "B1"}


@pytest.mark.slow
def test_guard_size_oblivious_is_answered_as_for_sizes_from_2_and_its_other_side_is_checked():
    """torch.export with backed Dims from 1 passes unit_column_fast_path (its B1 == 1 is False for sizes from
    2, no guard; checked with strict and non-strict export on torch 2.13): so does verify. The twin wrong on
    that other side fails there, at B1 == 1."""
    assert _gather("unit_column_fast_path").verdict is Verdict.PASS
    r = _gather("unit_column_wrong")
    assert r.verdict is Verdict.FAIL
    assert {v.code for v in r.violations} == {RuleCode.OUTPUT_SHAPE_MISMATCH}
    assert all(v.counterexample["B1"] == 1 for v in r.violations)
    assert all("guard_size_oblivious's answer, as for sizes from 2" in v.message for v in r.violations)


@pytest.mark.parametrize("kernel, verdict", [("cat_skipping_empty", Verdict.PASS),
                                             ("cat_skipping_empty_plainly", Verdict.FAIL)])
def test_cats_historical_fix_with_guard_size_oblivious_passes_and_the_plain_if_it_fixed_does_not(kernel, verdict):
    """pytorch#130615: the fix passes (strict export with Dims from 0 does too); the plain ``if`` fails on A0 == 0."""
    r = verify_op("aten::cat", contract=str(KERNELS / "cat_from_zero.toml"),
                  meta=f"{KERNELS / 'size_oblivious.py'}:{kernel}", options=Options(jobs=1))
    assert r.verdict is verdict, [(v.code, v.expr) for v in r.violations]
    if verdict is Verdict.FAIL:
        assert {v.code for v in r.violations} == {RuleCode.GUARD_ON_DYNAMIC_DIM}
        assert {v.expr for v in r.violations} <= {"A0 == 0", "A1 == 0"}


@pytest.mark.slow
def test_a_helper_of_a_meta_source_file_is_the_files_and_torchs_accepted_output_record_does_not_hide_it():
    """pool_helper_registrations.py rounds avg_pool2d's output size through a helper of its own that branches on
    the parity of H and W; the shipped contract accepts torch.export's output-record guards (F13) by their
    message, and no longer every SC022 of the case."""
    r = verify_op("aten::avg_pool2d", meta_source=str(KERNELS / "pool_helper_registrations.py"),
                  options=Options(jobs=1, cases=("ceil_mode=false,kernel=3,stride=2,padding=1,memory_format=contiguous",)))
    assert r.verdict is Verdict.FAIL
    parity = [v for v in r.violations if v.code is RuleCode.GUARD_IN_TORCH_HELPER and "% 2" in v.expr]
    assert {v.expr for v in parity} == {"(H - 1) % 2 != 0", "(W - 1) % 2 != 0"}, [v.message for v in r.violations]
    for v in parity:
        assert v.message.startswith("the helper _div_round_down at ") and "torch's helper" not in v.message
        assert v.fix.startswith("the helper is the kernel file's own, not torch's: ") and "torch's, asked" not in v.fix
        assert not v.suppressed
    record = [v for v in r.violations if v.suppressed and "torch.export's record of the op's output" in v.message]
    assert record, "torch's own output-record guard stays accepted"


def _guard(message: str) -> Finding:
    return Finding(code=RuleCode.GUARD_IN_TORCH_HELPER, case="k=3", expr="W - 1 != 1", dims=("W",),
                   counterexample={"W": 2}, message=message)


def test_a_suppression_with_a_message_covers_only_the_findings_that_say_it():
    s = Suppression("SC022", "F13", message="torch.export's record of the op's output")
    record, helper = _guard("torch.export's record of the op's output (...) installs the guards W - 1 != 1"), \
        _guard("the helper div_rtn at pool.py:12 branches on (W - 1) % 2 != 0")
    got = apply([s], [record, helper])
    assert got[0].suppressed == "F13" and not got[1].suppressed
    assert apply([Suppression("SC022", "all of them")], [helper])[0].suppressed == "all of them"
