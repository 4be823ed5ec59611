"""Input construction: the arguments of a contract case at a point of its dims, by name.

Every command that runs an op on concrete inputs (``fuzz op`` and ``ref check`` through the runtime reference,
``Example.arguments``, the ``inputs`` strategy) builds them here, so the same case, dims and seed give the
same tensors everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..contract.model import BoundArg, BoundCase
from ..logic import expr as E
from ..logic.compiled import compiled

MASK_KEEP = 0.75
"""The probability that a mask keeps an element: a bool mask is True there, an additive mask finite. Mostly
kept, so that fully masked rows occur at small sizes but do not dominate. (``ref check`` drew bool masks with
0.8 before both commands shared this construction; 0.75 is what ``fuzz op`` drew.)"""


def make_arguments(case: BoundCase, dims: Mapping[str, int], seed: int = 0,
                   device: str | None = "cpu") -> dict[str, Any]:
    """Every argument of the contract by name, in order: tensors, None for absent ones, scalars as the case
    fixes them. Tensors: ``"cpu"``, values drawn from ``seed``; another device (``"meta"``), empty; None,
    ``torch.empty`` on the default device (fake tensors under a FakeTensorMode).

    On the cpu: floating tensors are randn; bool tensors (masks) are True with probability ``MASK_KEEP``; a
    floating tensor whose name contains "mask" is an additive mask, randn where kept and -inf elsewhere;
    integer tensors are in [-8, 8], or in the argument's [low, high) where the contract gives them
    (an index: ``high`` the size it indexes; an empty range draws ``low``), or non-negative and summing to the
    contract's ``values.sum`` (``repeat_interleave``'s repeats); unsigned ones are not negative; a dtype without
    arithmetic (``float4_e2m1fn_x2``, ``bits8``) has random bytes. ``"cuda"``: the same values, moved.

    Every device gets the contract's layout: the tensor's strides and storage offset are the case's
    (``layout_at``), so that ``ref check --device cuda`` runs the kernel on the layout verify traced.

    Why additive masks mix both: a mask of the query dtype reaches the op either as a converted bool mask
    (0 / -inf: F.sdpa converts bool masks before calling the op, mps-sdpa-facts 3.1) or as a bias (finite
    values). ``ref check`` used to draw 0 / -inf and ``fuzz op`` randn; each hid a documented runtime quirk:
    randn never masks a key (so no fully masked row, nor the MPSGraph path's zeroing of all -inf rows, is
    ever checked), and 0 / -inf hides the prefill kernel's mask * ln 2 (only finite non-zero values show it).
    """
    import torch

    from .._torch.core import DTYPES

    gen = torch.Generator().manual_seed(seed % 2**63)  # any int seed (--seed 2**64): torch takes [0, 2**63)
    out: dict[str, Any] = {}
    for a in case.args:
        if not a.present or a.kind == "none":
            out[a.name] = None
        elif a.kind == "tensor":
            out[a.name] = _tensor(a, dims, gen, device)
        elif a.kind == "tensors":
            out[a.name] = [_tensor(e, dims, gen, device) for e in a.elements()]
        elif a.kind == "dtype":
            out[a.name] = DTYPES[a.value]
        elif a.expr is not None:
            from .run import concrete_size

            out[a.name] = concrete_size(a, dims)
        else:
            out[a.name] = a.value
    return out


def _tensor(a: BoundArg, dims: Mapping[str, int], gen: Any, device: str | None) -> Any:
    """One tensor argument (or element of a tensors argument) at ``dims``, with its layout: see
    ``make_arguments``."""

    from .._torch.core import DTYPES
    from .._torch.layout import contiguous_strides, storage_extent, strided_empty

    shape = compiled(a.shape)(dims) if a.shape is not None else None
    dtype = DTYPES[a.dtype]
    strides, offset = layout_at(a, dims)
    if device not in ("cpu", "cuda"):  # "meta", or None: the default device (fake tensors in a FakeTensorMode)
        return strided_empty(list(shape), dtype, strides, offset, device=device)
    if strides is None and offset == 0:
        return _values(a, shape, dims, gen, dtype).to(device)
    # the layout's storage, drawn whole (an expanded or overlapping tensor shares its values), then viewed
    strides = strides if strides is not None else contiguous_strides(shape)
    storage = _values(a, (storage_extent(shape, strides, offset),), dims, gen, dtype)
    return storage.to(device).as_strided(shape, strides, offset)


def layout_at(a: BoundArg, dims: Mapping[str, int]) -> tuple[tuple[int, ...] | None, int]:
    """An input's (strides, storage offset) at concrete dims; (None, 0) for a contiguous tensor."""
    if a.layout is None:
        return None, 0
    return compiled(E.TupleE(a.layout.strides))(dims), compiled(a.layout.offset)(dims)


def _values(a: BoundArg, shape: Any, dims: Mapping[str, int], gen: Any, dtype: Any) -> Any:
    """Values for a tensor of ``shape`` drawn from ``gen`` on the cpu (see ``make_arguments``); a dtype without
    arithmetic (float4_e2m1fn_x2, bits8, ...) gets random bytes."""
    import torch

    if dtype.is_floating_point and "mask" in a.name:
        keep = torch.rand(shape, generator=gen) < MASK_KEEP
        return torch.randn(shape, generator=gen).masked_fill(~keep, float("-inf")).to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) < MASK_KEEP
    if a.total is not None:
        return _summing(shape, compiled(a.total)(dims), gen).to(dtype)
    try:
        if dtype.is_floating_point or dtype.is_complex:
            return torch.randn(shape, generator=gen).to(dtype)
        low = -8 if a.low is None else compiled(a.low)(dims)
        high = 9 if a.high is None else compiled(a.high)(dims)
        if not dtype.is_signed:
            low = max(low, 0)
        return torch.randint(low, max(high, low + 1), shape, generator=gen).to(dtype)
    except (RuntimeError, TypeError):  # a dtype torch cannot convert to (packed, bits): its bytes at random
        size = dtype.itemsize
        raw = torch.randint(0, 256, (*shape, size), generator=gen, dtype=torch.uint8)
        return raw.view(dtype).reshape(shape)


def _summing(shape: Any, total: int, gen: Any) -> Any:
    """Non-negative integers of ``shape`` that sum to ``total`` (a uniform draw of ``total`` items into the
    elements); an empty tensor needs ``total == 0`` (the contract's load checks it)."""
    import torch

    n = 1
    for x in shape:
        n *= x
    if n == 0:
        return torch.zeros(shape, dtype=torch.int64)
    picks = torch.randint(0, n, (total,), generator=gen)
    return torch.bincount(picks, minlength=n).reshape(shape)
