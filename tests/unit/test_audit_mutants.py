"""Faults a mutation hunt planted in torch's own meta kernels that the audit passed, each rebuilt as a small
custom op: a fake without the dim check its eager kernel makes (``maybe_wrap_dim``'s "Dimension out of range",
an IndexError, is an argument's check, not made-up data), one that demands equal numel where eager demands equal
shapes, one whose batch check shows only beside an empty input, an always-contiguous pooling fake, and a
cumulative fake that does not promote integers. An error about the data (an index past a size, a division by
zero of zeros) is still only noted."""

from __future__ import annotations

import sys

import pytest

from tests.unit.test_audit_untraced import audit_lib

pytestmark = pytest.mark.slow  # an audit run each

LIB = '''
import torch


@torch.library.custom_op("{ns}::running", mutates_args=())
def running(x: torch.Tensor, dim: int = 0) -> torch.Tensor:
    return torch.cumsum(x, {eager_dim})


@running.register_fake
def _(x, dim=0):
    return torch.empty_like(x)  # no dim check
'''


def test_a_fake_that_takes_a_dim_past_the_rank_is_sc041(tmp_path, monkeypatch):
    code, doc = audit_lib(tmp_path, monkeypatch, "dimlib", LIB.format(ns="dimlib", eager_dim="dim"))
    (rec,) = doc["ops"]
    found = [f for f in rec["findings"] if f["code"] == "SC041"]
    assert code == 1 and found, rec
    assert any("Dimension out of range" in f["message"] for f in found)
    sys.modules.pop("dimlib", None)


def test_an_index_error_about_the_data_is_still_only_noted(tmp_path, monkeypatch):
    """The eager kernel indexes with the data (``x[int(x.sum())]``): its IndexError is the made-up data's."""
    source = LIB.format(ns="datalib", eager_dim="0").replace(
        "return torch.cumsum(x, 0)", "return torch.cumsum(x, 0) + x.reshape(-1)[int(x.abs().sum()) + x.numel()]")
    code, doc = audit_lib(tmp_path, monkeypatch, "datalib", source)
    (rec,) = doc["ops"]
    assert not [f for f in rec["findings"] if f["code"] == "SC041"], rec
    assert any("is out of bounds" in n for n in rec["notes"]), rec["notes"]
    sys.modules.pop("datalib", None)


NUMEL = '''
import torch


@torch.library.custom_op("numellib::assign", mutates_args=())
def assign(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a + b  # broadcasting: equal numel is not enough


@assign.register_fake
def _(a, b):
    torch._check(a.numel() == b.numel(), lambda: "numel differs")
    return torch.empty_like(a)
'''


def test_a_fake_that_demands_equal_numel_where_eager_demands_equal_shapes_is_sc041(tmp_path, monkeypatch):
    """prims::copy_to: the fake's relation ``a_0 * a_1 == b_0 * b_1`` holds at the points drawn (equal shapes, or
    an empty side); a point where it holds with every dim different (2 * 6 == 3 * 4) shows the eager kernel's
    stricter demand."""
    code, doc = audit_lib(tmp_path, monkeypatch, "numellib", NUMEL)
    (rec,) = doc["ops"]
    (f,) = [f for f in rec["findings"] if f["code"] == "SC041"]
    point = f["counterexample"]
    assert code == 1 and point["a_0"] * point["a_1"] == point["b_0"] * point["b_1"], f
    assert (point["a_0"], point["a_1"]) != (point["b_0"], point["b_1"]) and min(point.values()) >= 2
    sys.modules.pop("numellib", None)


