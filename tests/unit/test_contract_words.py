"""Contract words a user writes that were refused or misnamed (hunt 59): an output layout named as an input's
(``channels_last``), and a shape-valued ``[let]`` as a path's output ("the integer S")."""

from __future__ import annotations

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op

RELU = """schema = 1
op = "aten::relu"

[dims]
N = { min = 1, max = 64 }
C = { min = 1, max = 64 }
H = { min = 1, max = 64 }
W = { min = 1, max = 64 }

[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(N, C, H, W)"
layout = "channels_last"

[[paths]]
id = "any"
when = "true"
outputs = [{ shape = "(N, C, H, W)", dtype = "float32", layout = "OUT" }]
"""

TOPK = """schema = 1
op = "aten::topk"

[dims]
A0 = { min = 0, max = 4096 }
A1 = { min = 1, max = 4096 }
k = { min = 0, max = 4096 }

[domain]
requires = ["k <= A1"]

[let]
S = "(A0, k)"

[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(A0, A1)"

[[args]]
name = "k"
kind = "int"
value = "k"

[[paths]]
id = "only"
when = "true"
outputs = ["S", "S"]
"""


@pytest.mark.slow
@pytest.mark.parametrize(("out", "verdict"), [("channels_last", Verdict.PASS), ("(0, 2, 3, 1)", Verdict.PASS),
                                              ("contiguous", Verdict.FAIL)])
def test_an_output_layout_may_be_named_as_an_inputs_is(tmp_path, out, verdict):
    contract = tmp_path / "relu.toml"
    contract.write_text(RELU.replace("OUT", out))
    assert verify_op("aten::relu", contract=str(contract), options=Options(jobs=1)).verdict is verdict


def test_an_unknown_output_layout_word_lists_the_words(tmp_path):
    from tests.conftest import invoke

    contract = tmp_path / "relu.toml"
    contract.write_text(RELU.replace("OUT", "channels_first"))
    res = invoke("verify", "op", "aten::relu", "--contract", str(contract), "--no-cache")
    assert res.returncode == 2 and "[paths.any.outputs[0].layout]" in res.stderr
    assert "expected 'contiguous', 'channels_last', 'channels_last_3d', 'like ARG'" in res.stderr, res.stderr


def test_a_shape_valued_let_is_an_output_shape(tmp_path):
    contract = tmp_path / "topk.toml"
    contract.write_text(TOPK)
    r = verify_op("aten::topk", contract=str(contract), options=Options(jobs=1))
    assert r.verdict is Verdict.PASS, [v.message for v in r.violations]
    contract.write_text(TOPK.replace('S = "(A0, k)"', 'S = "A0 * k"'))
    from shapecheck.errors import ContractError

    with pytest.raises(ContractError, match="the integer S"):  # an integer let is still refused there
        verify_op("aten::topk", contract=str(contract), options=Options(jobs=1))
