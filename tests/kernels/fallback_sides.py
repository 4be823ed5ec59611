"""Fakes with a guard_or_false of their own on a size that may be 0 (a hunt's mutants): under unbacked sizes torch
answers False and the trace returns the contract's shape; FakeTensorMode on concrete sizes at M = 0 takes the other
branch. ``cat_bad``'s other branch is wrong there; ``cat_ok``'s gives the same shape another way."""

import torch
from torch.fx.experimental.symbolic_shapes import guard_or_false


@torch.library.custom_op("fbside::cat_bad", mutates_args=())
def cat_bad(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.cat([a, b], dim=1)


@cat_bad.register_fake
def _(a, b):
    torch._check(a.size(0) == b.size(0))
    if guard_or_false(a.size(1) == 0):  # wrong only where M == 0
        return a.new_empty((a.size(0), b.size(1) + 1))
    return a.new_empty((a.size(0), a.size(1) + b.size(1)))


@torch.library.custom_op("fbside::cat_ok", mutates_args=())
def cat_ok(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.cat([a, b], dim=1)


@cat_ok.register_fake
def _(a, b):
    torch._check(a.size(0) == b.size(0))
    if guard_or_false(a.size(1) == 0):  # the same shape: b's
        return b.new_empty(b.shape)
    return a.new_empty((a.size(0), a.size(1) + b.size(1)))
