"""The compatibility layer: answers torch gives a kernel's own size questions without a guard, recorded as the
guard_or_false / guard_or_true answers they are (``core._FallbackRecorder``), so that verify checks their other
side: ``statically_known_true``/``_false`` that torch cannot decide (False). (A kernel's ``guard_size_oblivious``
on a contract's dims is a guard: the dims are not size-like, so torch cannot decide it obliviously either.)"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def kernel_answers_recorded(recorder: Any) -> Iterator[None]:
    """``statically_known_true(c)`` (``statically_known_false(c)``) that the kernel itself asks and torch cannot
    decide answers False: the kernel takes the side of c false (not known false) at every size here, and the
    other side at plain sizes where c holds (fails), as FakeTensorMode alone runs it. Recorded as the
    guard_or_false (guard_or_true) answer it is, whose other side is then checked."""
    import sys

    import torch.fx.experimental.symbolic_shapes as sh

    original = getattr(sh, "_static_eval_sym_bool", None)  # torch 2.13: the one call of both
    sides = {f.__code__: side for f, side in ((getattr(sh, "statically_known_true", None), False),
                                             (getattr(sh, "statically_known_false", None), True)) if f is not None}
    if original is None:
        yield
        return

    def answer(x: Any) -> Any:
        got = original(x)
        caller = sys._getframe(1)
        asker = caller.f_back  # the kernel's own line, not torch's layout logic asking through sym_node
        if got is None and caller.f_code in sides and asker is not None and recorder.own.code(asker.f_code):
            recorder.record(asker, x.node.expr, sides[caller.f_code])  # the kernel's own line: the walk ends there
        return got

    sh._static_eval_sym_bool = answer
    try:
        yield
    finally:
        sh._static_eval_sym_bool = original
