"""A fake that asks whether a size is concrete (a hunt's mutant): ``statically_known_true(L == 5)`` is never true for
a symbolic or backed size, so verify's trace and a fuzz run with backed sizes take the general branch; FakeTensorMode
on plain sizes (opcheck, meta-device init, a static torch.compile) takes the wrong one at L = 5."""

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_true

torch.library.define("staticbr::pool1d", "(Tensor x) -> Tensor")


@torch.library.impl("staticbr::pool1d", "CPU")
def _impl(x):
    return torch.nn.functional.max_pool1d(x, 2, 1)


@torch.library.register_fake("staticbr::pool1d")
def _fake(x):
    if statically_known_true(x.size(2) == 5):  # wrong only at L == 5, on plain sizes
        return x.new_empty((x.size(0), x.size(1), 7))
    return x.new_empty((x.size(0), x.size(1), x.size(2) - 1))
