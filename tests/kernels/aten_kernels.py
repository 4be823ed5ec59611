"""Candidate meta kernels for aten ops outside attention (contracts/aten/*.toml), written here: some right,
some with a planted mistake. Each is used with ``--meta tests/kernels/aten_kernels.py:NAME``."""

import torch


def cross_broadcast(self, other, *, dim=-1):
    """linalg_cross as the meta kernel computes it: the broadcast of the two shapes (torch's own helper)."""
    return self.new_empty(torch.broadcast_shapes(self.shape, other.shape))


def cross_keeps_self_shape(self, other, *, dim=-1):
    """A planted mistake: the output keeps self's shape, as if other never broadcast self."""
    torch.broadcast_shapes(self.shape, other.shape)  # the broadcast is computed, then ignored
    return self.new_empty(self.shape)


def ceil_planted_in_a_later_case(self, size):
    """new_empty with a guard on N in every case (the first guard), and a planted wrong ceil formula behind
    W <= 16 in the float16 case only (tests/kernels/hidden_case.toml)."""
    n, w = size
    if n <= 8:
        rows = n
    else:
        rows = n
    if self.dtype == torch.float16 and w <= 16:
        return self.new_empty([rows, (w + 1) // 2])
    return self.new_empty([rows, w])


def branch_excluding_a_point(self, size):
    """A guard that excludes a point, not a range (N = 2 of [1, 4096]): it restricts no dim's range."""
    n, w = size
    if n % 4096 != 2:
        return self.new_empty([n, w])
    return self.new_empty([n, w])


def two_formulas_behind_one_return(self, size):
    """Two output formulas leave through one return statement: (W + 1) // 2 where W > 2, W itself below."""
    n, w = size
    half = (w + 1) // 2 if w > 2 else w
    return self.new_empty([n, half])


def conv_forgets_the_padding(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """A planted mistake: the output size ignores the padding ((H - k) // s + 1)."""
    n, h, w = input.shape[0], input.shape[2], input.shape[3]
    k, s = weight.shape[2], stride[0]
    return input.new_empty([n, weight.shape[0], (h - k) // s + 1, (w - k) // s + 1])
