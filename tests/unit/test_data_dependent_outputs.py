"""A fake whose output length the data decides (``new_dynamic_size``), checked against a contract that names that
size: its defects are output shapes (SC002), found whatever the data, and their replay runs the fake as export
does (a ShapeEnv for the data-dependent size), never as a raise that only a mode without one would show."""

import pytest

from shapecheck.prove.verify import Options, verify_op
from tests.conftest import KERNELS

CONTRACT = str(KERNELS / "unique_flags.toml")


def verify(fn):
    return verify_op("aten::_unique2", contract=CONTRACT, meta=f"{KERNELS / 'unique_flags.py'}:{fn}",
                     options=Options(jobs=1))


@pytest.mark.slow
def test_a_fake_that_ignores_its_flags_gets_sc002_on_both_outputs_and_its_fixed_twin_passes():
    bad = verify("unique_ignores_flags")
    found = {(v.code, v.expr.split(" =")[0], v.case) for v in bad.violations}
    assert {c for c, _, _ in found} == {"SC002"}, [(v.code, v.message) for v in bad.violations]
    # output 1 is (N,) where the contract says (0,); output 2 is (?u,) with ?u >= 1, never (0,)
    assert ("SC002", "output 1", "return_inverse=false,return_counts=true") in found
    assert ("SC002", "output 2", "return_inverse=true,return_counts=false") in found
    two = next(v for v in bad.violations if v.expr.startswith("output 2"))
    assert "whatever the data" in two.message and two.counterexample == {"N": 1}
    assert verify("unique_fixed").exit_code == 0


@pytest.mark.slow
def test_a_contract_without_choices_names_its_one_case_in_notes():
    from shapecheck.render.text import render_text

    contract = KERNELS / "repeat_interleave_sum.toml"
    report = verify_op("aten::repeat_interleave.Tensor", contract=str(contract), options=Options(jobs=1))
    text = render_text(report)
    assert "note: the case: path ri:" in text and "note: : " not in text, text
