"""Fake kernels in the style of PyTorch's fix for data-dependent errors on empty inputs: ``if x.numel() == 0:``
becomes ``if guard_or_false(x.numel() == 0):`` (as in the fake kernels of native multi-head attention and the
transformer encoder layer). Written here; the op is ``sctest::attend_rows`` (contract: empty_batch.toml), a
self-attention over (B, L, E) that returns (B, L, E).

With a dynamic batch, torch decides ``B * L * E == 0`` from export's Dim range (B >= 2): false, so
torch.export traces the fallback side for every batch, 0 included. The obligation is that the fallback side's
output is right at B = 0 too.
"""

import torch
from torch.fx.experimental.symbolic_shapes import guard_or_false


def fallback_right(x):
    if guard_or_false(x.numel() == 0):
        return x.new_empty(x.shape)
    b, rows, e = x.shape
    return x.new_empty((b, rows, e))


def fallback_wrong(x):
    """The main path assumes at least one row: at B = 0 it allocates one."""
    if guard_or_false(x.numel() == 0):
        return x.new_empty(x.shape)
    b, rows, e = x.shape
    return x.new_empty((torch.sym_max(b, 1), rows, e))


def plain_branch(x):
    """The code before the fix: a plain branch on the batch size."""
    if x.numel() == 0:
        return x.new_empty(x.shape)
    b, rows, e = x.shape
    return x.new_empty((b, rows, e))


def hidden_dead_fallback(self, size):
    """For aten::new_empty (tests/golden/examples/new_empty.toml): guard_or_false on a condition false for every
    N, as the trace assumed, but torch cannot decide it from N's Dim range: export installs it (SC016)."""
    n = size[0]
    if guard_or_false(2 * (n // 2) - 2 >= n):
        return self.new_empty((n - 1,))
    return self.new_empty(size)
