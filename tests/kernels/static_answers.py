"""Meta kernels of aten::gather that branch on ``statically_known_true`` / ``statically_known_false``. Under
symbolic sizes torch cannot decide ``B1 == 1`` and answers False (not known), at every size; FakeTensorMode on
plain sizes (meta-device init, opcheck) decides it, and at B1 = 1 takes the other branch. torch.export never
guards on it."""

from torch.fx.experimental.symbolic_shapes import statically_known_false, statically_known_true


def drops_a_unit_column(self, dim, index, sparse_grad=False):
    if statically_known_true(index.size(1) == 1):
        return self.new_empty((index.shape[0],))  # rank 1 where the op returns (B0, 1)
    return self.new_empty(index.shape)


def drops_it_where_known_single(self, dim, index, sparse_grad=False):
    if statically_known_false(index.size(1) != 1):
        return self.new_empty((index.shape[0],))  # rank 1 where the op returns (B0, 1)
    return self.new_empty(index.shape)


def fast_path_for_one_column(self, dim, index, sparse_grad=False):
    if statically_known_true(index.size(1) == 1):
        return self.new_empty((index.shape[0], 1))  # the same shape: a fast path, not a bug
    return self.new_empty(index.shape)
