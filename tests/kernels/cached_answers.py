"""Kernels of docs/examples/pad_rows.toml (``(N, D)`` -> ``((N + 15) // 16 * 16, D)``) that ask torch about
``D == 1`` twice: first through a layout test (``unsqueeze``'s contiguity), then where it decides a size
(``squeeze()`` drops the dim where D == 1). torch caches the first answer, so the second asked nothing the
trace saw (hunt 53: verify passed the wrong one). ``col2im_adds_lists`` takes its int[] arguments as lists, as
col2im's decomposition needs them (``[...] + kernel_size``): an int[] reaches a Python kernel as a list."""

import torch


def squeezes_after_a_layout_test(x):
    torch.arange(0, x.size(1), dtype=torch.int64, device=x.device).unsqueeze(0) + x.new_zeros((1, 1),
                                                                                                dtype=torch.int64)
    return x.new_empty(((x.size(0) + 15) // 16 * 16, x.size(1))).squeeze()


def keeps_the_dims_after_a_layout_test(x):
    torch.arange(0, x.size(1), dtype=torch.int64, device=x.device).unsqueeze(0) + x.new_zeros((1, 1),
                                                                                                dtype=torch.int64)
    return x.new_empty(((x.size(0) + 15) // 16 * 16, x.size(1)))


def col2im_adds_lists(input, output_size, kernel_size, dilation, padding, stride):
    from torch._decomp.decompositions import col2im

    [0] + kernel_size  # as a copy of the decomposition does: TypeError for a tuple
    return col2im(input, output_size, kernel_size, dilation, padding, stride)
