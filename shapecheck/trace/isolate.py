"""A run in a child process that may crash: a kernel (or torch's C++ under it) that dies of a signal (SIGSEGV,
SIGABRT, SIGBUS) kills the process it runs in, and every result of that process with it. ``supervised`` runs
the work in a forked child that streams its progress to this process as it goes, so that a crash loses only
the step the child was in; the caller then starts another child that skips what is done (prove/verify.py).

faulthandler writes the child's Python stack to a file when it crashes: ``Died.frames`` reads it, so that the
finding can name the kernel's line. Fork is used only where it is safe by default (Linux), as for ``--jobs``.
"""

from __future__ import annotations

import os
import pickle
import re
import signal
import struct
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from .. import progress
from ..errors import said

_HEADER = struct.Struct("<Q")

def note(message: Any) -> None:
    """Tell the supervising process ``message`` (``progress.note``)."""
    progress.note(message)


@dataclass(frozen=True)
class Died:
    """A supervised child that ended without a result: the signal that killed it (0: none, it exited) and the
    Python stack faulthandler wrote when it crashed ("" when it wrote none)."""

    signal: int
    dump: str

    def name(self) -> str:
        if not self.signal:
            return "an exit without a result"
        try:
            return signal.Signals(self.signal).name
        except ValueError:
            return f"signal {self.signal}"

    def frames(self) -> list[tuple[str, int, str]]:
        """(file, line, function) of the crashed thread's stack, innermost first."""
        current = self.dump.split("Current thread", 1)[-1]
        return [(f, int(n), fn) for f, n, fn in re.findall(r'File "(.+?)", line (\d+) in (\S+)', current)]


def can_isolate() -> bool:
    """Whether runs go to a supervised child here: Linux with fork (as ``--jobs``), unless SHAPECHECK_ISOLATE=0."""
    return (os.environ.get("SHAPECHECK_ISOLATE", "1") != "0" and hasattr(os, "fork")
            and sys.platform.startswith("linux"))


def supervised(run: Callable[[Callable[[Any], None]], Any], on_message: Callable[[Any], None], *,
               one_thread: bool = True) -> Any:
    """``run(send)`` in a forked child: each ``send(message)`` (picklable) reaches ``on_message`` in this process
    as it is sent. Returns what ``run`` returned, raises what it raised, or returns ``Died`` when the child
    ended without either (a crash). ``one_thread``: the child runs torch on one intra-op thread
    (``_one_thread``); False for work that runs fake kernels only (verify, gate), which keeps this process's."""
    import gc

    dump = tempfile.TemporaryFile()
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    gc.freeze()  # the child's collections skip what it inherits: they would copy every page of it
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's stack
        os.close(r)
        _child(run, os.fdopen(w, "wb"), dump, one_thread)
    gc.unfreeze()
    os.close(w)
    outcome: list[tuple[str, Any]] = []
    try:
        with os.fdopen(r, "rb") as pipe:
            while (frame := _read(pipe)) is not None:
                kind, value = frame
                if kind == "message":
                    on_message(value)
                else:
                    outcome.append((kind, value))
    except BaseException:  # an interrupt, or on_message raised: the child does not outlive it
        stop(pid)
        dump.close()
        raise
    _, status = os.waitpid(pid, 0)
    if outcome:
        dump.close()
        kind, value = outcome[-1]
        if kind == "raise":
            raise value
        return value
    dump.seek(0)
    text = dump.read().decode("utf-8", "replace")
    dump.close()
    return Died(os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0, text)


def _child(run: Callable[[Callable[[Any], None]], Any], pipe: IO[bytes], dump: IO[bytes], one_thread: bool) -> None:
    import faulthandler

    code = 0
    try:
        faulthandler.enable(file=dump, all_threads=False)
        if one_thread:
            _one_thread()
        try:
            progress.sink = lambda message: _write(pipe, ("message", message))  # noqa: E731 - ``note``'s too
            value = run(progress.sink)
            _write(pipe, ("value", value))
        except BaseException as exc:  # noqa: BLE001 - the caller raises it in its own process
            _write(pipe, ("raise", _portable(exc)))
        pipe.flush()
    except BaseException:  # noqa: BLE001 - whatever happens, the parent sees no result and says so
        code = 1
    finally:
        os._exit(code)


