"""The other side of a kernel's guard_or_false on a stride, run on concrete sizes, is checked against the output
table too (hunt 30): its strides (SC018), at a point whose other dims are 2 or more, where a size of 1 would hide
them."""

from pathlib import Path

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op

KERNELS = Path(__file__).resolve().parent.parent / "kernels"


def _verify(fn: str):
    return verify_op("aten::upsample_nearest2d", contract=str(KERNELS / "fallback_layouts.toml"),
                     meta=f"{KERNELS / 'fallback_layouts.py'}:{fn}", options=Options(jobs=1))


@pytest.mark.slow
@pytest.mark.parametrize("fn", ["unit_stride_or_false", "unit_stride_known_true"])
def test_a_layout_branch_on_a_stride_fails_where_its_other_side_holds(fn):
    report = _verify(fn)
    assert report.verdict is Verdict.FAIL
    assert {(v.code.value, v.case) for v in report.violations} == {("SC018", "fmt=contiguous")}
    for v in report.violations:  # (one per kernel torch runs for the op: export's and plain FakeTensorMode's)
        assert v.counterexample["H"] == v.counterexample["W"] == 1
        assert v.counterexample["N"] >= 2 and v.counterexample["C"] >= 2, v.counterexample
        assert v.location is not None and "stride(1) == 1" in v.location.text


@pytest.mark.slow  # over 0.5 s on an idle core
def test_the_installed_kernel_passes_the_same_contract():
    """torch's own decomposition, whose layout follows the eager kernel's: no false alarm from the other sides."""
    report = verify_op("aten::upsample_nearest2d", contract=str(KERNELS / "fallback_layouts.toml"),
                       options=Options(jobs=1))
    assert report.verdict is Verdict.PASS, [v.message for v in report.violations]


def test_a_layout_the_unbacked_trace_alone_gives_is_no_counterexample():
    """hunt 30: FakeTensor's convolution rule lays its outputs out by the input's memory format only where every
    size has a hint (``has_guarding_hint``), so the unbacked trace's output is contiguous where the kernel on concrete
    sizes (and eager, and strict export's recorded strides) gives channels_last, as the contract says. That was
    SC018 with a counterexample that is none; now it is SC005: the layout is not proved, nothing is claimed. Its
    reason is not torch's layout helpers' guard_or_false answers, which the trace never asked (hunt 68: so it
    said, of a meta whose own strides were wrong)."""
    report = verify_op("aten::convolution", contract=str(KERNELS / "conv_channels_last.toml"), options=Options(jobs=1))
    assert report.verdict is Verdict.INCONCLUSIVE, [(v.code, v.message) for v in report.violations]
    assert {v.code.value for v in report.violations} == {"SC005"}
    assert all("returns the contract's strides at" in v.message and not v.counterexample for v in report.violations)
    assert all("asked torch's layout logic nothing it could not decide" in v.message and "guard_or_false" not in
               v.message for v in report.violations)
    statuses = {c.case: {p.status.value for p in c.paths} for c in report.cases}
    assert statuses["in_fmt=contiguous,w_fmt=contiguous"] == {"proved"}
    assert all(s == {"unknown"} for k, s in statuses.items() if "channels_last" in k), statuses


@pytest.mark.slow
def test_an_expanded_input_of_one_channel_keeps_its_stride_and_the_layout_logic_is_checked_there():
    """hunt 30: an ``expand`` dim of size 1 has the layout's stride, as ``torch.Tensor.expand`` leaves it (it was
    0), and the answers of torch's layout logic that the unbacked trace's strides rest on are run on their other
    side: clone's output at C = 1 is not contiguous, a real counterexample; where C >= 2 the contract holds."""
    import torch

    report = verify_op("aten::clone", contract=str(KERNELS / "expanded_clone.toml"), options=Options(jobs=1))
    assert report.verdict is Verdict.FAIL
    assert {(v.code.value, v.case) for v in report.violations} == {("SC018", "channels=any")}
    for v in report.violations:
        p = v.counterexample
        assert p["C"] == 1 and p["W"] >= 2, p
        # plain torch at the counterexample: the op's eager kernel on the tensor expand makes
        x = torch.empty(p["N"], 1, 1, p["W"]).to(memory_format=torch.channels_last).expand(p["N"], 1, p["H"], p["W"])
        out = torch.ops.aten.clone(x)
        assert out.stride() != torch.empty(out.shape).stride() and str(tuple(out.stride())) in v.message
