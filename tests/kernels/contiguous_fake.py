"""A fake whose only size questions are torch's C++ contiguity checks behind ``.contiguous()`` (torchao's
``qscaled_dot_product`` fake): guard_or_false answers at the kernel's line that sizes from 2 settle. Strict
torch.export accepts every dim of it dynamic."""

import torch
from torch.library import custom_op


@custom_op("contig::transposed_copy", mutates_args=())
def transposed_copy(q: torch.Tensor) -> torch.Tensor:
    return q.transpose(1, 2).contiguous().transpose(1, 2).clone()


@transposed_copy.register_fake
def _(q):
    return q.transpose(1, 2).contiguous().transpose(1, 2)
