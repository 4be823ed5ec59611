"""Where no contract path's `when` holds, no output is checked: that part of a case's domain is SC005 with a
real point of it (inconclusive, exit 3), never a pass. A contract whose one path is unreachable passed a
kernel with a wrong output before."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from shapecheck.cli.main import cli
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # each a verify run in a supervised child

CONTRACT = (ROOT / "tests" / "golden" / "examples" / "new_empty.toml").read_text()
WRONG = f"{ROOT}/tests/golden/examples/sc002_output_shape_mismatch.py:kernel"


def verify(tmp_path: Path, when: str, meta: str | None) -> tuple[int, dict]:
    import json

    contract = tmp_path / "c.toml"
    contract.write_text(CONTRACT.replace('when = "true"', f'when = "{when}"'))
    res = CliRunner().invoke(cli, ["verify", "op", "aten::new_empty", "--contract", str(contract), "-j", "1",
                                   "--no-cache", "--format", "json", *(["--meta", meta] if meta else [])])
    return res.exit_code, json.loads(res.output)


@pytest.mark.parametrize(("when", "outside"), [("N < 0", lambda n: True), ("N > 5", lambda n: n <= 5),
                                               ("N != 3", lambda n: n == 3)])
def test_a_domain_no_path_covers_is_inconclusive_at_a_real_point(tmp_path, when, outside):
    code, doc = verify(tmp_path, when, WRONG)
    uncovered = [v for v in doc["violations"] if v["expr"] == "no contract path"]
    if when == "N < 0":  # nothing of the output checked anywhere: the wrong output is not seen
        assert code == 3 and doc["verdict"] == "inconclusive"
        (v,) = uncovered
        assert v["code"] == "SC005" and v["counterexample"]["N"] >= 1 and outside(v["counterexample"]["N"])
    else:  # the path's part shows the wrong output, which fails the run; the gap is reported beside it
        assert code == 1 and {v["code"] for v in doc["violations"]} == {"SC002", "SC005"} and len(uncovered) == 1
        assert outside(uncovered[0]["counterexample"]["N"])


def test_a_failure_the_contract_accepts_does_not_hide_the_gap(tmp_path):
    """A `[[suppress]]` of the wrong output left the run without a failure, and the part no path covers unchecked:
    it passed. The gap is the contract's, whatever the kernel's findings: inconclusive."""
    contract = tmp_path / "c.toml"
    contract.write_text(CONTRACT.replace('when = "true"', 'when = "N <= 5"') +
                        '\n[[suppress]]\nrule = "SC002"\nreason = "known"\n')
    res = CliRunner().invoke(cli, ["verify", "op", "aten::new_empty", "--contract", str(contract), "--meta", WRONG,
                                   "-j", "1", "--no-cache"])
    assert res.exit_code == 3 and "no contract path" in res.output, res.output


@pytest.mark.parametrize("when", ["N > 5", "N != 3"])
def test_the_installed_kernel_on_a_contract_that_leaves_a_gap_is_inconclusive_there(tmp_path, when):
    code, doc = verify(tmp_path, when, None)
    assert code == 3, doc["violations"]
    (v,) = [v for v in doc["violations"] if v["expr"] == "no contract path"]
    n = v["counterexample"]["N"]
    assert v["code"] == "SC005" and 1 <= n and not (n > 5 if when == "N > 5" else n != 3)


def test_paths_that_cover_the_domain_together_pass(tmp_path):
    contract = tmp_path / "c.toml"
    text = CONTRACT.replace('when = "true"', 'when = "N <= 5"') + (
        '\n[[paths]]\nid = "rest"\nwhen = "N > 5"\noutputs = ["(N,)"]\n')
    contract.write_text(text)
    res = CliRunner().invoke(cli, ["verify", "op", "aten::new_empty", "--contract", str(contract), "-j", "1",
                                   "--no-cache"])
    assert res.exit_code == 0, res.output
