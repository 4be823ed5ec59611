"""Two fakes of one op (the back half of the rows): ``n - n // 2`` is right for every n, but torch's value ranges
cannot show that it is a size (at least 0), so torch.export with n dynamic rejects it ("Constraints violated");
``(n + 1) // 2`` is the same number, which they can (hunt 55)."""

from __future__ import annotations

import torch


@torch.library.custom_op("auditasserts::back_half", mutates_args=())
def back_half(x: torch.Tensor) -> torch.Tensor:
    return x.new_zeros((x.shape[0] - x.shape[0] // 2, *x.shape[1:]))


@back_half.register_fake
def _(x):
    n = x.shape[0]
    return x.new_empty((n - n // 2, *x.shape[1:]))


@torch.library.custom_op("auditasserts::back_half_ranged", mutates_args=())
def back_half_ranged(x: torch.Tensor) -> torch.Tensor:
    return x.new_zeros((x.shape[0] - x.shape[0] // 2, *x.shape[1:]))


@back_half_ranged.register_fake
def _(x):
    return x.new_empty(((x.shape[0] + 1) // 2, *x.shape[1:]))
