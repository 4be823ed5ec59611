"""Guards torch.export's tracer installs after the kernel runs (finding F13): it records every node's output
metadata (``shape_prop._extract_tensor_metadata``), whose contiguity checks guard, with backed sizes, an output
size such as ``(W - 1) // 2 + 1`` against 1. Strict export then succeeds and the exported program refuses W = 2.
verify's export-style run records the outputs' metadata too (``BackedRun.run(record_outputs=True)``): SC022."""

from pathlib import Path

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import ROOT

SHIPPED = ROOT / "contracts" / "aten" / "convolution.toml"


def _contract(tmp_path: Path, k: int, p: int, s: int) -> str:
    """The shipped convolution contract, one case, without its suppressions."""
    text = SHIPPED.read_text().split("[[suppress]]")[0]
    text = text.replace("k = [1, 3]", f"k = [{k}]").replace("p = [0, 1]", f"p = [{p}]").replace("s = [1, 2]", f"s = [{s}]")
    path = tmp_path / "conv.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.slow
def test_an_output_size_that_can_be_1_is_sc022_and_the_exported_program_refuses_it(tmp_path):
    r = verify_op("aten::convolution", contract=_contract(tmp_path, 1, 0, 2),
                  options=Options(jobs=1, confirm_export=True))
    assert r.verdict == Verdict.FAIL
    [v] = r.violations
    assert v.code == "SC022" and "torch.export's record of the op's output" in v.message
    assert v.counterexample["W"] == 2 or v.counterexample["H"] == 2  # sizes >= 2: export's own range
    # torch.export succeeds, and its program raises at the counterexample: --confirm-export ran it
    [case] = r.cases
    x = case.export
    assert x is not None and x.succeeded and "the program raises" in x.explanation and "Guard failed" in x.explanation


@pytest.mark.slow
def test_an_output_size_never_1_from_2_up_is_no_finding(tmp_path):
    # k=1, p=1, s=2: the output (H + 1) // 2 + 1 is at least 2 for every H: no guard restricts H
    r = verify_op("aten::convolution", contract=_contract(tmp_path, 1, 1, 2), options=Options(jobs=1))
    assert r.verdict == Verdict.PASS, [(v.code, v.expr) for v in r.violations]


@pytest.mark.slow
def test_confirm_export_of_an_op_torch_does_not_know_says_so_and_keeps_the_verdict():
    """A --meta function of a contract's op that torch has no operator for: nothing to export (it was exit 2,
    "unknown op", after the whole run)."""
    from tests.conftest import KERNELS, invoke

    res = invoke("verify", "op", "sctest::shuffle_channels", "--contract", KERNELS / "shuffle_channels.toml", "--meta",
                 f"{KERNELS / 'size_helpers.py'}:unshuffle_channels", "-j", "1", "--no-cache", "--confirm-export")
    assert res.returncode == 0, res.stderr
    assert "has no operator sctest::shuffle_channels to export" in res.stdout


POOL1D = """schema = 1
op = "aten::max_pool1d_with_indices"
[dims]
N = { min = 1, max = 1024 }
L = { min = 2, max = 1024 }
[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(N, L)"
[[args]]
name = "kernel_size"
kind = "ints"
value = [2]
[[paths]]
id = "p"
when = "true"
outputs = ["(N, L // 2)", "(N, L // 2)"]
"""


@pytest.mark.slow
def test_an_output_of_1_at_the_least_example_is_recorded_at_a_larger_one(tmp_path):
    """A hunt's wrong PASS: at export's least example (N=2, L=3) the output size L // 2 is 1, where the record
    pins it to 1 and was left out. Strict export there succeeds and its program refuses L=4; exported at L=9 it
    refuses L=3 instead: no example gives a program for the contract's range. The run is made again at a larger
    example, where the record guards L // 2 != 1: SC022 at L=2 or 3."""
    import torch

    path = tmp_path / "pool1d.toml"
    path.write_text(POOL1D)
    r = verify_op("aten::max_pool1d_with_indices", contract=str(path), options=Options(jobs=1))
    assert r.verdict == Verdict.FAIL
    [v] = r.violations
    assert v.code == "SC022" and "torch.export's record of the op's output" in v.message
    assert v.counterexample["L"] in (2, 3) and (v.witness or {}).get("L", 0) >= 4

    class Pool(torch.nn.Module):
        def forward(self, x):
            return torch.ops.aten.max_pool1d_with_indices(x, [2])

    dims = {"x": {0: torch.export.Dim("N", min=1, max=1024), 1: torch.export.Dim("L", min=2, max=1024)}}
    for example, refused in (((2, 3), (2, 4)), ((2, 9), (2, 3))):
        program = torch.export.export(Pool(), (torch.randn(*example),), dynamic_shapes=dims, strict=True)
        with pytest.raises(Exception, match="Guard failed"):
            program.module()(torch.randn(*refused))
