"""A custom op whose registered fake implementation branches on the row count (export with a dynamic N
fails), and a candidate fake without the branch: `--confirm-export` must export the candidate."""

import torch


@torch.library.custom_op("screplay::rows", mutates_args=())
def rows(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@rows.register_fake
def rows_fake(x):
    if x.size(0) <= 8:  # a guard on the dynamic N: torch.export with Dim N over [1, 4096] fails
        return x.new_empty(x.shape)
    return x.new_empty(x.shape)


def candidate(x):
    return x.new_empty(x.shape)
