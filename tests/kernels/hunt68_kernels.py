"""Hunt 68's lu_unpack kernels: pytorch/pytorch#183736 took Python's ``min`` of two sizes (a comparison, so a
branch on N < M) where ``torch.sym_min`` asks nothing."""

import torch


def _unpacked(lu, k):
    *batch, m, n = lu.shape
    return lu.new_empty([*batch, m, m]), lu.new_empty([*batch, m, k]), lu.new_empty([*batch, k, n])


def python_min(lu, pivots, unpack_data=True, unpack_pivots=True):
    return _unpacked(lu, min(lu.size(-2), lu.size(-1)))


def sym_min(lu, pivots, unpack_data=True, unpack_pivots=True):
    return _unpacked(lu, torch.sym_min(lu.size(-2), lu.size(-1)))
