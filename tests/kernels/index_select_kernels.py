"""Meta kernels of ``aten::index_select`` for the ``[[rejects]]`` tests (SC021): one that accepts a 2-D index
(as torch 2.13's meta_index_select does) and its fixed twin, which raises as the runtime does."""

import torch


def accepts_matrix_index(self, dim, index):
    size = list(self.shape)
    if self.dim() > 0:
        size[dim] = index.numel()
    return self.new_empty(size)


def fixed(self, dim, index):
    torch._check(index.dim() <= 1, lambda: "index_select(): Index is supposed to be a vector")
    torch._check(index.dtype in (torch.int64, torch.int32), lambda: "index_select(): Expected int32 or int64 index")
    size = list(self.shape)
    if self.dim() > 0:
        size[dim] = index.numel()
    return self.new_empty(size)
