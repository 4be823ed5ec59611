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


def test_a_message_in_verifys_words_is_matched_in_fuzz_too(tmp_path):
    """verify's SC002 says "output 0 is (2,) but the contract's path only says (1,)"; fuzz's own text differs.
    A suppression narrowed to verify's words accepted the finding in verify and not in fuzz."""
    accepted = CONTRACT + suppress("SC002", message="but the contract's path only says") + suppress("SC011")
    assert run(tmp_path, accepted, "verify", "op")[0] == 0
    code, out = run(tmp_path, accepted, "fuzz", "op")
    assert code == 0, out


def test_a_difference_is_matched_on_the_dims_of_its_output_and_verifys_message():
    from shapecheck.contract.model import BoundPath
    from shapecheck.logic import expr as E
    from shapecheck.rules import RuleCode
    from shapecheck.runtime.outputs import as_verify_says

    p = BoundPath("only", "default", E.parse("true"), (E.parse("(N,)"), E.parse("(M, K)")), (), "")
    names, said = as_verify_says(p, (RuleCode.OUTPUT_SHAPE_MISMATCH, "(1,)", "(2,)",
                                     "output 0 is (2,) but path only@default says (1,)"))
    assert names == {"N"} and said == "output 0 is (2,) but the contract's path only says (1,)"
    names, _ = as_verify_says(p, (RuleCode.OUTPUT_SHAPE_MISMATCH, "(1, 2)", "(2, 2)", "output 1 is (2, 2) but ..."))
    assert names == {"M", "K"}  # a suppression narrowed to N does not accept a difference of output 1
