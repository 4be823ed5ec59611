"""Meta kernels for docs/examples/pad_rows.toml: one correct kernel and one defect per rule of docs/rules.md."""

import torch


def padded(x):
    return x.new_empty(((x.size(0) + 15) // 16 * 16, x.size(1)))


def branches_on_rows(x):  # SC001
    if x.size(0) <= 8:
        return x.new_empty((16, x.size(1)))
    return x.new_empty(((x.size(0) + 15) // 16 * 16, x.size(1)))


def forgets_padding(x):  # SC002
    return x.new_empty(x.shape)


def int_of_rows(x):  # SC003
    n = int(x.size(0))
    return x.new_empty(((n + 15) // 16 * 16, x.size(1)))


def checks_columns(x):  # SC004
    torch._check(x.size(1) <= 1024)
    return x.new_empty(((x.size(0) + 15) // 16 * 16, x.size(1)))


def xor_guard(x):  # SC005
    if (x.size(0) ^ 12345) == 0:
        return x.new_empty((12352, x.size(1)))
    return x.new_empty(((x.size(0) + 15) // 16 * 16, x.size(1)))


def wants_3d(x):  # SC007
    if x.dim() != 3:
        raise ValueError("expected a 3-D input")
    return x


def dead_branch(x):  # SC016
    n = x.size(0)
    if 2 * (n // 2) - 2 >= n:  # false for every n, but torch's value ranges cannot show it
        return x.new_empty((16, x.size(1)))
    return x.new_empty(((n + 15) // 16 * 16, x.size(1)))
