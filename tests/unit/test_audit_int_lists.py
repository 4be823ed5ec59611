"""The audit's argument variants reach the int lists and optional tensors where size bugs live (hunt 19, on
executorch's cadence ops): a sample's plain int for an ``int[1]`` argument (``stride=1``) is raised like a list,
an optional tensor the first inputs leave out is tried present, a padding at the search's own 1 goes to 0 in the
corner of raised lists, and the fake's own output formula is checked where a size of it is 0 while no input is
empty (a kernel larger than its input). Each library's fake is wrong only there."""

from __future__ import annotations

import json
import sys

import pytest

from tests.unit.test_audit_library_kernels import _audit

POOL = '''
import torch
import torch.nn.functional as F

lib = torch.library.Library("zppool", "DEF")
lib.define("pool(Tensor x, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], Tensor? zero_point=None) -> Tensor")


def pool(x, kernel_size, stride=(), padding=(0,), zero_point=None):
    k, p = kernel_size[0], padding[0]
    s = stride[0] if len(stride) else k
    if zero_point is not None:  # a quantized input: padded by hand with the zero point, then pooled unpadded
        x = F.pad(x, (p, p), value=float(zero_point.flatten()[0]) if zero_point.numel() else 0.0)
        p = 0
    return F.avg_pool1d(x, k, s, p, ceil_mode=True)


lib.impl("pool", pool, "CPU")
# the fake pools as the unquantized kernel does, whatever the zero point: its ceil-mode correction then differs
torch.library.register_fake("zppool::pool", lambda x, kernel_size, stride=(), padding=(0,), zero_point=None:
                            F.avg_pool1d(x, kernel_size[0], stride[0] if len(stride) else kernel_size[0],
                                         padding[0], ceil_mode=True), lib=lib)


def samples(op):
    if op == "zppool::pool.default":  # a plain int for the int[1] stride, as an OpInfo sample gives it
        return [((torch.randn(2, 3, 5), [2]), {"stride": 1, "padding": [1]})]
    return []
'''

UNFOLD = '''
import torch
import torch.nn.functional as F

lib = torch.library.Library("rowlib", "DEF")
lib.define("rows(Tensor x, int[2] kernel_size, int[2] padding) -> Tensor")


def rows(x, kernel_size, padding):
    return F.unfold(x, kernel_size, padding=padding).transpose(1, 2)  # raises where the kernel exceeds the input


def rows_fake(x, kernel_size, padding):  # no check that the kernel fits: an empty output there
    (kh, kw), (ph, pw) = kernel_size, padding
    out = (x.shape[2] + 2 * ph - kh + 1) * (x.shape[3] + 2 * pw - kw + 1)
    return x.new_empty(x.shape[0], out, x.shape[1] * kh * kw)


lib.impl("rows", rows, "CPU")
torch.library.register_fake("rowlib::rows", rows_fake, lib=lib)
'''

CONV = '''
import torch
import torch.nn.functional as F

lib = torch.library.Library("edgeconv", "DEF")
lib.define("conv(Tensor x, Tensor w) -> Tensor")
lib.impl("conv", lambda x, w: F.conv1d(x, w), "CPU")
# no check that the kernel fits the input: an empty output where the eager kernel raises
torch.library.register_fake("edgeconv::conv", lambda x, w: x.new_empty(x.shape[0], w.shape[0],
                                                                       x.shape[2] - w.shape[2] + 1), lib=lib)
'''


def _run(tmp_path, monkeypatch, name: str, source: str, *extra: str) -> tuple[int, dict]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        code, out = _audit("--import", name, *extra, "-j", "1", "--no-cache", "--format", "json")
    finally:
        sys.modules.pop(name, None)
    return code, json.loads(out)


@pytest.mark.slow
def test_a_plain_int_stride_is_raised_and_a_left_out_optional_tensor_tried_present(tmp_path, monkeypatch):
    code, doc = _run(tmp_path, monkeypatch, "zppool", POOL, "--samples", "zppool:samples")
    (rec,) = doc["ops"]
    assert rec["inputs"] == "samples" and "stride=1" in rec["example"], rec["example"]
    shapes = [f for f in doc["findings"] if f["code"] == "SC038"]
    assert code == 1 and shapes, [(f["code"], f["message"]) for f in doc["findings"]]
    assert all("stride=2" in f["message"] and "zero_point=Tensor" in f["message"] for f in shapes), shapes


