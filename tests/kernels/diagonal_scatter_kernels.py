"""diagonal_scatter kernels (hunt 42): ``dense_output`` allocates a fresh contiguous output, losing the input's
strides, which the runtime keeps (``clone_preserve_strides``). Contract: ``diagonal_scatter_strides.toml``."""

import torch


def dense_output(input, src, offset=0, dim1=0, dim2=1):
    diag = input.diagonal(offset, dim1, dim2)
    torch._check(diag.ndim == src.ndim, lambda: "expected src to have a size equal to the diagonal")
    return input.clone(memory_format=torch.contiguous_format)
