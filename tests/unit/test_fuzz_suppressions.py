"""A contract's `[[suppress]]` of an output rule (SC002) accepts the meta kernel's deviation in `fuzz op` as it
does in `verify`: a note, not a failure. fuzz failed such a kernel with SC002 while verify passed it."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from shapecheck.cli.main import cli
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # fuzz and verify runs in supervised children

CONTRACT = (ROOT / "tests" / "golden" / "examples" / "new_empty.toml").read_text()
WRONG = f"{ROOT}/tests/golden/examples/sc002_output_shape_mismatch.py:kernel"


def suppress(rule: str, **narrow: str) -> str:
    extra = "".join(f'{k} = "{v}"\n' for k, v in narrow.items())
    return f'\n[[suppress]]\nrule = "{rule}"\nreason = "known: the kernel pads by one"\n{extra}'


def run(tmp_path, text: str, *command: str) -> tuple[int, str]:
    contract = tmp_path / "c.toml"
    contract.write_text(text)
    more = ["--examples", "10", "--seed", "3"] if "fuzz" in command else ["--no-cache"]
    res = CliRunner().invoke(cli, [*command, "aten::new_empty", "--contract", str(contract), "--meta", WRONG, *more])
    return res.exit_code, res.output


def test_a_suppressed_output_rule_is_a_note_in_fuzz_as_in_verify(tmp_path):
    accepted = CONTRACT + suppress("SC002") + suppress("SC011")  # SC011: the eager kernel's shape differs too
    code, out = run(tmp_path, accepted, "verify", "op")
    assert code == 0, out
    code, out = run(tmp_path, accepted, "fuzz", "op")
    assert code == 0, out
    assert "output 0 differs from path only@default, accepted by the contract's [[suppress]] (SC002)" in out


@pytest.mark.parametrize("narrow", [{}, {"path": "other"}, {"case": "dtype=float16"}, {"message": "(3,)"}])
def test_a_suppression_that_does_not_cover_the_deviation_leaves_it_a_failure(tmp_path, narrow):
    text = CONTRACT + (suppress("SC002", **narrow) if narrow else "") + suppress("SC011")
    if narrow.get("path"):
        text += '\n[[paths]]\nid = "other"\nwhen = "N < 0"\noutputs = ["(N,)"]\n'
    code, out = run(tmp_path, text, "fuzz", "op")
    assert code == 1 and "SC002 output-shape-mismatch" in out, out