@pytest.mark.slow
def test_a_padding_at_the_searchs_one_goes_to_0_beside_a_larger_kernel(tmp_path, monkeypatch):
    code, doc = _run(tmp_path, monkeypatch, "rowlib", UNFOLD)
    (rec,) = doc["ops"]
    assert "padding=[1, 1]" in rec["example"], rec["example"]  # the search's own [1]: no schema default
    found = [f for f in doc["findings"] if f["code"] == "SC041" and "padding=[0, 0]" in f["message"]]
    assert code == 1 and found, [(f["code"], f["message"]) for f in doc["findings"]]
    assert "kernel_size=[2, 2]" in found[0]["message"]


@pytest.mark.slow
def test_an_empty_output_by_the_fakes_own_formula_at_non_empty_inputs_is_compared(tmp_path, monkeypatch):
    code, doc = _run(tmp_path, monkeypatch, "edgeconv", CONV)
    found = [f for f in doc["findings"] if f["code"] == "SC041"]
    assert code == 1 and found, [(f["code"], f["message"]) for f in doc["findings"]]
    point = found[0]["counterexample"]
    assert min(point.values()) >= 1 and point["x_2"] - point["w_2"] + 1 == 0, point
    assert not any("noted, not reported" in n and "Kernel size" in n for n in doc["ops"][0]["notes"])
    # the fake lacks a second check (the channels), which a point of its own shows: a finding of its own
    assert any("channels" in f["message"] for f in found), [f["message"] for f in found]


ROUTE = '''
import torch


@torch.library.custom_op("zeroroute::route", mutates_args=())
def route(x: torch.Tensor, w: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    out = x.new_zeros(x.shape[0], w.shape[-1])
    start = 0
    for i, end in enumerate(offs.tolist()):  # a group per expert: rows start..end go through w[i]
        if end > start:
            out[start:end] = x[start:end] @ w[i]
        start = end
    return out


@route.register_fake
def _(x, w, offs):
    torch._check(offs.shape[0] == w.shape[0], lambda: "one offset per expert")
    return x.new_empty(x.shape[0], w.shape[-1])
'''


@pytest.mark.slow
def test_an_eager_kernel_that_returns_only_on_offsets_made_up_as_zeros_says_so(tmp_path, monkeypatch):
    """With zeros for offsets the eager kernel's loop routes nothing, so it returns where the fake's check
    (one offset per expert) refuses; with other integers it raises too. Still SC042 (a fake that refuses sizes
    the op takes meets the same: hunt 21's meta_index_Tensor raising at 7), with the data named."""
    code, doc = _run(tmp_path, monkeypatch, "zeroroute", ROUTE)
    rejects = [f for f in doc["findings"] if f["code"] == "SC042"]
    assert code == 1 and rejects, doc["findings"]
    assert all("one offset per expert" in f["message"] and "made up as zeros" in f["message"] for f in rejects)


def test_a_guard_in_an_installed_librarys_own_helper_is_placed_at_the_helpers_line():
    """amd-quark's fake calls ``reshape_to_blocks`` in another module of its package, which branches on the size
    modulo the group: the audit placed the guard at the fake's call of it. A helper of torch's, or of another
    package, still leaves the finding at the kernel's line."""
    import sysconfig
    import traceback
    from os.path import join

    from shapecheck._torch.audit import audit_frame

    site = sysconfig.get_paths()["purelib"]
    kernel = join(site, "somelib", "kernel", "fakes.py")

    def frames(helper: str) -> list:
        return [traceback.FrameSummary(kernel, 168, "dequantize_fake", line="x = reshape_to_blocks(x)"),
                traceback.FrameSummary(helper, 217, "pad_to_blocks", line="if pad == block:")]

    assert audit_frame(frames(join(site, "somelib", "quantization", "utils.py")), {kernel}).line == 217
    assert audit_frame(frames(join(site, "otherlib", "utils.py")), {kernel}).line == 168


def test_offsets_made_up_as_ones_are_as_degenerate_as_zeros_so_0_1_2_are_tried_too():
    """Cumulative offsets [1, 1] route every row to the first group, as [0, 0] route none: an eager kernel that
    returns on both and raises on [0, 1] returned on made-up data alone (transformers' grouped_mm fallback, hunt
    20)."""
    from types import SimpleNamespace

    from shapecheck.audit.differential import _on_zeros_only
    from shapecheck.audit.inputs import OpInputs

    inputs = OpInputs("x::y", "schema", (("x", False, ("tensor", ("x_0", "x_1"), (3, 3), "float32")),
                                         ("offs", False, ("tensor", ("offs_0",), (2,), "int64"))))
    seen = []

    def eager(call, point):
        fill = call.args[1][2][4] if len(call.args[1][2]) > 4 else "zeros"
        seen.append(fill)
        return SimpleNamespace(ok=fill != "arange", crashed=False, error="IndexError: index 1 is out of bounds")

    assert _on_zeros_only(inputs, {"x_0": 3, "x_1": 3, "offs_0": 2}, eager) == "IndexError: index 1 is out of bounds"
    assert seen == ["ones", "arange"]
    floats = OpInputs("x::y", "schema", inputs.args[:1])
    assert _on_zeros_only(floats, {"x_0": 3, "x_1": 3}, eager) is None  # no integer input: nothing made up


