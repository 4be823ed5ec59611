"""A fake whose size check runs only on concrete ints (``if isinstance(c, int):``) raises where the eager kernel
does when both run on these sizes, but its trace with symbolic sizes returns there: torch.export skips the check
and the exported program takes sizes the op refuses. The audit reports it as SC041 at such a point, where the
trace's region (its conditions and asserts) holds (hunt 34: tico's prelu, a library's channel_scale)."""

from __future__ import annotations

import pytest

from tests.unit.test_audit_untraced import audit_lib

LIB = '''
import torch
from torch.library import custom_op


@custom_op("concretecheck::scale_skipped", mutates_args=())
def scale_skipped(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    if w.shape[0] != x.shape[1]:
        raise RuntimeError(f"w must have {x.shape[1]} entries")
    return x.clone()


@scale_skipped.register_fake
def _(x, w):
    if isinstance(x.shape[1], int) and isinstance(w.shape[0], int) and w.shape[0] != x.shape[1]:
        raise RuntimeError("size mismatch")  # skipped when the sizes are symbolic
    return torch.empty_like(x)


@custom_op("concretecheck::scale_checked", mutates_args=())
def scale_checked(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    if w.shape[0] != x.shape[1]:
        raise RuntimeError(f"w must have {x.shape[1]} entries")
    return x.clone()


@scale_checked.register_fake
def _(x, w):
    torch._check(w.shape[0] == x.shape[1], lambda: "size mismatch")  # an assert the trace keeps
    return torch.empty_like(x)
'''


@pytest.mark.slow
def test_a_check_made_on_concrete_ints_only_is_a_fake_that_accepts_under_export(tmp_path, monkeypatch):
    code, doc = audit_lib(tmp_path, monkeypatch, "concretecheck_lib", LIB)
    by_op = {rec["op"]: rec for rec in doc["ops"]}
    skipped = by_op["concretecheck::scale_skipped.default"]["findings"]
    assert code == 1 and [f["code"] for f in skipped] == ["SC041"]
    assert "traced with symbolic sizes returns" in skipped[0]["expr"]
    point = skipped[0]["counterexample"]
    assert point["w_0"] != point["x_1"] and min(point.values()) >= 2  # a real refusal of the eager kernel
    assert by_op["concretecheck::scale_checked.default"]["findings"] == []


POOL = '''
from typing import List, Optional

import torch
from torch.library import custom_op


@custom_op("heldints::pool", mutates_args=())
def pool(x: torch.Tensor, kernel_size: List[int], ceil: Optional[bool] = None) -> torch.Tensor:
    return torch.ops.aten.max_pool2d_with_indices.default(x, kernel_size, kernel_size, [0, 0], [1, 1],
                                                          bool(ceil))[0]


@pool.register_fake
def _(x, kernel_size, ceil=None):
    # custom_op's schema makes kernel_size SymInt[]; the pooling op it calls takes int[2]
    out = torch.ops.aten.max_pool2d_with_indices.default(x, kernel_size, kernel_size, [0, 0], [1, 1], False)[0]
    return out  # wrong with ceil=True: the eager kernel rounds up
'''


@pytest.mark.slow
def test_int_lists_the_fake_takes_only_as_ints_are_held_and_an_absent_bool_is_tried_true(tmp_path, monkeypatch):
    """tico's maxpool2d: a SymInt[] kernel_size passed to an int[] op raised on every symbolic trace, which read
    as a relation of the sizes and left the op inconclusive; and its ``bool? ceil_mode=None`` was never True."""
    code, doc = audit_lib(tmp_path, monkeypatch, "heldints_lib", POOL)
    [rec] = doc["ops"]
    assert rec["finished"] >= 1 and any("held at the example's values" in n for n in rec["notes"])
    assert not any("Expected a value of type" in r["expr"] for r in rec.get("requires", []))
    assert code == 1 and any("ceil=True" in f["expr"] for f in rec["findings"])  # SC042 at a size ceil keeps


OWN_SIZES = '''
import torch
from torch.library import custom_op


@custom_op("ownsizes::pool_rows", mutates_args=())
def pool_rows(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.max_pool2d_with_indices.default(x, [x.shape[1], 1], [1, 1])[0]


@pool_rows.register_fake
def _(x):
    # a size of the tensor passed to an int[2]: under export's symbolic sizes this raises, whatever the caller does
    return torch.ops.aten.max_pool2d_with_indices.default(x, [x.shape[1], 1], [1, 1])[0]
'''


@pytest.mark.slow
def test_an_int_list_made_of_the_tensors_own_sizes_is_the_kernels_error(tmp_path, monkeypatch):
    """Nothing to hold (no int argument is a size): the kernel raising under symbolic sizes is SC036, as lstm's
    decomposition passing hidden_size to mkldnn_rnn_layer's int is."""
    code, doc = audit_lib(tmp_path, monkeypatch, "ownsizes_lib", OWN_SIZES)
    [rec] = doc["ops"]
    assert code == 1 and "SC036" in [f["code"] for f in rec["findings"]]
