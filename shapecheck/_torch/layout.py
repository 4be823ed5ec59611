"""The compatibility layer, part 5: tensors with a given memory layout (strides and a storage offset), fake
under a trace's symbolic sizes or real at concrete ones, built the same way for both."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch


def strided_empty(shape: list[Any], dtype: torch.dtype, strides: list[Any] | None = None, offset: Any = 0,
                  device: Any = None) -> torch.Tensor:
    """An uninitialised tensor of ``shape`` with ``strides`` (None: contiguous) and a storage ``offset``: sizes,
    strides and offset may be SymInts (a trace) or ints. Without an offset, ``empty_strided``; with one, a view
    (``as_strided``) of a storage just large enough: offset + 1 + sum((size - 1) * stride), each (size - 1) at
    least 0, so that neither needs a guard on the sizes."""
    if strides is None and _is_zero(offset):
        return torch.empty(shape, dtype=dtype, device=device)
    if strides is None:
        strides = contiguous_strides(shape)
    if _is_zero(offset):
        return torch.empty_strided(shape, strides, dtype=dtype, device=device)
    return torch.empty((storage_extent(shape, strides, offset),), dtype=dtype, device=device).as_strided(
        shape, strides, offset)


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
