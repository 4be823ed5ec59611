"""A native_layer_norm decomposition with two bugs on every input (hunt 49): float64 statistics (output 1) and a
rank too few for rstd (output 2). The dtype was reported twice, once "at D == 1" as if the other side of
empty_like's layout answer took another branch. Contract: tests/kernels/native_layer_norm.toml."""

import torch
from torch._decomp import register_decomposition
from torch._prims_common.wrappers import out_wrapper

aten = torch.ops.aten

@register_decomposition(aten.native_layer_norm)
@out_wrapper("out0", "out1", "out2")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    # planted: wrong dtype of mean/rstd (float64) and a wrong rstd shape for every input
    n = len(normalized_shape)
    axis = input.ndim - n
    stat = list(input.shape[:axis]) + [1] * n
    out = torch.empty_like(input)
    return out, input.new_empty(stat, dtype=torch.float64), input.new_empty(stat[:-1])
