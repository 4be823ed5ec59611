"""What a supervised child is doing, told to the process that supervises it (``trace.isolate``): the case and
region under way, the user's file under import. A crash's report names it. Nothing is told outside such a child."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .errors import TargetError

#: in a supervised child, its channel to the supervising process; None elsewhere, and in the processes such a
#: child forks (``--jobs`` workers), which must not write to its pipe
sink: Callable[[Any], None] | None = None


def note(message: Any) -> None:
    """Tell the supervising process ``message`` (what the child is doing, for a crash's report to name)."""
    if sink is not None:
        sink(message)


#: the run's time budget in seconds (``--timeout run=S``), which loading the user's files spends first; None: none
load_seconds: float | None = None


class LoadTimeout(TargetError):
    """Importing the user's file did not finish within the run's time budget (an endless loop at import)."""


@contextlib.contextmanager
def loading(what: str) -> Iterator[None]:
    """The user's file (or module) ``what`` being imported: a process that dies meanwhile names it, whatever
    signal killed it (faulthandler writes no stack for SIGTERM or SIGKILL); past ``load_seconds`` the import is
    cut (``LoadTimeout``, exit 2), again every half second where its code catches the first."""
    note(("loading", what))
    with _deadline(what, load_seconds):
        yield
    note(("loaded", what))


@contextlib.contextmanager
def _deadline(what: str, seconds: float | None) -> Iterator[None]:
    if seconds is None or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum: int, frame: Any) -> None:  # noqa: ARG001 - the signal handler's signature
        raise LoadTimeout(f"{what}: importing it did not finish within the run's time budget ({seconds:g} s, "
                          "--timeout run=S): nothing was checked")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3), 0.5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