def _one_thread() -> None:
    """torch's intra-op pool (OpenMP) does not survive a fork: the child's first parallel op (a real kernel's, as
    ``ref check`` and ``fuzz`` run) would wait forever for threads that are not there. One thread, as torch's
    DataLoader workers do; torch is left alone where this process never imported it.

    Not for fake kernels: what they return may depend on the thread count, as the C++ kernels they mirror do
    (torch 2.13's CPU convolution, and FakeTensor's rule for it, give a channels_last_3d input's output
    channels_last_3d strides with 2 threads or more and contiguous ones with 1: the backend torch picks), so a
    verify run in a child must see the count of the process it stands in for (hunt 37)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling (with its traceback's text as a note), else a RuntimeError that says what
    it was: the caller reports it as it would have in its own process."""
    import traceback

    try:
        exc.add_note("".join(traceback.format_exception(exc)).rstrip())
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any exception may refuse to pickle
        return RuntimeError(f"{type(exc).__name__}: {said(exc)}")


def _write(pipe: IO[bytes], frame: tuple[str, Any]) -> None:
    data = pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(_HEADER.pack(len(data)) + data)
    pipe.flush()


def _read(pipe: IO[bytes]) -> tuple[str, Any] | None:
    head = pipe.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (n,) = _HEADER.unpack(head)
    data = pipe.read(n)
    if len(data) < n:
        return None  # the child died halfway through a frame
    return pickle.loads(data)  # noqa: S301 - our own child's output, through a private pipe


def stop(pid: int) -> None:
    """Kill a child process of ours and reap it (gone already: nothing to do)."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (OSError, ChildProcessError):
        pass


def whole_command(run: Callable[[], Any]) -> Any:
    """A command's whole work (loading the kernel, then checking it), ``run()``, in a supervised child where the
    platform allows: what it returns or raises. The checks run their own supervised children for the kernel's
    crashes; what is left to crash here is loading: a kernel file, or a module it imports, that dies as it
    loads. That is a kernel that cannot be loaded (exit 2, a line naming its file), not a lost run."""
    if not can_isolate():
        return run()
    from .. import _torch  # noqa: F401 - torch, as shapecheck imports it (its warnings filtered), before the fork:
    # the result's unpickling needs it here too

    loads: list[str] = []  # the user's files under import, innermost last

    def heard(message: Any) -> None:
        if isinstance(message, tuple) and message[:1] == ("loading",):
            loads.append(message[1])
        elif isinstance(message, tuple) and message[:1] == ("loaded",) and loads:
            loads.pop()

    out = supervised(lambda send: run(), heard, one_thread=False)  # verify and gate run fake kernels only
    if not isinstance(out, Died):
        return out
    raise load_crash(out, loads[-1] if loads else None)


def load_crash(died: Died, loading_file: str | None = None) -> Exception:
    """The error of a process that died before its checks began: at a line of the user's code on the crashed
    stack, or while a file of the user's was imported (``loading_file``), a kernel that cannot be loaded
    (``TargetError``, exit 2, naming that line or file); elsewhere, a bug in shapecheck or torch (exit 4)."""
    from ..errors import TargetError

    at = next(((f, n) for f, n, _ in died.frames() if _users(f)), None)
    if at is None and loading_file is not None:
        return TargetError(f"{loading_file}: the process died of {died.name()} while it was imported (the file, or "
                           "a module it imports, killed its process): nothing was checked")
    if at is None:
        return RuntimeError(f"the process died of {died.name()} outside the kernel's code: "
                            f"{died.dump.strip()[-600:] or 'no stack was written'}")
    return TargetError(f"{at[0]}:{at[1]}: the process died of {died.name()} while the kernel was loaded (its file, "
                       "or a module it imports, crashed as it ran): nothing was checked")


def _users(path: str) -> bool:
    """Whether ``path`` is the user's code: not shapecheck's, nor an installed package's or the standard
    library's."""
    import sysconfig

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    installed = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    path = os.path.abspath(path)
    return not path.startswith("<") and not any(path == r or path.startswith(r + os.sep)
                                                for r in {here, *installed})
