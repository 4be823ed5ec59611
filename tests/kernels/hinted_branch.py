"""embedding_dense_backward meta kernels written here that branch on a size only where it has a hint
(``has_guarding_hint``, as torch's own ``_refs`` and fake rules do): verify's symbolic trace (unbacked sizes, no
hint) never takes the branch, torch.export (backed sizes) installs its guard and rejects the Dim range (hunt 47)."""

import torch
from torch.fx.experimental.symbolic_shapes import has_guarding_hint


def branch_where_hinted(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    d = grad_output.size(-1)
    if isinstance(num_weights, torch.SymInt) and has_guarding_hint(num_weights) and num_weights <= 8:
        return grad_output.new_empty((num_weights, d))
    return grad_output.new_empty((num_weights, d))


def no_branch(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    return grad_output.new_empty((num_weights, grad_output.size(-1)))


def pinned_pair(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    d = grad_output.size(-1)
    if d == 1 and num_weights == 1:  # both sides return (num_weights, d): no break of shape polymorphism
        return grad_output.new_empty((num_weights, d))
    return grad_output.new_empty((num_weights, d))
