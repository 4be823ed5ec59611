"""Buggy and fixed fake kernels for four layout bugs of the public record (shared/docs/meta-bug-classes.md,
classes St and V), each checked against a contract beside it whose input layout is a case choice:

- ``layout_pool.toml`` (``sc_layouts::pool2x2``): 2x2 average pooling whose runtime keeps the input's memory
  format (channels_last in, channels_last out, as eager pooling and convolution do). ``pool_contiguous``
  allocates a contiguous output whatever the input; ``pool_fixed`` reads the channel stride without a guard.
- ``layout_transposed.toml`` (``sc_layouts::rows``): an op whose runtime makes its input contiguous and
  returns a contiguous output. ``rows_empty_like`` calls ``empty_like`` on the (possibly transposed) input and
  keeps its layout; ``rows_fixed`` asks for the contiguous format.
- ``layout_scales.toml`` (``sc_layouts::scaled_mm``): a scaled matmul whose runtime takes row- or
  column-major blockwise scales (scaled-mm style). ``scaled_mm_contiguous_scales`` checks
  ``scale_a.is_contiguous()`` and so refuses the column-major scales; ``scaled_mm_fixed`` checks shapes only.
- ``layout_expanded.toml`` (``sc_layouts::add_bias``): a bias add whose runtime allocates a dense output even
  for a broadcast (expanded, stride-0) bias. ``add_bias_bias_strides`` copies the bias's strides into the
  output (stride 0 where the bias is expanded); ``add_bias_fixed`` uses ``empty_like``, which torch makes dense.
"""

import torch
from torch.fx.experimental.symbolic_shapes import guard_or_false


def pool_contiguous(x):
    n, c, h, w = x.shape
    return x.new_empty((n, c, h // 2, w // 2))


def pool_fixed(x):
    n, c, h, w = x.shape
    # channels_last strides are (H*W*C, 1, W*C, C): a unit channel stride, decided without a guard on the sizes
    if guard_or_false(x.stride(1) == 1):
        return x.new_empty((n, h // 2, w // 2, c)).permute(0, 3, 1, 2)
    return x.new_empty((n, c, h // 2, w // 2))


def rows_empty_like(x):
    return torch.empty_like(x)


def rows_fixed(x):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def scaled_mm_contiguous_scales(a, b, scale_a):
    torch._check(scale_a.is_contiguous(), lambda: "scale_a must be contiguous")
    torch._check(a.shape[1] == b.shape[0])
    return a.new_empty((a.shape[0], b.shape[1]), dtype=torch.bfloat16)


def scaled_mm_fixed(a, b, scale_a):
    torch._check(scale_a.shape[0] == a.shape[0])
    torch._check(a.shape[1] == b.shape[0])
    return a.new_empty((a.shape[0], b.shape[1]), dtype=torch.bfloat16)


def add_bias_bias_strides(x, bias):
    return torch.empty_strided(bias.shape, bias.stride(), dtype=x.dtype)


def add_bias_fixed(x, bias):
    return torch.empty_like(bias)
