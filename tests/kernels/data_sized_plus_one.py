"""A fake whose data-dependent output size is a formula of a fresh size (``n + 1``) on one side of a branch on a
dim: the fix texts compared its outputs with z3, which knows no fresh size (an internal error)."""

import torch


@torch.library.custom_op("scdd::sel", mutates_args=())
def sel(x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    return x[m]


@sel.register_fake
def _(x, m):
    n = torch.library.get_ctx().new_dynamic_size()
    if x.shape[1] > 8:
        return x.new_empty((n + 1,))
    return x.new_empty((n,))
