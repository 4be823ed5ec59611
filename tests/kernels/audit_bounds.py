"""A fake that caps an output size at a constant the eager kernel does not (hunt 48's planted ``sym_min(x_0,
1024)``, a tile limit copied from a CUDA launcher), and its twin whose eager kernel caps it too. Below the cap
the two agree at every size, and the audit's drawn points all lay there."""

from __future__ import annotations

import torch


@torch.library.custom_op("auditbounds::capped", mutates_args=())
def capped(x: torch.Tensor) -> torch.Tensor:
    return x.new_zeros(x.shape[0], 2)


@capped.register_fake
def _(x):
    return x.new_empty(torch.sym_min(x.shape[0], 1024), 2)


@torch.library.custom_op("auditbounds::tiles", mutates_args=())
def tiles(x: torch.Tensor) -> torch.Tensor:
    return x.new_zeros(min(x.shape[0], 1024), 2)


@tiles.register_fake
def _(x):
    return x.new_empty(torch.sym_min(x.shape[0], 1024), 2)


@torch.library.custom_op("auditbounds::blocks", mutates_args=())
def blocks(x: torch.Tensor) -> torch.Tensor:  # one row kept per full block of 1024, and the rest
    return x.new_zeros(x.shape[0], 2)


@blocks.register_fake
def _(x):  # hunt 55's planted fake: x_0 rows below 1024, one fewer per full block from there
    n = x.shape[0]
    return x.new_empty(n - n // 1024, 2)
