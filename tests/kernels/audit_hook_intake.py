"""Samples-hook calls the audit cannot use (hunt 48): a tensor on the meta device, which holds no data for the
eager kernel (it made the op's record an internal error, exit 4, and the good sample after it was never run), and
calls neither kernel takes (dropped without a word). ``samples`` is the hook."""

from __future__ import annotations

import torch


@torch.library.custom_op("audithook::double", mutates_args=())
def double(x: torch.Tensor) -> torch.Tensor:
    return torch.cat([x, x])


@double.register_fake
def _(x):
    return x.new_empty((2 * x.shape[0], *x.shape[1:]))


@torch.library.custom_op("audithook::same", mutates_args=())
def same(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@same.register_fake
def _(x):
    return torch.empty_like(x)


def samples(op: str):
    if op == "audithook::double.default":
        return [((torch.empty(3, 4, device="meta"),), {}), ((torch.randn(5, 4),), {})]
    if op == "audithook::same.default":
        return [((torch.randn(2, 3), 7), {})]  # an argument too many: neither kernel takes it
    return []
