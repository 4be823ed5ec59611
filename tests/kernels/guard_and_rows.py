"""A fake with two bugs (hunt 49's pattern): a branch on the row count, a guard at every example, and a column
count floored to even, wrong only where it is odd. fuzz raised the guard at the first example, and the search stopped
soon after, before it drew an odd column count. Contract: tests/kernels/guard_and_rows.toml."""

from __future__ import annotations

import torch


@torch.library.custom_op("scguardrows::rows", mutates_args=())
def rows(x: torch.Tensor) -> torch.Tensor:
    return x.new_zeros(x.shape[0], x.shape[1])


@rows.register_fake
def _(x):
    n, m = x.shape
    if n > 8:  # a branch on a dynamic dim: SC001 at every example
        return x.new_empty(n, m // 2 * 2)
    return x.new_empty(n, m // 2 * 2)
