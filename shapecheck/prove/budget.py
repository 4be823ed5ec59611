"""verify's time budget (``--timeout``): seconds per case and per run, distinct from z3's per-query timeout.

A case over its budget stops where it is and is reported inconclusive (SC005) with what it found so far; a run
over its budget reports the cases done, and the rest as not checked. The budget is checked before every trace
of the exploration (``check``), and, in the main thread where the platform has ``SIGALRM``, an interval timer
raises ``OverBudget`` wherever the case is, except inside the solver, which is shared by every case (a z3
query returns within ``--timeout-ms``), and inside an import (torch imports modules on first use): the timer
rings again a moment later.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..errors import ShapecheckError


class OverBudget(ShapecheckError):
    """The case's or the run's time budget ran out. A ``ShapecheckError``, so that the kernel's call in a trace
    lets it through (it is not the kernel failing)."""

    def __init__(self, scope: str, seconds: float):
        super().__init__(f"the {scope}'s time budget ({seconds:g} s, --timeout) ran out")
        self.scope, self.seconds = scope, seconds


@dataclass
class Budget:
    """Seconds per case and per run; None: no limit."""

    case_s: float | None = None
    run_s: float | None = None
    started: float = field(default_factory=time.monotonic)

    def run_left(self) -> float | None:
        return None if self.run_s is None else self.run_s - (time.monotonic() - self.started)

    def run_over(self) -> bool:
        left = self.run_left()
        return left is not None and left <= 0

    @contextlib.contextmanager
    def case(self) -> Iterator[None]:
        """The scope of one case: ``check()`` inside it raises ``OverBudget`` past the case's or the run's end."""
        global _deadline, _rang
        _rang = None
        ends = []
        if self.case_s is not None:
            ends.append((time.monotonic() + self.case_s, "case", self.case_s))
        if self.run_s is not None:
            ends.append((self.started + self.run_s, "run", self.run_s))
        if not ends:
            yield
            return
        end = min(ends)
        outer, _deadline = _deadline, end
        with _alarm(end):
            try:
                check()
                yield
            finally:
                _deadline = outer


#: the innermost case's (monotonic end, scope, seconds); None outside a budgeted case
_deadline: tuple[float, str, float] | None = None
#: the OverBudget the timer raised in the current case, if it did
_rang: OverBudget | None = None


def interrupted() -> OverBudget | None:
    """The ``OverBudget`` the timer raised in the last budgeted case, if it did. The exception may not have
    come out as itself: raised inside a Python function that torch's C++ called (a SymInt's ``is_int`` while
    torch parses arguments), it comes out as torch's ``RuntimeError``, or is taken for the kernel's own
    failure. A case the timer interrupted is over its budget whatever came out of it."""
    return _rang


def over_budget(exc: BaseException) -> OverBudget | None:
    """The time budget that ``exc`` means ran out: ``exc`` itself, or the timer's exception that torch turned into
    its own (``interrupted``); None when ``exc`` is anything else."""
    return exc if isinstance(exc, OverBudget) else interrupted()


def check() -> None:
    """Raise ``OverBudget`` when the current case's budget has run out (nothing outside a budgeted case)."""
    if _deadline is not None and time.monotonic() >= _deadline[0]:
        raise OverBudget(_deadline[1], _deadline[2])


@contextlib.contextmanager
def _alarm(end: tuple[float, str, float]) -> Iterator[None]:
    """A timer that raises ``OverBudget`` at ``end`` (main thread, POSIX); nothing elsewhere."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum, frame):  # noqa: ARG001 - the signal handler's signature
        if _in_solver(frame):  # never inside a z3 push/pop: the solver is shared by every case; a moment later
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            return
        global _rang
        _rang = OverBudget(end[1], end[2])
        raise _rang

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, max(end[0] - time.monotonic(), 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _in_solver(frame) -> bool:
    """Whether the interrupted code must not be cut: the solver's (its incremental state must stay consistent),
    or an import (a module cut halfway stays half-made in ``sys.modules``: torch imports ``torch._dynamo``'s
    parts on first use, and every later case would fail on a name the module lacks)."""
    from ..logic import solver

    while frame is not None:
        name = frame.f_code.co_filename
        if name == solver.__file__ or name.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False
