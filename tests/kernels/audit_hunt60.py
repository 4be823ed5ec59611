"""Fakes the audit misread in hunt 60 (torchrec 1.9.2), each with a samples hook call (``samples``):

- ``gather_idx_first``: a float32 output whatever the table's dtype, the index first (the dtype variants changed
  only the first tensor, an index);
- ``cat_dim0``: a branch on a size argument named like an axis (torchrec's ``dim0``), held constant by its name;
- ``rows``: a fake that takes no symbolic int, whose hook sample was also run as its own variant (one finding twice).
"""

from __future__ import annotations

import torch


@torch.library.custom_op("audit60::gather_idx_first", mutates_args=())
def gather_idx_first(idx: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    return table.index_select(0, idx)


@gather_idx_first.register_fake
def _(idx, table):
    return torch.empty((idx.shape[0], table.shape[1]), dtype=torch.float32)  # ignores table.dtype


def _cat_rows(t, n, widths):
    torch._check(t.shape[0] == n * sum(widths))
    if n > 4:  # a branch on a size: the same output either way
        return t.new_empty([n, sum(widths)])
    return t.new_empty([n, sum(widths)])


@torch.library.custom_op("audit60::cat_dim0", mutates_args=())
def cat_dim0(t: torch.Tensor, dim0: int, dim1s: list[int]) -> torch.Tensor:
    return torch.cat([s.reshape(dim0, w) for s, w in zip(t.split([dim0 * w for w in dim1s]), dim1s)], dim=1)


@cat_dim0.register_fake
def _(t, dim0, dim1s):
    return _cat_rows(t, dim0, dim1s)


@torch.library.custom_op("audit60::rows", mutates_args=())
def rows(x: torch.Tensor, n: int) -> torch.Tensor:
    if x.shape[0] % n:
        raise RuntimeError("x.shape[0] must be divisible by n")
    return x.reshape(n, x.shape[0] // n, *x.shape[1:]).sum(0)


@rows.register_fake
def _(x, n):
    # an op whose schema takes a plain int (a SymInt raises): traced with n held; no divisibility check
    return torch.ops._c10d_functional.reduce_scatter_tensor(x, "sum", n, "0")


def samples(op: str):
    if op == "audit60::gather_idx_first.default":
        return [((torch.tensor([0, 2]), torch.randn(3, 4)), {})]
    if op == "audit60::cat_dim0.default":
        return [((torch.randn(8), 2, [1, 3]), {})]
    if op == "audit60::rows.default":
        return [((torch.randn(4, 3), 2), {})]
    return []
