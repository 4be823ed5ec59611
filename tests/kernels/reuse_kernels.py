"""Fakes that narrow a size without a guard, for fuzz's reuse of a backed-size run (``trace/reuse.py``):
``torch._constrain_as_size`` narrows the symbol's value range and installs no guard, so a run at N = 5 says nothing
of N = 10 by its guards alone (there the fake raises)."""

import torch
from torch.library import custom_op


@custom_op("screuse::rows", mutates_args=())
def rows(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@rows.register_fake
def _(x):
    torch._constrain_as_size(x.shape[0], min=0, max=8)
    return x.new_empty(x.shape)
