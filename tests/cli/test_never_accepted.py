"""What no suppression or baseline makes a pass (SC005, inconclusive; SC023, an internal error), a TorchScript-only
operator (bad input, not a shapecheck bug), and a bug of shapecheck's on one contract of a gate that keeps the
others' results."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT, invoke

PIXEL_SHUFFLE = ROOT / "contracts" / "aten" / "pixel_shuffle.toml"

# a guard z3 cannot translate (``^``): part of the domain has no finished trace, SC005
XOR_KERNEL = '''import torch
from torch._meta_registrations import register_meta
aten = torch.ops.aten


@register_meta(aten.pixel_shuffle.default)
def meta_ps(self, upscale_factor):
    r = upscale_factor
    b, c, h, w = self.shape
    if (h ^ 12345) == 0:
        return self.new_empty((b, c // (r * r), h * r + 1, w * r))
    return self.new_empty((b, c // (r * r), h * r, w * r))
'''


@pytest.mark.parametrize("rule", ["SC005", "SC023"])
def test_a_suppression_of_what_says_nothing_was_proved_is_bad_input(tmp_path, rule):
    contract = tmp_path / "c.toml"
    contract.write_text(PIXEL_SHUFFLE.read_text() + f'\n[[suppress]]\nrule = "{rule}"\nreason = "accepted"\n')
    res = invoke("contract", "check", contract)
    assert res.returncode == 2 and "suppress[" in res.stderr and f"{rule} cannot be suppressed" in res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.slow
def test_a_baseline_never_accepts_an_inconclusive_finding(tmp_path):
    kernel = tmp_path / "xor_kernel.py"
    kernel.write_text(XOR_KERNEL)
    base = tmp_path / "b.json"
    args = ("gate", PIXEL_SHUFFLE, "--meta-source", kernel, "-j", "1", "--no-cache")
    first = invoke(*args)
    assert first.returncode == 3, first.stdout[-1500:]
    invoke(*args, "--write-baseline", base)
    assert "SC005" not in {f["rule"] for f in json.loads(base.read_text())["findings"]}
    again = invoke(*args, "--baseline", base)
    assert again.returncode == 3, again.stdout[-1500:]


@pytest.mark.slow
def test_a_torchscript_only_operator_is_bad_input(tmp_path):
    contract = tmp_path / "prim.toml"
    contract.write_text('schema = 1\nop = "prim::abs"\n\n[dims]\nN = { min = 1, max = 64 }\n\n[[args]]\n'
                        'name = "x"\nkind = "tensor"\ndtype = "float32"\nshape = "(N,)"\n\n[[paths]]\nid = "same"\n'
                        'when = "true"\noutputs = ["(N,)"]\n')
    for args in (("verify", "op", "prim::abs", "--contract", contract, "-j", "1", "--no-cache"),
                 ("contract", "draft", "prim::abs"), ("contract", "check", contract)):
        res = invoke(*args)
        assert res.returncode == 2 and "TorchScript operator" in res.stderr, (args, res.stderr)
    res = invoke("gate", contract, ROOT / "contracts" / "aten" / "index_select.toml", "-j", "1", "--no-cache",
                 "--format", "json")
    doc = json.loads(res.stdout)
    assert res.returncode == 2 and {r["op"]: r["verdict"] for r in doc["reports"]}["aten::index_select"] == "pass"


@pytest.mark.slow
def test_a_bug_on_one_contract_of_a_gate_keeps_the_others_results(tmp_path, monkeypatch):
    import shapecheck.ci.gate as G

    real = G.resolve_kernel

    def broken(contract, source):
        if "pixel_shuffle" in contract.op:
            raise KeyError("a bug")
        return real(contract, source)

    monkeypatch.setattr(G, "resolve_kernel", broken)
    res = invoke("gate", PIXEL_SHUFFLE, ROOT / "contracts" / "aten" / "index_select.toml", "-j", "1", "--no-cache",
                 "--format", "json")
    doc = json.loads(res.stdout)
    assert res.returncode == 4
    verdicts = {r["op"]: r["verdict"] for r in doc["reports"]}
    assert verdicts == {"aten::index_select": "pass", "aten::pixel_shuffle": "error"}


@pytest.mark.parametrize("output,says", [("\"'abc'\"", "the value 'abc'"), ('"1 < B < C"', "the condition"),
                                         ('"True"', "the condition true")])
def test_an_output_that_is_no_size_is_bad_input_at_load(tmp_path, output, says):
    text = PIXEL_SHUFFLE.read_text()
    contract = tmp_path / "c.toml"
    contract.write_text(text.replace(text[text.index("outputs = "):].splitlines()[0], f"outputs = [{output}]", 1))
    res = invoke("contract", "check", contract)
    assert res.returncode == 2 and "outputs[0]" in res.stderr and says in res.stderr, res.stderr


@pytest.mark.slow
@pytest.mark.parametrize("outputs,says", [('["(B, C // (r * r), H * r, W * r)", "(B,)"]', "2 outputs, but"),
                                          ('["B"]', "the integer B, but"),
                                          ('["B if B > C else H"]', "the integer (B if B > C else H), but"),
                                          ('[{ shape = "B" }]', "the integer B, but")])
def test_outputs_the_ops_schema_cannot_return_are_bad_input(tmp_path, outputs, says):
    text = PIXEL_SHUFFLE.read_text()
    contract = tmp_path / "c.toml"
    contract.write_text(text.replace(text[text.index("outputs = "):].splitlines()[0], f"outputs = {outputs}", 1))
    res = invoke("verify", "op", "aten::pixel_shuffle", "--contract", contract, "-j", "1", "--no-cache")
    assert res.returncode == 2 and says in res.stderr and "Traceback" not in res.stderr, res.stderr
