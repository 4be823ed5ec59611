"""stdout is the report's. While a command that imports a library or runs kernels works, whatever else writes
to stdout (a library's import banner, a kernel's ``print``, C code, a worker process) goes to stderr, and the
report is written to the real stdout once the work is done (``echo``): a JSON or SARIF report on stdout stays
parseable whatever the library prints."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import Any

import click

_REPORT: Any = None  # the real stdout while it is guarded


def echo(text: str, **kwargs: Any) -> None:
    """``click.echo`` of the report (or of a command's own output) to the real stdout."""
    click.echo(text, file=_REPORT if _REPORT is not None else sys.stdout, **kwargs)


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """Python's ``sys.stdout`` is stderr inside; where stdout is the process's file descriptor 1, so is the
    descriptor (C code and the processes started inside write there)."""
    global _REPORT
    real = sys.stdout
    saved = None
    with contextlib.suppress(AttributeError, OSError, ValueError, io.UnsupportedOperation):
        if real is not None and real is sys.__stdout__ and real.fileno() == 1 and sys.stderr is not None:
            real.flush()
            sys.stderr.flush()
            saved = os.dup(1)
            os.dup2(sys.stderr.fileno(), 1)
    report = real if saved is None else io.TextIOWrapper(io.FileIO(os.dup(saved), "w"), encoding=real.encoding,
                                                         errors=real.errors, line_buffering=True)
    _REPORT, sys.stdout = report, sys.stderr
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
            report.flush()
        sys.stdout, _REPORT = real, None
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)
            with contextlib.suppress(Exception):
                report.close()


#: the commands that import a library or run kernels (their own output goes through ``echo``)
RUNS_CODE = frozenset({("verify", "op"), ("fuzz", "op"), ("ref", "check"), ("gate",), ("audit",),
                       ("contract", "draft"), ("contract", "check")})


def guard_for(args: list[str]) -> contextlib.AbstractContextManager:
    """``guarded()`` for a run of a command that imports or runs code, else nothing (``--help`` prints help)."""
    texts = [str(a) for a in args]  # main() takes what click takes (a test passes a Path)
    words = [a for a in texts if not a.startswith("-")][:2]
    wanted = any(tuple(words[:len(c)]) == c for c in RUNS_CODE)
    if not wanted or any(a in ("--help", "-h") for a in texts):
        return contextlib.nullcontext()
    return guarded()