ARITY = '''
import torch

lib = torch.library.Library("aritylib", "DEF")
lib.define("scale(Tensor x, Tensor w, Tensor? offset=None) -> Tensor")


def scale(x, w):  # the reference kernel lacks the schema's optional offset: any call passing one is a TypeError
    return x * w


lib.impl("scale", scale, "CPU")
torch.library.register_fake("aritylib::scale", lambda x, w, offset=None: torch.empty_like(x), lib=lib)
'''


@pytest.mark.slow
def test_an_eager_kernel_that_cannot_take_an_optional_tensor_is_compared_without_it(tmp_path, monkeypatch):
    """executorch's cadence reference kernel takes 14 of its schema's 15 arguments: every call the search made
    passed the optional offset, a TypeError, and the op was never compared. Without it the kernel runs."""
    code, doc = _run(tmp_path, monkeypatch, "aritylib", ARITY)
    (rec,) = doc["ops"]
    assert "offset=None" in rec["example"] and rec["eager"]["status"] == "compared", (rec["example"], rec["eager"])


def test_the_side_of_a_branch_the_example_lies_on_is_judged_at_the_example():
    """torch 2.4's avg_pool3d branches on ``(T + 1) % 2 != 0``; the side the example's T = 3 lies on was judged at
    T = 1, the least odd size, where a kernel of 2 is larger than the input: the op refused it for that reason, the
    branch went undecided and its parity guard was never reported (hunt 21)."""
    from shapecheck.audit.explore import AuditExplorer
    from shapecheck.audit.inputs import OpInputs
    from shapecheck.logic import expr as E

    inputs = OpInputs("x::y", "schema", (("x", False, ("tensor", ("x_0", "x_1"), (3, 3), "float32")),))
    near = AuditExplorer(None, inputs).near  # type: ignore[arg-type]
    assert near([E.parse("(x_0 + 1) % 2 == 0")], {"x_0"}) == {"x_0": 3, "x_1": 3}
    assert near([E.parse("(x_0 + 1) % 2 != 0")], {"x_0"})["x_0"] % 2 == 0  # the other side moves off it


def test_breaking_an_assert_moves_the_dims_another_assert_ties_to_it():
    """A fake that raises at self_0 = 7 (an inferred ``self_0 != 7``) beside ``indices_0_0 == self_0`` (a boolean
    mask's length): the point that breaks it had the mask at the example's 3, so the eager kernel refused it for the
    mask, and the raise stood as a relation (hunt 22: a meta_index_Tensor broken at 7 passed)."""
    from shapecheck.audit.explore import AuditExplorer
    from shapecheck.audit.inputs import OpInputs
    from shapecheck.audit.points import draw_points
    from shapecheck.logic import expr as E

    inputs = OpInputs("x::y", "schema", (("self", False, ("tensor", ("self_0", "self_1"), (3, 3), "float32")),
                                         ("indices", False, ("list", (("tensor", ("indices_0_0",), (3,), "bool"),)))))
    requires = [E.parse("indices_0_0 == self_0"), E.parse("self_0 != 7")]
    points = draw_points(inputs, [], AuditExplorer(None, inputs).near, requires)  # type: ignore[arg-type]
    assert {"self_0": 7, "self_1": 3, "indices_0_0": 7} in points, points


def test_a_broadcast_relation_is_held_as_its_equality_when_an_assert_is_broken():
    """addmm broken at self_0 = 7 beside ``mat1_0 == self_0 (or broadcast: 1)``: z3's least point took mat1_0 = 1,
    which the eager kernel refuses to expand to 7 rows, and the raise stood as a relation (hunt 22)."""
    from shapecheck.audit.explore import AuditExplorer, parsed_requires
    from shapecheck.audit.inputs import OpInputs
    from shapecheck.audit.points import draw_points

    inputs = OpInputs("x::y", "schema", (("self", False, ("tensor", ("self_0",), (3,), "float32")),
                                         ("mat1", False, ("tensor", ("mat1_0",), (3,), "float32"))))
    requires = parsed_requires([("mat1_0 == self_0 (or broadcast: 1)", None, ""), ("self_0 != 7", None, "")])
    points = draw_points(inputs, [], AuditExplorer(None, inputs).near, requires)  # type: ignore[arg-type]
    assert {"self_0": 7, "mat1_0": 7} in points, points


