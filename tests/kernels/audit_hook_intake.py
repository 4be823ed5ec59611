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
    if op == "audithook::heads.default":
        return [((torch.randn(2, 6), 2), {})]
    return []


@torch.library.custom_op("audithook::heads", mutates_args=())
def heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    if num_heads < 1:
        raise RuntimeError(f"num_heads must be positive, got {num_heads}")
    return x.clone()


@heads.register_fake
def _(x, num_heads):  # lacks the eager kernel's check of num_heads: "must be positive" is the argument's, not data's
    return torch.empty_like(x)


def hook_raises(op: str):
    raise ValueError("a typo in the project's hook")


def hook_returns_a_number(op: str):
    return 7


def hook_raises_after_one(op: str):
    yield ((torch.randn(5, 4),), {})
    raise RuntimeError("the generator died")


def hook_malformed_after_one(op: str):
    """A valid call, then one whose args are a Tensor, then one whose args are an int (hunt 60: exit 4, the valid
    sample thrown away)."""
    return [((torch.randn(5, 4),), {}), (torch.randn(4, 3), {}), (5, {})]
