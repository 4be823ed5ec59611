"""torch's lazy imports, done once before a fork (part of the door into torch)."""

from __future__ import annotations

import torch

from .core import TraceEnv, quiet_torch_logging


def warm_up() -> None:
    """What torch imports on its first symbolic trace (the ShapeEnv's validator and torch._dynamo, the export
    machinery unbacked sizes reach, FakeTensor's dispatch), imported now, on torch's own ops only: a process
    forked after this (a supervised run, a ``--jobs`` worker) inherits the modules instead of importing them
    again. Nothing of the user's runs here."""
    from torch.fx.experimental.symbolic_shapes import guard_or_false

    with quiet_torch_logging(), TraceEnv() as env:
        n = env.size(0, 64)
        x = env.tensor([n, 4], "float32")
        guard_or_false(n == 1)
        torch.cat([x.view(-1), x.reshape(4, n).sum(0)]).unsqueeze(0).expand(2, -1)
