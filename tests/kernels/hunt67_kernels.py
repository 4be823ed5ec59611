"""Hunt 67's kernels: torch 2.13's topk meta kernel with a planted branch that returns the whole slice where it
is shorter than 8 (the shape is wrong there: eager returns k along the dim at every size)."""

import torch


def topk_small_slices(self, k, dim=-1, largest=True, sorted=True):
    dim = dim % self.dim()
    size = self.size(dim)
    torch._check(k >= 0)
    torch._check(k <= size)
    shape = list(self.shape)
    if size >= 8:
        shape[dim] = k
    else:
        shape[dim] = size  # the planted bug
    return self.new_empty(shape), self.new_empty(shape, dtype=torch.int64)
