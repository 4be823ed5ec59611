"""2-D average pooling meta kernels written here (not torch's code), for SC016: the ceil-mode size with its
last-window rule written as a branch (as the runtime does), and the two rewrites SC016 suggests: the branch
behind a condition on the static arguments that holds only where it can be taken, and the rule as
torch.sym_min, without a guard.

Ceil mode rounds the window count up, then drops the last window when it would start past the input and its
left padding. For kernel 3 and stride 2 the drop never happens, yet torch cannot see that from the Dim range:
the branch is a guard torch.export installs, and export rejects a dynamic H.
"""

import torch
from torch.fx.experimental.symbolic_shapes import guard_or_false, guard_or_true


def _like_input(self, n, c, ho, wo):
    """The output in the input's memory format, as the runtime allocates it, decided without a guard on the
    sizes: a channels_last input has channel stride 1 and a last stride of C; a contiguous one has H * W there
    (1 only where H * W is) and a last stride of 1 (hunt 30: ``stride(1) == 1`` alone took a contiguous
    input with H = W = 1 for channels_last, where the runtime's output is contiguous)."""
    if guard_or_false(self.stride(1) == 1) and guard_or_true(self.stride(3) != 1):
        return self.new_empty((n, ho, wo, c)).permute(0, 3, 1, 2)
    return self.new_empty((n, c, ho, wo))


def _params(kernel_size, stride, padding):
    k = kernel_size[0]
    s = stride[0] if stride else k
    p = padding[0]
    return k, s, p


def _windows_branchy(size, k, s, p, ceil_mode):
    out = (size + 2 * p - k + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode:
        if (out - 1) * s >= size + p:  # the last window would start in the right padding
            out = out - 1
    return out


def avg_pool2d_branchy(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
                       divisor_override=None):
    k, s, p = _params(kernel_size, stride, padding)
    n, c, h, w = self.shape
    return _like_input(self, n, c, _windows_branchy(h, k, s, p, ceil_mode), _windows_branchy(w, k, s, p, ceil_mode))


def _windows_sym_min(size, k, s, p, ceil_mode):
    out = (size + 2 * p - k + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode:
        out = torch.sym_min(out, (size + p + s - 1) // s)
    return out


def _windows_static(size, k, s, p, ceil_mode):
    out = (size + 2 * p - k + (s - 1 if ceil_mode else 0)) // s + 1
    # the last window can start in the right padding only when p + s > k: (out - 1) * s < size + 2p - k + s
    if ceil_mode and p + s > k:
        if (out - 1) * s >= size + p:
            out = out - 1
    return out


def avg_pool2d_sym_min(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
                       divisor_override=None):
    k, s, p = _params(kernel_size, stride, padding)
    n, c, h, w = self.shape
    return _like_input(self, n, c, _windows_sym_min(h, k, s, p, ceil_mode), _windows_sym_min(w, k, s, p, ceil_mode))


def avg_pool2d_static(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
                      divisor_override=None):
    k, s, p = _params(kernel_size, stride, padding)
    n, c, h, w = self.shape
    return _like_input(self, n, c, _windows_static(h, k, s, p, ceil_mode), _windows_static(w, k, s, p, ceil_mode))
