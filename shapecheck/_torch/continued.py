"""The compatibility layer: a trace that answers some of its kernel's size questions itself and goes on.

Under unbacked sizes torch raises ``GuardOnDataDependentSymNode`` (``core.GuardError``) on a condition it cannot decide, and the trace
stops there (``trace.run.guard_trace``). Where the caller already knows the condition's side on the region it
explores (a split an earlier case's exploration made, ``prove.explore``), ``continued`` lets the kernel go on:
the side is stated as torch states a ``torch._check`` (a runtime assert, its range refinement included), so that
torch decides the same condition, and those that follow from it, from then on, and the condition's value is the
answer. A trace made so is the trace of the region with that side added: the caller adds it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import sympy

from ..errors import ShapecheckError
from .core import GuardError

#: the caller's answer to a condition torch could not decide (torch's expression): its side, or None to stop
Answer = Callable[[Any], "bool | None"]


@contextlib.contextmanager
def continued(env: Any, answer: Answer) -> Iterator[None]:
    """Within: each boolean condition of ``env`` (a ``core.TraceEnv``) that torch cannot decide is given to
    ``answer``; a side it names is assumed (a runtime assert of the trace's region, not of the kernel: left
    out of ``env.kernel_asserts()``) and is the condition's value. None: torch raises, as it would."""
    shape_env = env.shape_env
    original = shape_env.evaluate_expr  # the bound method: every size question of the trace comes through it

    def evaluate_expr(orig_expr: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(orig_expr, *args, **kwargs)
        except GuardError as exc:
            cond = getattr(exc, "cond", None)
            if not (getattr(cond, "is_Boolean", False) or getattr(cond, "is_Relational", False)):
                raise  # a value the kernel needs (a specialisation), not a condition
            try:
                side = answer(cond)
            except ShapecheckError:  # ours to pass on (a time budget that ran out)
                raise
            except Exception:  # noqa: BLE001 - never the kernel's failure: the trace stops at the guard, as without
                side = None
            if side is None:
                raise
            before = {id(ra) for ras in shape_env.deferred_runtime_asserts.values() for ra in ras}
            if not shape_env.guard_or_defer_runtime_assert(cond if side else sympy.Not(cond),
                                                           "shapecheck: the side of the region explored"):
                raise  # torch finds the side false after all: no trace of it here
            env.mark_baseline({id(ra) for ras in shape_env.deferred_runtime_asserts.values() for ra in ras} - before)
            return sympy.true if side else sympy.false

    shape_env.evaluate_expr = evaluate_expr
    try:
        yield
    finally:
        del shape_env.evaluate_expr
