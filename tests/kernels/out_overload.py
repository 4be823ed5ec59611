"""An op with a default and an ``out`` overload, each with a fake of its own (bitsandbytes' ``int8_linear_matmul``
and ``int8_linear_matmul.out``): torch.library keys each fake by the overload's name, and the ``out`` one must be
found as its own, not as the default's."""

import torch

torch.library.define("outov::scale", "(Tensor x) -> Tensor")
torch.library.define("outov::scale.out", "(Tensor x, Tensor! out) -> ()")


@torch.library.register_fake("outov::scale")
def _default_fake(x):
    return torch.empty_like(x)


@torch.library.register_kernel("outov::scale", "cpu")
def _default_cpu(x):
    return x * 2


@torch.library.register_fake("outov::scale.out")
def _out_fake(x, out):
    torch._check(out.shape == x.shape, lambda: "out must have x's shape")


@torch.library.register_kernel("outov::scale.out", "cpu")
def _out_cpu(x, out):
    out.copy_(x * 2)
