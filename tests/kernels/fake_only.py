"""An op with a fake and no eager kernel on any device: the audit traces it (clean of guards) but cannot compare it
with an eager kernel, and its summary says so."""

import torch

torch.library.define("fakeonly::double_rows", "(Tensor x) -> Tensor")


@torch.library.register_fake("fakeonly::double_rows")
def _(x):
    return x.new_empty((2 * x.shape[0], *x.shape[1:]))
