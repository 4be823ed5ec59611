"""A custom op whose Meta kernel is a Python function registered through a ``torch.library.Library``
(``Library.impl(name, fn, "Meta")``, as torch.ao's ``quantized_decomposed`` ops are): torch keeps no handle on
the function, only the file its Library was made in. The kernel branches on the row count, so a dynamic N
fails, and the finding must name this file's line."""

import torch
from torch.library import Library

lib = Library("sclibmeta", "DEF")
lib.define("rows(Tensor x) -> Tensor")


def rows_cpu(x):
    return x.clone()


def rows_meta(x):
    if x.size(0) <= 8:  # a guard on the dynamic N
        return torch.empty_like(x)
    return torch.empty_like(x)


lib.impl("rows", rows_cpu, "CPU")
lib.impl("rows", rows_meta, "Meta")


# an op whose eager kernel is a Python function at the Autograd key (torch.ao's fake_quant_per_channel runs its
# autograd.Function there): no CPU kernel, yet it runs on CPU tensors
lib.define("halved(Tensor x) -> Tensor")


def halved_autograd(x):
    return x * 0.5


def halved_meta(x):
    return torch.empty_like(x)


lib.impl("halved", halved_autograd, "Autograd")
lib.impl("halved", halved_meta, "Meta")


# the same kernel registered by qualified name: torch.library.impl("ns::op", "Meta") makes its Library inside
# torch/library.py, so torch's record names that file, not this one
torch.library.define("sclibmeta::rows_by_name", "(Tensor x) -> Tensor")
torch.library.impl("sclibmeta::rows_by_name", "CPU")(rows_cpu)
torch.library.impl("sclibmeta::rows_by_name", "Meta")(rows_meta)
