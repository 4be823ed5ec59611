"""Candidate meta kernels for aten ops outside attention (contracts/aten/*.toml), written here: some right,
some with a planted mistake. Each is used with ``--meta tests/kernels/aten_kernels.py:NAME``."""

import torch


def cross_broadcast(self, other, *, dim=-1):
    """linalg_cross as the meta kernel computes it: the broadcast of the two shapes (torch's own helper)."""
    return self.new_empty(torch.broadcast_shapes(self.shape, other.shape))


def cross_keeps_self_shape(self, other, *, dim=-1):
    """A planted mistake: the output keeps self's shape, as if other never broadcast self."""
    torch.broadcast_shapes(self.shape, other.shape)  # the broadcast is computed, then ignored
    return self.new_empty(self.shape)
