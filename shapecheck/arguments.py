"""Input construction: the arguments of a contract case at a point of its dims, by name.

Every command that runs an op on concrete inputs (``fuzz op`` and ``ref check`` through the runtime reference,
``Example.arguments``, the ``inputs`` strategy) builds them here, so the same case, dims and seed give the
same tensors everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .compiled import compiled
from .contract import BoundCase


def make_arguments(case: BoundCase, dims: Mapping[str, int], seed: int = 0,
                   device: str | None = "cpu") -> dict[str, Any]:
    """Every argument of the contract by name, in order: tensors, None for absent ones, scalars as the case
    fixes them. Tensors: ``"cpu"``, values drawn from ``seed`` (float tensors randn, bool masks mostly True,
    integers in [-8, 8]); another device (``"meta"``), empty; None, ``torch.empty`` on the default device
    (fake tensors under a FakeTensorMode)."""
    import torch

    from ._compat import DTYPES

    gen = torch.Generator().manual_seed(seed)
    out: dict[str, Any] = {}
    for a in case.args:
        if not a.present or a.kind == "none":
            out[a.name] = None
        elif a.kind == "tensor":
            shape = compiled(a.shape)(dims) if a.shape is not None else None
            dtype = DTYPES[a.dtype]
            if device is None:
                out[a.name] = torch.empty(shape, dtype=dtype)
            elif device != "cpu":
                out[a.name] = torch.empty(shape, dtype=dtype, device=device)
            elif dtype.is_floating_point:
                out[a.name] = torch.randn(shape, generator=gen).to(dtype)
            elif dtype == torch.bool:
                # mostly True, so that fully masked rows occur but do not dominate
                out[a.name] = torch.rand(shape, generator=gen) < 0.75
            else:
                out[a.name] = torch.randint(-8, 9, shape, generator=gen).to(dtype)
        elif a.expr is not None:
            from .trace import concrete_size

            out[a.name] = concrete_size(a, dims)
        else:
            out[a.name] = a.value
    return out
