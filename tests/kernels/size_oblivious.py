"""Meta kernels of aten::gather and aten::cat that branch on ``guard_size_oblivious`` (the torch 2.4 to 2.8 way to
ask about sizes 0 and 1; torch.fx's deprecation wrapper passes the call on). torch answers it as if every size
were at least 2 where that decides it: torch.export's backed sizes install no guard, and neither does verify
(it checks the other side at plain sizes). Where sizes of 2 or more do not decide it, it is the kernel's guard."""

import warnings

from torch.fx.experimental.symbolic_shapes import guard_size_oblivious


def _oblivious(cond):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch 2.13: "guard_size_oblivious will be removed"
        return guard_size_oblivious(cond)


def unit_column_fast_path(self, dim, index, sparse_grad=False):
    """Right at every size: the fast path's (B0, 1) is (B0, B1) at B1 == 1. torch.export passes a dynamic B1."""
    if _oblivious(index.size(1) == 1):
        return self.new_empty((index.shape[0], 1))
    return self.new_empty(index.shape)


def unit_column_wrong(self, dim, index, sparse_grad=False):
    """Wrong on the side export never traces (B1 == 1): the other side, run at plain sizes, shows it."""
    if _oblivious(index.size(1) == 1):
        return self.new_empty((index.shape[0], 2))
    return self.new_empty(index.shape)


def same_width_fast_path(self, dim, index, sparse_grad=False):
    """``B1 == A1`` is not decided by sizes of 2 or more: a guard (SC001), as torch.export's is."""
    if _oblivious(index.size(1) == self.size(1)):
        return self.new_empty((index.shape[0], self.shape[1]))
    return self.new_empty(index.shape)


def cat_skipping_empty(tensors, dim=0):
    """The historical fix of torch's cat decomposition (pytorch#130615): empty inputs are dropped with
    ``guard_size_oblivious``; torch.export passes dynamic sizes from 0."""
    kept = [t for t in tensors if not _oblivious(t.shape[dim] == 0)] or list(tensors[:1])
    shape = list(kept[0].shape)
    shape[dim] = sum(t.shape[dim] for t in kept)
    return kept[0].new_empty(shape)


def cat_skipping_empty_plainly(tensors, dim=0):
    """The bug it fixed: a plain ``if`` on 0, a guard."""
    kept = [t for t in tensors if not (t.shape[dim] == 0)] or list(tensors[:1])
    shape = list(kept[0].shape)
    shape[dim] = sum(t.shape[dim] for t in kept)
    return kept[0].new_empty(shape)
