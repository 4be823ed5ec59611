# A file in the style of torch/_meta_registrations.py as an older torch had it: avg_pool2d's output size goes
# through a module-level helper that rounds a division towards minus infinity by looking at the remainder, so
# under symbolic sizes it branches on the parity of H and W (stride 2). Only the registered function and the
# helpers it calls may run: importing the file must not happen.
import torch
from torch._meta_registrations import register_meta

aten = torch.ops.aten

raise RuntimeError("importing this file must not happen")


def _div_round_down(x, y):
    q = x // y
    r = x % y
    if r != 0 and ((r < 0) != (y < 0)):
        q -= 1
    return q


def _out_size(size, kernel, pad, stride):
    return _div_round_down(size + 2 * pad - kernel, stride) + 1


@register_meta(aten.avg_pool2d.default)
def meta_avg_pool2d(input, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
                    divisor_override=None):
    k = kernel_size[0]
    s = stride[0] if len(stride) else k
    p = padding[0]
    h = _out_size(input.size(-2), k, p, s)
    w = _out_size(input.size(-1), k, p, s)
    return input.new_empty((*input.shape[:-2], h, w))
