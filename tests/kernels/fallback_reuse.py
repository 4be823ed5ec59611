"""A custom op whose fake reaches torch-like helpers (in another module, so not the kernel's own code) that ask
``guard_or_false(n == 1)`` on its sizes, as torch's broadcasting and layout helpers do: under unbacked sizes each
is a fallback that exploration splits on. ``variant``: 0 right; 1 wrong where the size is 1 (the side torch did
not assume); 2 wrong where it is not (the side torch assumed, which the earlier trace already took); 3 asks
``K == 1`` and then ``K != 1``, both assumed false (a trace that stands for no point where K != 1)."""

import torch

from tests.kernels import fallback_reuse_helpers as H

torch.library.define("scfbreuse::rows", "(Tensor x, Tensor y, Tensor z, int variant) -> Tensor")


@torch.library.impl("scfbreuse::rows", "CPU")
def rows_cpu(x, y, z, variant):
    return x.new_empty((x.shape[0], y.shape[0], z.shape[0]))


@torch.library.register_fake("scfbreuse::rows")
def rows_fake(x, y, z, variant):
    n, m, k = x.shape[0], y.shape[0], z.shape[0]
    if variant == 1:
        n = H.two_at_one(n)
    elif variant == 2:
        n = H.one_more_elsewhere(n)
    else:
        n = H.ones_or(n)
    k = H.both_ways(k) if variant == 3 else k
    return x.new_empty((n, H.ones_or(m), k))
