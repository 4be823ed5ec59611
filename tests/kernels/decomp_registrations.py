# A file in the style of torch/_decomp/decompositions.py, as a PR would change it: `--meta-source` takes the
# function registered for the op with register_decomposition and defines it alone, in the installed torch's
# torch._decomp.decompositions namespace (out_wrapper, aten and Tensor come from there). The rest of the file
# never runs.
import torch
from torch import Tensor
from torch._decomp import register_decomposition
from torch._prims_common.wrappers import out_wrapper

aten = torch._ops.ops.aten

raise RuntimeError("importing this file must not happen")


def _blocks(size: int, kernel: int, dilation: int, padding: int, stride: int) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


@register_decomposition(aten.im2col)
@out_wrapper()
def im2col(input: Tensor, kernel_size: list[int], dilation: list[int], padding: list[int], stride: list[int]) -> Tensor:
    *lead, c, h, w = input.shape
    kh, kw = kernel_size
    blocks = _blocks(h, kh, dilation[0], padding[0], stride[0]) * _blocks(w, kw, dilation[1], padding[1], stride[1])
    # a PR's mistake: one block too many
    return input.new_empty((*lead, c * kh * kw, blocks + 1))
