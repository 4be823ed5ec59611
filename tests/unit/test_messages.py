"""No hidden findings in the default mode, and exact messages: each case's own fix, `restricts` only when a
range shrinks, SC002 at the line that built the output."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.render.text import render_text
from tests.conftest import KERNELS

DOCS = KERNELS.parent.parent / "docs" / "examples"

HIDDEN = str(KERNELS / "hidden_case.toml")
AK = KERNELS / "aten_kernels.py"
PLANTED = f"{AK}:ceil_planted_in_a_later_case"


def _line(text: str) -> int:
    return next(i for i, t in enumerate(AK.read_text().splitlines(), 1) if text in t)


@pytest.mark.slow
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


@pytest.mark.slow
def test_each_case_keeps_its_own_fix_for_a_shared_guard():
    r = verify_op("aten::new_empty", contract=HIDDEN, meta=PLANTED, options=Options(jobs=1))
    fixes = {v.case: v.fix for v in r.violations if v.code == "SC001" and v.expr == "N <= 8"}
    assert "every explored branch returns output 0 = (N, W)" in fixes["dtype=float32"]
    assert "changes no output" in fixes["dtype=float16"]
    text = render_text(r)
    assert "fix [dtype=float32]:" in text and "fix [dtype=float16]:" in text


@pytest.mark.slow
def test_restricts_only_when_the_range_shrinks():
    r = verify_op("aten::new_empty", contract=HIDDEN, meta=f"{AK}:branch_excluding_a_point",
                  options=Options(jobs=1, cases=("dtype=float32",)))
    g = [v for v in r.violations if v.code == "SC001"]
    assert r.verdict == Verdict.FAIL and len(g) == 1 and g[0].restricts == ""
    assert "range:" not in render_text(r)
    r = verify_op("aten::new_empty", contract=HIDDEN, meta=PLANTED, options=Options(jobs=1, cases=("dtype=float32",)))
    g = next(v for v in r.violations if v.code == "SC001")
    assert g.restricts == "restricts N from [1, 4096] to [1, 8] on the guarded side"


@pytest.mark.slow
def test_explore_splits_one_return_line_by_output_formula_and_reports_the_break():
    from shapecheck.prove.verify import explore_op

    r = explore_op("aten::new_empty", contract=HIDDEN, meta=f"{AK}:two_formulas_behind_one_return",
                   options=Options(jobs=1, cases=("dtype=float32",), max_traces=16))
    pm = r.cases[0].path_map
    assert len(pm.paths) == 2 and len({p.returned_at.line for p in pm.paths}) == 1
    assert sorted(p.outputs for p in pm.paths) == [("(N, (W + 1) // 2)",), ("(N, W)",)]
    (b,) = pm.breaks
    assert b.output == 0 and b.point["W"] == 2 and {b.a_out0, b.b_out0} == {(1, 1), (1, 2)}


@pytest.mark.slow
def test_formulas_are_shown_simplified_through_one_simplifier():
    from shapecheck.logic import expr as E
    from shapecheck.logic.simplify import shown

    assert shown(E.parse("(H + 2 - 3 + 2 - 1) // 2 + 1")) == "H // 2 + 1"
    assert shown(E.parse("(H + 2 * 1 - 3) // 2 + 1")) == "(H - 1) // 2 + 1"
    assert shown(E.parse("(N + 15) // 16 * 16")) == "(N + 15) // 16 * 16"  # not longer than it was
    r = verify_op("aten::convolution", contract=str(KERNELS.parent.parent / "contracts" / "aten" / "convolution.toml"),
                  meta=f"{AK}:conv_forgets_the_padding", options=Options(jobs=1, cases=("k=3,p=1,s=2",)))
    v = next(v for v in r.violations if v.code == "SC002")
    assert "(H - 1) // 2 + 1" in v.expr and "2 - 3" not in v.expr and "(H - 1) // 2 + 1" in v.fix


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.integers(-3, 3), st.integers(1, 4), st.integers(-5, 5), st.integers(-50, 50), st.integers(-50, 50))
def test_the_simplifier_keeps_the_value(a, b, c, h, w):
    from shapecheck.logic import expr as E
    from shapecheck.logic.simplify import simplified

    for text in (f"(H * {a} + {c} - W) // {b} + {c}", f"(H + {c}) % {b} * {a} + W", f"max(H + {c}, W * {a}) - {c}",
                 f"min(H, {c}) + (W - {c} + {c}) // {b}"):
        node = E.parse(text.replace("+ -", "- "))
        assert E.evaluate(simplified(node), {"H": h, "W": w}) == E.evaluate(node, {"H": h, "W": w})


def test_an_inconclusive_finding_calls_its_point_an_example_not_a_counterexample():
    from shapecheck.findings import Finding
    from shapecheck.render.text import _finding_block
    from shapecheck.rules import RuleCode

    seen = Finding(code=RuleCode.INCONCLUSIVE, case="c", expr="torch.export disagrees", counterexample={"L": 2},
                   message="torch.export(strict=True) fails on this case")
    bug = Finding(code=RuleCode.GUARD_ON_DYNAMIC_DIM, case="c", expr="L <= 8", counterexample={"L": 9}, message="m")
    assert (seen.point_label, bug.point_label) == ("example", "counterexample")
    assert "  example:  L=2" in _finding_block(seen, ["c"], 0)
    assert "  counterexample: L=9" in _finding_block(bug, ["c"], 0)
    assert "counterexample" not in "".join(_finding_block(seen, ["c"], 0))


def test_the_verdict_line_counts_findings_by_severity():
    """An SC005 or a note is no violation: an INCONCLUSIVE run with one SC005 says "0 violations, 1 inconclusive"."""
    from shapecheck.findings import Finding
    from shapecheck.rules import RuleCode, counted

    def finding(code):
        return Finding(code=code, case="c", expr="e", counterexample={}, message="m")

    assert counted([]) == "0 violations"
    assert counted([finding(RuleCode.INCONCLUSIVE)]) == "0 violations, 1 inconclusive"
    assert counted([finding(RuleCode.GUARD_ON_DYNAMIC_DIM), finding(RuleCode.UNREACHABLE_PATH),
                    finding(RuleCode.UNREACHABLE_PATH)]) == "1 violations, 2 notes"
    result = verify_op("mylib::pad_rows", contract=str(DOCS / "pad_rows.toml"), meta=f"{DOCS / 'pad_rows.py'}:xor_guard")
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "0 violations, 2 inconclusive," in render_text(result).splitlines()[0]


def test_a_finding_an_expired_suppression_covered_says_it_counts_again():
    from shapecheck.contract import suppressions
    from shapecheck.contract.model import Suppression
    from shapecheck.findings import Finding
    from shapecheck.rules import RuleCode

    v = Finding(code=RuleCode.GUARD_ON_DYNAMIC_DIM, case="c", expr="L <= 8", dims=("L",), counterexample={"L": 9},
                message="the kernel branches on L <= 8")
    (out,) = suppressions.apply([Suppression("SC001", "accepted", expires="2020-01-01")], [v])
    assert not out.suppressed and out.message.endswith("(a [[suppress]] accepted it until it expired on 2020-01-01)")
    (live,) = suppressions.apply([Suppression("SC001", "accepted", expires="2020-01-01"),
                                  Suppression("SC001", "still accepted")], [v])
    assert live.suppressed == "still accepted" and live.message == v.message


def test_the_exported_programs_refusal_names_a_static_size_as_such():
    """A hunt: the note blamed export's 0/1 assumption for ``Guard failed: inputs[1].size()[0] == 6``, an input size
    the program took as static (row stats of length B * M, which no Dim states)."""
    from shapecheck.render.text import _refusal_cause

    assert _refusal_cause("Guard failed: inputs[1].size()[0] == 6").startswith("the program took that input size as static")
    assert _refusal_cause("Guard failed: x.size(3) // 2 != 1").startswith("torch.export assumes every dynamic size")


def test_the_exported_programs_refusal_by_a_guard_it_keeps_is_not_blamed_on_sizes_below_2():
    """hunt 65: replication_pad3d's least point refused by ``W + L - 8 + R != 0``, a guard the agreement's
    explanation had shown refusing sizes from 2 too, was blamed on export's assumption that sizes are at least 2."""
    from shapecheck.render.text import _refusal_cause

    refusal = "AssertionError: Guard failed: -8 + inputs[0].size()[3] + inputs[4].size()[0] != 0"
    why = ("SC022 `max(1, R + L + W - 8) == R + L + W - 8`: ... the program raises AssertionError: Guard failed: "
           "-8 + inputs[0].size()[3] + inputs[4].size()[0] != 0. The program accepts only the example's side")
    assert _refusal_cause(refusal, why=why).startswith("the guard that refuses it is one the program keeps")
    assert _refusal_cause(refusal).startswith("torch.export assumes every dynamic size")
