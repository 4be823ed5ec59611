"""Audit jobs in supervised worker processes: a kernel that kills its process (a C++ Meta kernel's SIGFPE on an
integer division by a zero size, a segfault) costs only its own op, reported as not run with the signal; the
other ops' records are kept and the audit goes on in a new worker.

Each worker is forked after the imports, takes one op at a time from the parent through its pipe and sends
back the op's record. ``jobs`` workers run at once. Without ``os.fork`` the ops run in this process.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from ..errors import said


def _serve(conn: Any, fn: Callable[[str, Callable[[dict[str, Any]], None]], dict[str, Any]]) -> None:
    import signal

    from .eager import worker

    # Ctrl-C reaches the terminal's whole process group: the supervisor stops the run and writes the report (hunt 38:
    # each worker printed a KeyboardInterrupt traceback and no report came)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        while True:
            try:
                name = conn.recv()
            except (EOFError, OSError):
                return
            if name is None:
                return
            try:
                rec = fn(name, lambda partial: conn.send(("partial", partial)))
            except Exception as err:  # noqa: BLE001 - audit_op reports its own failures; this is a last guard
                rec = {"error": f"{type(err).__name__}: {said(err)[:300]}"}
            try:
                conn.send(rec)
            except (OSError, ValueError):
                return
    finally:
        worker().close()


Checkpoint = Callable[[dict[str, Any]], None]


def _stop(proc: Any) -> None:
    """Kill a worker and the eager worker it forked (its children, found through /proc where there is one), with
    the eager worker's process group (``eager._serve`` makes one: what the kernel started goes too)."""
    import signal

    for pid in _children(proc.pid):
        try:
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    proc.kill()
    proc.join(5)


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return []


def run_supervised(names: list[str], fn: Callable[[str, Checkpoint], dict[str, Any]], jobs: int,
                   crashed: Callable[[str, str, dict[str, Any] | None], dict[str, Any]],
                   op_timeout: float | None = None) -> dict[str, dict[str, Any]]:
    """op -> fn(op, checkpoint) for every op, computed by ``jobs`` forked workers; ``fn`` may hand
    ``checkpoint`` what it has done so far (a partial record). An op whose worker died gets
    ``crashed(op, why, its last partial record or None)``; so does one whose worker ran past ``op_timeout``
    seconds on it (then stopped: hunt 36's upsample_nearest2d of executorch's channels_last ops ran for
    minutes, and the run, killed from outside, printed nothing)."""
    if not hasattr(os, "fork"):
        return {n: fn(n, lambda partial: None) for n in names}
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    todo = list(reversed(names))
    out: dict[str, dict[str, Any]] = {}
    partial: dict[str, dict[str, Any]] = {}  # op -> the last partial record its worker sent
    busy: dict[Any, tuple[Any, str]] = {}  # connection -> (process, the op it is on)
    began: dict[Any, float] = {}  # connection -> when it got its op

    def start() -> Any:
        parent, child = ctx.Pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        proc = ctx.Process(target=_serve, args=(child, fn))  # not a daemon: it forks the eager worker
        proc.start()
        child.close()
        return parent, proc

    def give(conn: Any, proc: Any) -> None:
        if todo:
            name = todo.pop()
            conn.send(name)
            busy[conn] = (proc, name)
            began[conn] = time.monotonic()
        else:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
            conn.close()
            proc.join(5)

    for _ in range(max(1, min(jobs, len(names)))):
        give(*start())
    with _stopped_by_signal() as stopped:
        try:
            _loop(busy, began, partial, out, todo, op_timeout, crashed, give, start)
        except _Stop:
            pass
    if stopped:  # SIGTERM (a CI job's time-out, `timeout`) or Ctrl-C: the ops under way and those not reached are not run,
        # the others keep their records and the report is written (hunt 38: a run stopped so printed nothing)
        for proc, name in list(busy.values()):
            _stop(proc)
            out[name] = crashed(name, STOPPED, partial.pop(name, None))
        for name in names:  # not reached, or between its worker's reply and its record when the signal came
            if name not in out:
                out[name] = crashed(name, STOPPED, partial.pop(name, None))
    return out


#: why the ops a stopped run did not finish are not run
STOPPED = "was stopped: the run got SIGTERM or SIGINT"


class _Stop(Exception):
    """SIGTERM or SIGINT arrived while the supervisor waited."""


@contextlib.contextmanager
def _stopped_by_signal() -> Any:
    """Within it (in the main thread), SIGTERM and SIGINT (Ctrl-C) raise ``_Stop``; the ``as`` target is a list
    that is true once one did."""
    import signal
    import threading

    seen: list[bool] = []
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return

    def stop(signum: int, frame: Any) -> None:
        seen.append(True)
        raise _Stop

    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield seen
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _loop(busy: dict[Any, tuple[Any, str]], began: dict[Any, float], partial: dict[str, dict[str, Any]],
          out: dict[str, dict[str, Any]], todo: list[str], op_timeout: float | None,
          crashed: Callable[[str, str, dict[str, Any] | None], dict[str, Any]], give: Callable[..., None],
          start: Callable[[], Any]) -> None:
    from multiprocessing.connection import wait

    from .eager import ended

    while busy:
        left = None if op_timeout is None else max(0.0, min(began[c] for c in busy) + op_timeout - time.monotonic())
        ready = wait(list(busy), left)
        if not ready:  # the longest-running op is past its budget: its worker (and its eager worker) stop
            conn = min(busy, key=lambda c: began[c])
            proc, name = busy.pop(conn)
            _stop(proc)
            conn.close()
            out[name] = crashed(name, f"ran past its time budget of {op_timeout:g} s (--op-timeout)",
                                partial.pop(name, None))
            if todo:
                give(*start())
            continue
        for conn in ready:
            proc, name = busy.pop(conn)
            try:
                rec = conn.recv()
            except (EOFError, OSError):
                out[name] = crashed(name, ended(proc), partial.pop(name, None))
                conn.close()
                if todo:
                    give(*start())
                continue
            if isinstance(rec, tuple) and rec[0] == "partial":  # the op goes on: its worker stays busy
                partial[name] = rec[1]
                busy[conn] = (proc, name)
                continue
            partial.pop(name, None)
            out[name] = rec if "error" not in rec or "op" in rec else crashed(name, rec["error"], None)
            give(conn, proc)
