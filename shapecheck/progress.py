"""What a supervised child is doing, told to the process that supervises it (``trace.isolate``): the case and
region under way, the user's file under import. A crash's report names it. Nothing is told outside such a child."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

#: in a supervised child, its channel to the supervising process; None elsewhere, and in the processes such a
#: child forks (``--jobs`` workers), which must not write to its pipe
sink: Callable[[Any], None] | None = None


def note(message: Any) -> None:
    """Tell the supervising process ``message`` (what the child is doing, for a crash's report to name)."""
    if sink is not None:
        sink(message)


@contextlib.contextmanager
def loading(what: str) -> Iterator[None]:
    """The user's file (or module) ``what`` being imported: a process that dies meanwhile names it, whatever
    signal killed it (faulthandler writes no stack for SIGTERM or SIGKILL)."""
    note(("loading", what))
    yield
    note(("loaded", what))
