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


# an assert after the call that fails only where M == 0, the call's other side (torch's storage-bounds check of
# ``as_strided_`` after ``guard_or_false(N == 0)``, hunt 56's ``_linalg_eigh``): no run reaches it there
@torch.library.custom_op("fbside::cat_assert_ok", mutates_args=())
def cat_assert_ok(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.cat([a, b], dim=1)


@cat_assert_ok.register_fake
def _(a, b):
    torch._check(a.size(0) == b.size(0))
    if guard_or_false(a.size(1) == 0):
        return b.new_empty(b.shape)
    torch._check(a.size(1) >= 1)
    return a.new_empty((a.size(0), a.size(1) + b.size(1)))


# the same, with the other side wrong at M == 0: the assert is still not the finding, the other side is
@torch.library.custom_op("fbside::cat_assert_bad", mutates_args=())
def cat_assert_bad(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.cat([a, b], dim=1)


@cat_assert_bad.register_fake
def _(a, b):
    torch._check(a.size(0) == b.size(0))
    if guard_or_false(a.size(1) == 0):
        return b.new_empty((b.size(0), b.size(1) + 1))
    torch._check(a.size(1) >= 1)
    return a.new_empty((a.size(0), a.size(1) + b.size(1)))


# an assert that fails at M == 0 with no guard_or_false before it: SC004 as before
@torch.library.custom_op("fbside::cat_assert_plain", mutates_args=())
def cat_assert_plain(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.cat([a, b], dim=1)


@cat_assert_plain.register_fake
def _(a, b):
    torch._check(a.size(0) == b.size(0))
    torch._check(a.size(1) >= 1)
    return a.new_empty((a.size(0), a.size(1) + b.size(1)))
