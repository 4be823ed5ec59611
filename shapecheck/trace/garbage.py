"""The garbage collector during a run of many traces. Each trace builds a ShapeEnv, fake tensors and thousands
of sympy expressions, most of them freed by reference counting at its end; at Python's default thresholds
(a young collection every 700 allocations) the collector still ran about 2000 times over the regressed
SDPA-MPS contract and took about 7% of the run (bench/README.md, ``bench_shortcut.py``). With fewer, larger
collections the same cyclic garbage is freed, later: memory stays bounded by the threshold."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: (young, middle, old): a young collection every 50000 net allocations of containers, as tuned on traces
THRESHOLDS = (50000, 50, 50)


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """The collector at ``THRESHOLDS`` inside, as it was after (the process's own setting, never lowered)."""
    before = gc.get_threshold()
    gc.set_threshold(*(max(a, b) for a, b in zip(THRESHOLDS, before)))
    try:
        yield
    finally:
        gc.set_threshold(*before)
