"""The shape of torch 2.1-2.9's ``meta_conv`` for aten::convolution: the output is made, then converted with
``out.to(memory_format=...)``. The C++ kernel of ``aten.to`` checks contiguity on the output's sizes and, under
unbacked sizes, raises on ``Co > 1`` and ``max(1, H) * max(1, W) > 1``: conditions that only sizes 0 and 1
decide, which torch.export never traces (strict export of this kernel succeeds with every dim dynamic)."""

import torch


def conv_to_format(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    n, _, h, w = input.shape
    co, _, kh, kw = weight.shape
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = input.new_empty((n, co, ho, wo))
    return out.to(memory_format=torch.contiguous_format)
