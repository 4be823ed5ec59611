"""An int argument a kernel must refuse below 0 (sphericart's ``l_max``, a plain ``int`` of a C++ library's
schema): the eager kernel raises at -1, and the fake returns an empty output there ((l + 1) ** 2 columns: 0)."""

import torch

torch.library.define("auditneg::harmonics", "(Tensor x, int l_max) -> Tensor")


@torch.library.impl("auditneg::harmonics", "cpu")
def harmonics(x, l_max):
    if l_max < 0:
        raise RuntimeError(f"l_max must be non-negative, got {l_max}")
    return x.new_zeros(x.shape[0], (l_max + 1) ** 2)


@torch.library.register_fake("auditneg::harmonics")
def _(x, l_max):
    return x.new_empty(x.shape[0], (l_max + 1) ** 2)
