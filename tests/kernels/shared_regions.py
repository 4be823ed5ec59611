"""A custom op whose two cases stop at the same first guard (``L <= 8``) and then branch on different dims: the
first case on X, the second on Y (hunt 58 B4). Traced on the first case's regions, the second splits each of
them on Y again and needs more traces than it does alone."""

import torch

torch.library.define("scshared::pick", "(Tensor q, Tensor x, Tensor y, bool flag) -> Tensor")


@torch.library.impl("scshared::pick", "CPU")
def pick_cpu(q, x, y, flag):
    return q.clone()


@torch.library.register_fake("scshared::pick")
def pick_fake(q, x, y, flag):
    if q.shape[0] <= 8:  # the first guard of both cases: a restriction of the dynamic L
        q = q * 1
    if flag:
        if y.shape[0] <= 4:
            q = q * 1
    elif x.shape[0] <= 4:
        q = q * 1
    return torch.empty_like(q)
