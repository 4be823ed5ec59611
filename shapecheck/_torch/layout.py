"""The compatibility layer, part 5: tensors with a given memory layout (strides and a storage offset), fake
under a trace's symbolic sizes or real at concrete ones, built the same way for both."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch


def strided_empty(shape: list[Any], dtype: torch.dtype, strides: list[Any] | None = None, offset: Any = 0,
                  device: Any = None, mode: Any = None) -> torch.Tensor:
    """An uninitialised tensor of ``shape`` with ``strides`` (None: contiguous) and a storage ``offset``: sizes,
    strides and offset may be SymInts (a trace) or ints. Without an offset, ``empty_strided``; with one, a view
    (``as_strided``) of a storage just large enough: offset + 1 + sum((size - 1) * stride), each (size - 1) at
    least 0, so that neither needs a guard on the sizes. ``mode``: the FakeTensorMode in force, whose contiguous
    CPU tensors are made as its constructor rule makes them (``fake_empty``)."""
    if strides is None and _is_zero(offset):
        if mode is not None and device is None and _FAKE is not None:
            return fake_empty(mode, shape, dtype)
        return torch.empty(shape, dtype=dtype, device=device)
    if strides is None:
        strides = contiguous_strides(shape)
    if _is_zero(offset):
        return torch.empty_strided(shape, strides, dtype=dtype, device=device)
    return torch.empty((storage_extent(shape, strides, offset),), dtype=dtype, device=device).as_strided(
        shape, strides, offset)


def fake_empty(mode: Any, shape: list[Any], dtype: torch.dtype) -> torch.Tensor:
    """``torch.empty(shape, dtype=dtype)`` under FakeTensorMode ``mode``, made as the mode's constructor rule
    makes it (the meta kernel's tensor, wrapped as a fake CPU tensor) without the dispatch around the rule:
    argument normalisation and flattening were half of an input's 0.6 ms at rank 5 with unbacked sizes (torch
    2.13). The result is the same tensor: sizes, strides, storage and flags (tests/unit/test_layouts.py)."""
    assert _FAKE is not None
    fake_tensor, in_kernel = _FAKE
    with in_kernel(mode):
        meta = torch.empty(shape, dtype=dtype, device="meta")
    return fake_tensor(mode, meta, torch.device("cpu"))


try:
    from torch._subclasses.fake_tensor import FakeTensor, in_kernel_invocation_manager

    _FAKE: tuple[Any, Any] | None = (FakeTensor, in_kernel_invocation_manager)
except ImportError:  # pragma: no cover - another torch: through the mode's dispatch
    _FAKE = None


def storage_extent(shape: Sequence[Any], strides: Sequence[Any], offset: Any = 0) -> Any:
    """Elements of a storage that holds a tensor of ``shape``, ``strides`` and storage ``offset``: offset + 1 +
    sum((size - 1) * stride), each (size - 1) at least 0 (ints, or SymInts without a guard)."""
    extent = offset + 1
    for size, stride in zip(shape, strides):
        extent = extent + torch.sym_max(size - 1, 0) * stride
    return extent


def contiguous_strides(shape: list[Any]) -> list[Any]:
    """The strides ``torch.empty`` gives ``shape``: each the product of the sizes inside it, each at least 1."""
    out, acc = [], 1
    for size in reversed(shape):
        out.append(acc)
        acc = acc * torch.sym_max(size, 1)
    return out[::-1]


def _is_zero(x: Any) -> bool:
    return isinstance(x, int) and x == 0
