"""A kernel's own ``statically_known_true``/``statically_known_false`` that torch cannot decide under symbolic
sizes is the branch FakeTensorMode takes the other way at plain sizes: its other side is checked, as a
guard_or_false answer's is, and never reported as a guard (torch.export installs none)."""

from pathlib import Path

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
CONTRACT = str(KERNELS / "static_answers.toml")


def _verify(fn: str):
    return verify_op("aten::gather", contract=CONTRACT, meta=f"{KERNELS / 'static_answers.py'}:{fn}",
                     options=Options(jobs=1))


@pytest.mark.slow
@pytest.mark.parametrize("fn", ["drops_a_unit_column", "drops_it_where_known_single"])
def test_the_other_side_of_a_kernels_static_answer_is_checked_at_plain_sizes(fn):
    lines = (KERNELS / "static_answers.py").read_text().splitlines()
    start = lines.index(next(t for t in lines if t.startswith(f"def {fn}(")))
    line = start + 2  # the branch, the function's first line
    assert "statically_known" in lines[line - 1]
    r = _verify(fn)
    assert r.verdict is Verdict.FAIL
    assert {v.code for v in r.violations} == {RuleCode.OUTPUT_SHAPE_MISMATCH}, [v.message for v in r.violations]
    for v in r.violations:
        assert v.counterexample["B1"] == 1 and v.location is not None and v.location.line == line
        assert "statically_known" in v.message


@pytest.mark.slow
def test_a_static_answer_whose_sides_agree_passes():
    assert _verify("fast_path_for_one_column").verdict is Verdict.PASS