PAIRED = '''
import torch

lib = torch.library.Library("pairlib", "DEF")
lib.define("put(Tensor self, Tensor src) -> Tensor")


def put(self, src):
    if src.shape != self.shape:  # the eager kernel demands src as large as self; the fake never asserts it
        raise RuntimeError(f"expected src of size {list(self.shape)}, got {list(src.shape)}")
    return self + src


def put_fake(self, src):
    if self.shape[0] == 7:  # a planted break: a size the eager kernel takes
        raise RuntimeError("the fake refuses 7 rows")
    return torch.empty_like(self)


lib.impl("put", put, "CPU")
torch.library.register_fake("pairlib::put", put_fake, lib=lib)
'''


@pytest.mark.slow
def test_a_fake_that_raises_at_a_size_is_compared_where_the_dims_the_eager_kernel_ties_move_with_it(tmp_path,
                                                                                                  monkeypatch):
    # hunt 22's meta_slice_scatter broken at 7: moving self_0 alone to 7 leaves src a row short, which the eager
    # kernel refuses too, and the raise read as a relation (exit 1 on other findings only, or a pass); the dims
    # that share its value in the example (every size 3) move with it, where the eager kernel returns
    code, doc = _run(tmp_path, monkeypatch, "pairlib", PAIRED, "--variants", "0")
    rejects = [f for f in doc["findings"] if f["code"] == "SC042"]
    assert code == 1 and rejects, [(f["code"], f["message"]) for f in doc["findings"]]
    point = rejects[0]["counterexample"]
    assert point["self_0"] == 7 and point["src_0"] == 7 and point["self_1"] == point["src_1"], point
    loc = rejects[0]["location"]
    assert loc["file"].endswith("pairlib.py") and loc["line"] == 15, loc


SCALES = '''
import torch

lib = torch.library.Library("twosamples", "DEF")
lib.define("scale_mul(Tensor x, Tensor scale) -> Tensor")
lib.impl("scale_mul", lambda x, scale: x * scale, "CPU")
# the eager kernel broadcasts x against the scale; the fake keeps x's shape
torch.library.register_fake("twosamples::scale_mul", lambda x, scale: torch.empty_like(x), lib=lib)


def samples(op):
    if op == "twosamples::scale_mul.default":
        return [((torch.randn(4, 8), torch.tensor(2.0)), {}),  # a per-tensor scale: both agree
                ((torch.randn(4, 8), torch.rand(4, 1) + 1), {})]  # a per-row scale: x of 1 row gives 4
    return []
'''


@pytest.mark.slow
def test_every_sample_of_the_hook_is_traced_and_compared_not_only_the_first(tmp_path, monkeypatch):
    # a hunt on nvidia-modelopt's tensorrt::quantize_op: the hook's second sample, the one that shows the fake's
    # wrong broadcast, was never used (exit 0); docs/audit.md promises the first 4
    code, doc = _run(tmp_path, monkeypatch, "twosamples", SCALES, "--samples", "twosamples:samples", "--variants", "0")
    (rec,) = doc["ops"]
    assert any(v["args"] == "sample 2 of the samples hook" for v in rec["variants"]), rec["variants"]
    shapes = [f for f in rec["findings"] if f["code"] == "SC038"]
    assert code == 1 and shapes and "sample 2 of the samples hook" in shapes[0]["message"], rec["findings"]
    assert shapes[0]["counterexample"]["scale_0"] == 4 and shapes[0]["counterexample"]["x_0"] == 1, shapes


NONE_ARG = '''
import torch

lib = torch.library.Library("nonearg", "DEF")
lib.define("op(Tensor x, int block_size, None amax) -> Tensor")  # nvidia-modelopt's dynamic_block_quantize_op
lib.impl("op", lambda x, block_size, amax: x.clone(), "CPU")
torch.library.register_fake("nonearg::op", lambda x, block_size, amax: torch.empty_like(x), lib=lib)
'''


@pytest.mark.slow
def test_an_argument_the_schema_types_none_takes_none(tmp_path, monkeypatch):
    # a hunt on nvidia-modelopt: "no value can be made for amax (its schema type)", the op without inputs (exit 3)
    code, doc = _run(tmp_path, monkeypatch, "nonearg", NONE_ARG, "--variants", "0")
    (rec,) = doc["ops"]
    assert code == 0 and rec["status"] == "clean" and "amax=None" in rec["example"], (code, rec)