def test_an_empty_points_mismatch_is_tried_again_with_its_empty_dims_lifted():
    """nll_loss without its batch check: the fake returns and the eager kernel raises only where the target is
    empty among the points drawn, which is noted (an eager kernel may refuse empty inputs). The same call with
    the empty dim at 2 shows a size check the fake lacks: SC041 there. A refusal of emptiness alone stays a note."""
    from types import SimpleNamespace

    from shapecheck.audit.differential import LIFT, run
    from shapecheck.audit.inputs import OpInputs

    inputs = OpInputs("lib::loss", "schema", (("x", False, ("tensor", ("x_0", "x_1"), (3, 3), "float32")),
                                              ("t", False, ("tensor", ("t_0",), (3,), "float32"))))
    points = [{"x_0": 3, "x_1": 3, "t_0": 3}, {"x_0": 3, "x_1": 3, "t_0": 0}]

    def fake(x, t):
        return x.new_empty(())

    def batch_check(inputs, point):
        ok = point["t_0"] == point["x_0"]
        return SimpleNamespace(ok=ok, crashed=False, value=None if not ok else ("T", (), "float32", (), "cpu"),
                               error="" if ok else f"RuntimeError: size mismatch (target: [{point['t_0']}])")

    res = run("lib::loss", fake, inputs, points, batch_check)
    (d,) = [d for d in res.disagreements if d.cls == "fake-accepts"]
    assert d.point == {"x_0": 3, "x_1": 3, "t_0": LIFT} and "found on an empty input" in d.detail

    def refuses_empty(inputs, point):
        ok = 0 not in point.values()
        return SimpleNamespace(ok=ok, crashed=False, value=("T", (), "float32", (), "cpu") if ok else None,
                               error="" if ok else "RuntimeError: cannot be empty")

    res = run("lib::loss", fake, inputs, points, refuses_empty)
    assert not [d for d in res.disagreements if d.cls == "fake-accepts"]
    assert any("on an empty input" in n for n in res.notes)

    def another_error_when_lifted(inputs, point):  # a mask's made-up data: not the empty point's mismatch
        if point["t_0"] == point["x_0"]:
            return batch_check(inputs, point)
        error = "RuntimeError: size mismatch (target: [0])" if point["t_0"] == 0 else \
            "RuntimeError: shape mismatch: value tensor cannot be broadcast to indexing result"
        return SimpleNamespace(ok=False, crashed=False, value=None, error=error)

    res = run("lib::loss", fake, inputs, points, another_error_when_lifted)
    assert not [d for d in res.disagreements if d.cls == "fake-accepts"]


POOL = '''
import torch


@torch.library.custom_op("poollib::pool", mutates_args=())
def pool(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.avg_pool2d(x, 1)  # a batched image keeps channels-last; a 3-D one is contiguous


@pool.register_fake
def _(x):
    torch._check(x.dim() in (3, 4), lambda: "pool takes a 3-D or 4-D input")
    return x.new_empty(x.shape)  # always contiguous
'''


def test_the_rank_up_variant_is_compared_in_another_memory_order_too(tmp_path, monkeypatch):
    """A pooling fake that is always contiguous agrees with the eager kernel on 3-D inputs in every layout (eager
    gives 3-D pooling a contiguous output too); the batched input a rank up in channels-last shows it."""
    code, doc = audit_lib(tmp_path, monkeypatch, "poollib", POOL)
    (rec,) = doc["ops"]
    found = [f for f in rec["findings"] if f["code"] == "SC040"]
    assert code == 1 and found, rec
    assert "rank 4" in found[0]["message"] or "rank 4" in found[0].get("guard", ""), found
    assert any("memory order (0, 2, 3, 1)" in v["args"] for v in rec["variants"])
    sys.modules.pop("poollib", None)


CUMSUM = '''
import torch


@torch.library.custom_op("cumlib::running", mutates_args=())
def running(x: torch.Tensor) -> torch.Tensor:
    return torch.cumsum(x, 0)  # integers are summed in int64


@running.register_fake
def _(x):
    return torch.empty_like(x)  # the input's dtype whatever it is
'''


def test_a_fake_that_does_not_promote_integers_is_found_with_integer_inputs(tmp_path, monkeypatch):
    """The search takes float32 inputs, where the fake is right: the variant with the tensors as int32 shows the
    eager kernel's int64 output (a cumsum mutant without the promotion passed as clean)."""
    code, doc = audit_lib(tmp_path, monkeypatch, "cumlib", CUMSUM)
    (rec,) = doc["ops"]
    (f,) = [f for f in rec["findings"] if f["code"] == "SC039"]
    assert code == 1 and "as int32" in f["message"] and "int64" in f["message"], rec
    sys.modules.pop("cumlib", None)
