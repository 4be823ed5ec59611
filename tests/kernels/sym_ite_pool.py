"""avg_pool1d's ceil-mode length without a Python branch (``torch.sym_ite``): right at every size, and strict
torch.export accepts the whole Dim range. torch.export's record of the output guards the length against 1,
which holds everywhere and runs after export's constraint check: no finding (it was a false SC022)."""

import torch


def avg_pool1d_symite(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True):
    k = kernel_size[0]
    s = stride[0] if stride else k
    p = padding[0]
    n, c, length = self.shape
    o = (length + 2 * p - k + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode:
        o = torch.sym_ite((o - 1) * s >= length + p, o - 1, o)
    return self.new_empty((n, c, o))
