"""Kernels for tests/kernels/unique_columns.toml: output 0's column count comes from the data."""


def one_rank_too_many(self, return_inverse=False, return_counts=False, dim=None):
    n = self.nonzero().shape[0]  # a size made from the data
    out = self.new_empty((self.shape[0], n, 1))  # rank 3 where the op returns rank 2
    return out, self.new_empty((0,)).long(), self.new_empty((0,)).long()


def right_rank(self, return_inverse=False, return_counts=False, dim=None):
    n = self.nonzero().shape[0]
    out = self.new_empty((self.shape[0], n))
    return out, self.new_empty((0,)).long(), self.new_empty((0,)).long()
