"""Fakes of ``aten::_unique2`` (values, inverse, counts), whose first output's length the data decides: one that
ignores its return flags (the first revision of pytorch/pytorch PR #119970 shaped inverse and counts as if both
flags were always set) and the fixed one. Contract: tests/kernels/unique_flags.toml."""

import torch


def unique_ignores_flags(self, sorted=True, return_inverse=False, return_counts=False):
    n = torch.library.get_ctx().new_dynamic_size(min=1, max=None)
    values = self.new_empty((n,))
    inverse = self.new_empty(self.shape, dtype=torch.int64)  # (0,) unless return_inverse
    counts = self.new_empty((n,), dtype=torch.int64)  # (0,) unless return_counts
    return values, inverse, counts


def unique_fixed(self, sorted=True, return_inverse=False, return_counts=False):
    n = torch.library.get_ctx().new_dynamic_size(min=1, max=None)
    values = self.new_empty((n,))
    inverse = self.new_empty(self.shape if return_inverse else (0,), dtype=torch.int64)
    counts = self.new_empty((n,) if return_counts else (0,), dtype=torch.int64)
    return values, inverse, counts
