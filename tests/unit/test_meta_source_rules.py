"""``--meta-source`` on a file in the style of torch/_subclasses/fake_impls.py: a FakeTensor rule
(``@register_op_impl(aten.OP.OVERLOAD)``, called ``rule(fake_mode, func, *args)``) is placed where FakeTensorMode
takes it, so that a PR changing one of torch's own rules (masked_select's, nonzero's) is checked as it would run."""

from __future__ import annotations

from pathlib import Path

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode
from tests.unit.test_kernel_choice import MASKED_SELECT

RETURN = "    return self.new_empty((nnz,))  # type: ignore[return]\n\n\n@register_op_impl(torch.ops.aten._assert"


def _rules(tmp_path: Path, edit: str = "") -> tuple[str, str]:
    import torch

    text = (Path(torch.__file__).parent / "_subclasses" / "fake_impls.py").read_text(encoding="utf-8")
    assert text.count(RETURN) == 1  # masked_select's return, in the installed torch's file
    if edit:
        text = text.replace(RETURN, edit + RETURN)
    rules = tmp_path / "fake_impls.py"
    rules.write_text(text, encoding="utf-8")
    contract = tmp_path / "masked_select.toml"
    contract.write_text(MASKED_SELECT)
    return str(rules), str(contract)


@pytest.mark.slow
def test_an_unmodified_copy_of_torchs_rule_passes_and_is_named(tmp_path):
    rules, contract = _rules(tmp_path)
    r = verify_op("aten::masked_select", contract=contract, meta_source=rules, options=Options(jobs=1))
    assert r.verdict is Verdict.PASS, [v.message for v in r.violations]
    assert r.kernel == "fake_impls.py:masked_select"


@pytest.mark.slow
def test_a_rule_that_branches_on_a_size_fails_at_its_own_line(tmp_path):
    rules, contract = _rules(tmp_path, "    if self.shape[1] > 8:\n        return self.new_empty((nnz + 1,))\n")
    r = verify_op("aten::masked_select", contract=contract, meta_source=rules, options=Options(jobs=1))
    assert r.verdict is Verdict.FAIL
    guard = [v for v in r.violations if v.code is RuleCode.GUARD_ON_DYNAMIC_DIM]
    assert guard and guard[0].expr == "B > 8" and guard[0].location is not None
    assert guard[0].location.file == rules and "self.shape[1] > 8" in guard[0].location.text
    assert any(v.code is RuleCode.DYNAMIC_SIZE_RANGE and "?" in v.expr for v in r.violations)


def test_a_data_dependent_size_plus_one_behind_a_branch_is_reported_not_an_internal_error():
    import tempfile

    import tests.kernels.data_sized_plus_one  # noqa: F401 - registers scdd::sel

    with tempfile.TemporaryDirectory() as d:
        contract = Path(d) / "sel.toml"
        contract.write_text(MASKED_SELECT.replace("aten::masked_select", "scdd::sel")
                            .replace('name = "self"', 'name = "x"').replace('name = "mask"', 'name = "m"'))
        r = verify_op("scdd::sel", contract=str(contract), options=Options(jobs=1))
    assert r.verdict is Verdict.FAIL
    assert not [v for v in r.violations if v.code is RuleCode.INTERNAL_ERROR]
    assert {v.code for v in r.violations} == {RuleCode.GUARD_ON_DYNAMIC_DIM, RuleCode.DYNAMIC_SIZE_RANGE}
    # sizes made from data on each side: z3 cannot compare them, so no fix text says the shapes differ (hunt 59)
    (guard,) = [v for v in r.violations if v.code is RuleCode.GUARD_ON_DYNAMIC_DIM]
    assert "not shown to give the same output shapes" in guard.fix and "give different" not in guard.fix, guard.fix
