"""The compatibility layer: answers torch gives a kernel's own size questions without a guard, recorded as the
guard_or_false / guard_or_true answers they are (``core._FallbackRecorder``), so that verify checks their other
side: ``statically_known_true``/``_false`` that torch cannot decide (False), and ``guard_size_oblivious`` (torch 2.4 to
2.8 kernels' way to ask about 0 and 1), which the dims, not size-like here so that a plain ``if`` on 0/1 stays a
guard, would otherwise turn into a guard: answered as torch answers it for sizes (each size taken as at least 2),
as torch.export's backed sizes and size-like unbacked ones get it."""

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


@contextlib.contextmanager
def oblivious_answers(recorder: Any, shape_env: Any = None) -> Iterator[None]:
    """With ``shape_env``, torch's cache of answers off (``_uncached_fallbacks``), so that every asker's
    guard_or_false/true answer reaches the recorder. ``SymNode.guard_size_oblivious`` (what
    ``guard_size_oblivious(c)`` calls) that raises on the trace's unbacked sizes answers as torch does for
    size-like sizes, each taken as at least 2, where that decides c: the kernel takes that side at every size
    (export's program too), and the other side at plain sizes where it differs.
    Recorded as a guard_or_false/true answer with the asking frame; undecided, the guard stands."""
    import sys

    from torch.fx.experimental.sym_node import SymNode

    original = getattr(SymNode, "guard_size_oblivious", None)
    if original is None:
        yield
        return

    def oblivious(node: Any, file: str, line: int) -> bool:
        try:
            return original(node, file, line)
        except Exception as err:
            value = _oblivious_value(node) if type(err).__name__ == "GuardOnDataDependentSymNode" else None
            if value is None:
                raise
            recorder.record(sys._getframe(1), node.expr, value)
            return value

    SymNode.guard_size_oblivious = oblivious
    try:
        with _uncached_fallbacks(shape_env):
            yield
    finally:
        SymNode.guard_size_oblivious = original


@contextlib.contextmanager
def _uncached_fallbacks(shape_env: Any) -> Iterator[None]:
    """torch caches ``ShapeEnv._inner_evaluate_expr`` (an lru_cache): a guard_or_false that a later line asks
    about the same expression gets the first asker's answer and passes no ``_log_suppressed_dde``, so the
    recorder knew only the first asker. Where that was torch's layout logic (``unsqueeze``'s contiguity test:
    ``D == 1``, left out as deciding a layout) and the later one a size (``squeeze()`` drops the dim where
    ``D == 1``), the trace's output held only for D != 1 and verify passed a kernel wrong at D = 1 (hunt 53). The
    cache is off while the trace runs: torch's own uncached function takes its place, so that no frame of
    shapecheck's stands between a guard and the kernel line that asked it."""
    cls = type(shape_env) if shape_env is not None else None
    cached = getattr(cls, "_inner_evaluate_expr", None) if cls is not None else None
    uncached = getattr(cached, "__wrapped__", None)
    if uncached is None:
        yield
        return
    cls._inner_evaluate_expr = uncached
    try:
        yield
    finally:
        cls._inner_evaluate_expr = cached


def _oblivious_value(node: Any) -> bool | None:
    """torch's static answer for ``node`` with every size (an unbacked symbol whose range starts at 0 or more,
    up to at least 2) taken as at least 2; None where that does not decide it."""
    import sympy
    from torch.utils._sympy.value_ranges import ValueRanges

    env = node.shape_env
    expr = env.replace(node.expr)
    ranges = []
    for s in sorted(expr.free_symbols, key=str):
        vr = env.var_to_range.get(s)
        if vr is None:
            return None
        if vr.lower >= 0 and vr.upper >= 2:
            vr = ValueRanges(max(vr.lower, 2), vr.upper)
        ranges.append((s, vr))
    try:
        got = env._maybe_evaluate_static(expr, var_to_range=tuple(ranges))
    except Exception:  # noqa: BLE001 - torch cannot evaluate it statically: the guard stands
        return None
    if got is sympy.true or got is sympy.false:
        return bool(got)
    return None
