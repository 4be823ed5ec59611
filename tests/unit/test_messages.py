"""No hidden findings in the default mode, and exact messages: each case's own fix, `restricts` only when a
range shrinks, SC002 at the line that built the output."""

from shapecheck.findings import Verdict
from shapecheck.report import render_text
from shapecheck.verify import Options, verify_op
from tests.conftest import KERNELS

HIDDEN = str(KERNELS / "hidden_case.toml")
AK = KERNELS / "aten_kernels.py"
PLANTED = f"{AK}:ceil_planted_in_a_later_case"


def _line(text: str) -> int:
    return next(i for i, t in enumerate(AK.read_text().splitlines(), 1) if text in t)


def test_a_later_case_sharing_the_first_guard_still_gets_its_output_obligations_checked():
    default = verify_op("aten::new_empty", contract=HIDDEN, meta=PLANTED, options=Options(jobs=1))
    full = verify_op("aten::new_empty", contract=HIDDEN, meta=PLANTED, options=Options(jobs=1, full=True))
    later = next(c for c in default.cases if c.case == "dtype=float16")
    assert later.shared_with == "dtype=float32"
    for r in (default, full):
        bad = [v for v in r.violations if v.code == "SC002"]
        assert [v.case for v in bad] == ["dtype=float16"]
        assert bad[0].counterexample["W"] <= 16 and bad[0].location.line == _line("(w + 1) // 2])")
    assert {(v.code, v.case, v.expr) for v in default.violations} == {(v.code, v.case, v.expr) for v in full.violations}
    text = render_text(default)
    assert "share their first violating guard" in text and "--full" not in text.split("note:")[0]


def test_each_case_keeps_its_own_fix_for_a_shared_guard():
    r = verify_op("aten::new_empty", contract=HIDDEN, meta=PLANTED, options=Options(jobs=1))
    fixes = {v.case: v.fix for v in r.violations if v.code == "SC001" and v.expr == "N <= 8"}
    assert "every explored branch returns output 0 = (N, W)" in fixes["dtype=float32"]
    assert "changes no output" in fixes["dtype=float16"]
    text = render_text(r)
    assert "fix [dtype=float32]:" in text and "fix [dtype=float16]:" in text


def test_restricts_only_when_the_range_shrinks():
    r = verify_op("aten::new_empty", contract=HIDDEN, meta=f"{AK}:branch_excluding_a_point",
                  options=Options(jobs=1, cases=("dtype=float32",)))
    g = [v for v in r.violations if v.code == "SC001"]
    assert r.verdict == Verdict.FAIL and len(g) == 1 and g[0].restricts == ""
    assert "range:" not in render_text(r)
    r = verify_op("aten::new_empty", contract=HIDDEN, meta=PLANTED, options=Options(jobs=1, cases=("dtype=float32",)))
    g = next(v for v in r.violations if v.code == "SC001")
    assert g.restricts == "restricts N from [1, 4096] to [1, 8] on the guarded side"
