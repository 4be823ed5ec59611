"""Custom ops whose fakes are right on contiguous float32 inputs and wrong on another representation of the same
sizes (``audit.variants.representations``): a fake that makes a contiguous output where the eager kernel keeps the
input's layout, and one that makes float32 outputs whatever the input's dtype. Each has a correct twin."""

import torch
from torch.library import custom_op


@custom_op("reprs::layout_bad", mutates_args=())
def layout_bad(x: torch.Tensor) -> torch.Tensor:
    return x * 2  # an elementwise kernel: the output is laid out as the input is


@layout_bad.register_fake
def _(x):
    return x.new_empty(x.shape)  # contiguous whatever the input's layout


@custom_op("reprs::layout_ok", mutates_args=())
def layout_ok(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@layout_ok.register_fake
def _(x):
    return torch.empty_like(x)  # keeps the input's layout, as the kernel does


@custom_op("reprs::dtype_bad", mutates_args=())
def dtype_bad(x: torch.Tensor) -> torch.Tensor:
    return x + 1


@dtype_bad.register_fake
def _(x):
    return torch.empty_like(x, dtype=torch.float32)  # float32 whatever the input's dtype


@custom_op("reprs::dtype_ok", mutates_args=())
def dtype_ok(x: torch.Tensor) -> torch.Tensor:
    return x + 1


@dtype_ok.register_fake
def _(x):
    return torch.empty_like(x)


@custom_op("reprs::float_only", mutates_args=())
def float_only(x: torch.Tensor) -> torch.Tensor:
    # like pdist's CPU kernel in bfloat16, which returns early on small inputs and refuses the dtype past them
    if x.dtype == torch.bfloat16 and x.numel() > 9:
        raise NotImplementedError("\"float_only\" not implemented for 'BFloat16'")
    return x * 2


@float_only.register_fake
def _(x):
    return torch.empty_like(x)


@custom_op("reprs::fast_path", mutates_args=())
def fast_path(x: torch.Tensor) -> torch.Tensor:
    # like embedding_bag's offset2bag: empty on its contiguous fast path, one entry per row otherwise
    return x.new_zeros((0,)) if x.is_contiguous() else x.new_zeros((x.shape[0],))


@fast_path.register_fake
def _(x):
    return x.new_empty((0,)) if x.is_contiguous() else x.new_empty((x.shape[0],))
