"""A dim only the domain names (pixel_shuffle's ``Ci == C * r * r``: C is in no argument) is part of every point
an output is evaluated at (hunt 54: with B from 0, the other side of a guard_or_false was run at a point of the
arguments' dims alone, and the output's C was "unbound": verify and gate stopped with exit 2, every result lost)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT


@pytest.mark.slow  # a verify run
def test_a_dim_only_the_domain_names_is_in_the_other_sides_point(tmp_path):
    from shapecheck.options import VerifyOptions
    from shapecheck.prove.verify import verify_op

    text = (ROOT / "contracts" / "aten" / "pixel_shuffle.toml").read_text(encoding="utf-8")
    contract = tmp_path / "pixel_shuffle.toml"
    contract.write_text(text.replace('B = { min = 1,', 'B = { min = 0,'), encoding="utf-8")
    r = verify_op("aten::pixel_shuffle", contract=str(contract), options=VerifyOptions(jobs=1))
    assert r.verdict == "pass", [v.message for v in r.violations]


def test_an_unbound_name_in_a_case_is_that_cases_internal_error_not_bad_input():
    from shapecheck.errors import ExprError
    from shapecheck.findings import Verdict
    from shapecheck.prove.budget import Budget
    from shapecheck.prove.verify import isolated
    from shapecheck.rules import RuleCode

    def check():
        raise ExprError("'(B, C)'", "unbound name in C")

    result, (finding,) = isolated("r=2", Budget(), check)
    assert result.verdict is Verdict.ERROR and finding.code is RuleCode.INTERNAL_ERROR

    def bad_contract():
        raise ExprError("'H // 0'", "division by zero")

    with pytest.raises(ExprError):
        isolated("r=2", Budget(), bad_contract)
