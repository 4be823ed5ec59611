"""A custom op whose eager kernel leaves its process broken and returns (hunt 48: torch-harmonics' CPU kernels
write past their memory at sizes they do not check, and the process dies at a later, innocent call). Here the
kernel at a first dim of 1 marks the process, and any call after that aborts it. Its fake is right: in a fresh
process every call returns what the fake says."""

from __future__ import annotations

import os

import torch

_BROKEN = [False]


@torch.library.custom_op("auditpoison::rows", mutates_args=())
def rows(x: torch.Tensor) -> torch.Tensor:
    if _BROKEN[0]:
        os.abort()  # an earlier call's doing, not this one's
    if x.shape[0] == 1:
        _BROKEN[0] = True  # "memory written out of bounds": the call itself returns
    return x.clone()


@rows.register_fake
def _(x):
    return torch.empty_like(x)
