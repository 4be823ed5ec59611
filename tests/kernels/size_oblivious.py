"""A meta kernel of aten::gather that branches on ``guard_size_oblivious``: under torch.export's backed sizes it
installs a guard on ``B1 == 1`` (export refuses a dynamic B1), and on the contract's unbacked sizes torch cannot
decide it either (they are not size-like). Its own guard, however torch.fx's deprecation wrapper passes it on."""

import warnings

from torch.fx.experimental.symbolic_shapes import guard_size_oblivious


def unit_column_fast_path(self, dim, index, sparse_grad=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch 2.13: "guard_size_oblivious will be removed"
        if guard_size_oblivious(index.size(1) == 1):
            return self.new_empty((index.shape[0], 1))
    return self.new_empty(index.shape)
