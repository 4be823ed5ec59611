"""Every counterexample is an assignment of all the contract's dims that the case's point needs, those its domain
alone names included (hunt 57: pixel_shuffle's SC001 gave ``{B, Ci, H, W}`` without C of ``Ci == C * r * r``,
so fuzz dropped it and ``--example`` with it was refused)."""

from pathlib import Path

import pytest

from shapecheck.contract.load import load_contract
from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode
from shapecheck.search.examples import example_at
from tests.conftest import ROOT

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
CONTRACT = ROOT / "contracts" / "aten" / "pixel_shuffle.toml"


@pytest.mark.slow
def test_a_guards_counterexample_and_witness_assign_the_dims_only_the_domain_names():
    r = verify_op("aten::pixel_shuffle", contract=str(CONTRACT),
                  meta=f"{KERNELS / 'pixel_shuffle_branchy.py'}:branch_on_channels", options=Options(jobs=1))
    assert r.verdict is Verdict.FAIL
    contract = load_contract(str(CONTRACT))
    cases = {c.id: c for c in contract.cases()}
    assert r.violations
    for v in r.violations:
        for point in (v.counterexample, v.witness):
            assert point and set(point) == {"B", "C", "Ci", "H", "W"}, (v.code, point)
            case = cases[v.case]
            assert point["Ci"] == point["C"] * case.values["r"] ** 2  # a point of the domain
            assert example_at(case, point) is not None  # fuzz and --example take it
    assert any(v.counterexample["C"] == 1 for v in r.violations)


@pytest.mark.slow
def test_a_layout_findings_counterexample_assigns_the_dims_only_the_domain_names(tmp_path):
    """An SC018's point came from the output check's own dims, the arguments' (hunt 58 B3): C was missing, so the
    confirmation on concrete sizes called the point "too large to run" and moved the finding elsewhere."""
    typed = tmp_path / "pixel_shuffle.toml"
    typed.write_text(CONTRACT.read_text().replace(
        'outputs = ["(B, C, H * r, W * r)"]',
        'outputs = [{ shape = "(B, C, H * r, W * r)", dtype = "float32", layout = "contiguous" }]'))
    r = verify_op("aten::pixel_shuffle", contract=str(typed),
                  meta=f"{KERNELS / 'pixel_shuffle_branchy.py'}:channels_last_always", options=Options(jobs=1))
    assert r.verdict is Verdict.FAIL
    layout = [v for v in r.violations if v.code is RuleCode.OUTPUT_LAYOUT_MISMATCH]
    assert layout and len(layout) == len(r.violations)
    for v in layout:
        assert set(v.counterexample) == {"B", "C", "Ci", "H", "W"}, v.counterexample
        assert "too large" not in v.message
