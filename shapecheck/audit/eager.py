"""The eager kernel of an op, run in a worker process: a kernel that kills its process (r23 measured SIGFPE and
SIGSEGV in fbgemm's CPU kernels on inputs the fake accepts) costs only its own result, and the audit goes on.

One long-lived worker per audit process, forked on first use (it inherits the imported libraries, so every op
the audit sees is registered there too) and forked again after a crash or a time-out. A call sends the op's name,
its ``OpInputs`` (plain data; real tensors of samples as bytes), the point (the dims' values) and the device; the
worker builds real tensors there, calls the op and sends back the result's description (``_torch.audit.describe``)
or the error. Torch-free here: the worker's own code loads torch through ``_torch.audit``.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from typing import Any

#: one eager call's wall-clock bound (a kernel stuck in a loop is reported as a time-out, the worker replaced)
CALL_SECONDS = 60.0
#: how a time-out's text begins
TIMED_OUT = "the eager kernel ran past"


@dataclass(frozen=True)
class EagerResult:
    ok: bool  # None only inside the worker protocol: the op is not registered in the forked worker
    value: Any = None  # the description of the result (ok), or the error text
    crashed: bool = False  # the kernel killed the worker (a signal) or ran past CALL_SECONDS
    # how the worker the call first ran in ended, where it had served earlier calls and a fresh one gave this
    # result instead: an earlier call left that process broken (``EagerWorker.call``)
    broken_by_earlier: str = ""

    @property
    def error(self) -> str:
        return "" if self.ok else str(self.value)


def _serve(conn: Any, locks: str | None = None) -> None:
    """The worker's loop: one request at a time, until the parent closes the pipe. ``locks``: where the build
    locks it takes are noted (``_torch.audit.record_build_locks``)."""
    os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")  # a library that wraps its eager kernel in torch.compile
    _close_inherited(conn.fileno())
    if hasattr(os, "setpgrp"):  # a group of its own: a time-out kills what the kernel started too (a C++ build)
        os.setpgrp()
    from .._torch import audit as CA
    from .._torch import core as C
    from .inputs import at_point_real
    from .logged import failed_check, stderr_read

    CA.set_threads(1)
    if locks is not None:
        CA.record_build_locks(locks)
    while True:
        try:
            op_name, inputs, point, device, seed = conn.recv()
        except (EOFError, OSError):
            return
        try:
            op = C.resolve_op(op_name)
        except Exception:  # noqa: BLE001 - registered after this worker was forked: the parent starts a new one
            try:
                conn.send((None, "unknown op"))
            except (OSError, ValueError):
                return
            continue
        try:
            args, kwargs = at_point_real(inputs, point, device, seed)
            with C.quiet_torch_logging(), stderr_read() as said_:
                out = op(*args, **kwargs)
            failed = failed_check(said_())
            reply = (False, failed) if failed else (True, CA.describe(out, inputs.named(args, kwargs)))
        except BaseException as exc:  # noqa: BLE001 - the kernel rejects these inputs (its own BaseException
            # too): the reply says how; the user's Ctrl-C ends the worker
            from ..errors import user_stopped

            if user_stopped(exc):
                raise
            reply = (False, CA.call_error(exc))
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return


def _dumps(message: Any) -> bytes:
    """A request as the worker's ``conn.recv()`` reads it. A constant whose class pickle cannot find by its own
    name (torch 2.13's ``torch._C._ScalingType``, which says it is ``torch.nn.functional._ScalingType``: an OpInfo
    sample of ``_scaled_mm_v2`` passes one) is sent as the module attribute that holds its class, and its name."""
    from multiprocessing.reduction import ForkingPickler

    try:
        return bytes(ForkingPickler.dumps(message))
    except (pickle.PicklingError, AttributeError, TypeError):
        buf = io.BytesIO()
        _Located(buf).dump(message)
        return buf.getvalue()


class _Located(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        if isinstance(obj, type) or not isinstance(getattr(obj, "name", None), str) or _findable(cls):
            return NotImplemented
        where = _holder(cls)
        if where is None or getattr(cls, obj.name, None) is not obj:
            return NotImplemented
        return _member, (*where, obj.name)


def _findable(cls: type) -> bool:
    try:
        found: Any = sys.modules[cls.__module__]
        for part in cls.__qualname__.split("."):
            found = getattr(found, part)
        return found is cls
    except (KeyError, AttributeError):
        return False


def _holder(cls: type) -> tuple[str, str] | None:
    """(module, attribute) of a loaded module that holds ``cls``."""
    for name, module in list(sys.modules.items()):
        for attr, value in list(getattr(module, "__dict__", {}).items()):
            if value is cls:
                return name, attr
    return None


def _member(module: str, attr: str, name: str) -> Any:
    import importlib

    return getattr(getattr(importlib.import_module(module), attr), name)


def _close_inherited(keep: int) -> None:
    """Close every file descriptor the fork inherited but the worker's own pipe and stdio: a pipe of the parent
    (a parallel job's result pipe) held open here would never reach end-of-file there."""
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:  # not Linux: nothing to close
        return
    for fd in fds:
        if fd > 2 and fd != keep:
            try:
                os.close(fd)
            except OSError:
                pass


class EagerWorker:
    """Calls of ops' eager kernels in a forked worker process (``call``); ``close`` ends it."""

    def __init__(self) -> None:
        self._proc: Any = None
        self._conn: Any = None
        self.crashes = 0
        self._served = 0  # the calls the running worker answered: a crash after some may be an earlier call's doing
        # where the worker notes the build locks it takes, for the parent to remove after killing it mid-build
        self._locks = os.path.join(tempfile.gettempdir(), f"shapecheck-build-locks-{os.getpid()}-{id(self)}")

    def _start(self, device: str) -> None:
        """Fork the worker (it inherits every op registered so far); for a CUDA device in a process where CUDA
        cannot survive a fork, spawn it instead (a fresh interpreter: aten's ops, not an --import's)."""
        method = "fork"
        if device != "cpu":
            from .._torch import audit as CA

            if CA.cuda_fork_unsafe():
                method = "spawn"
        ctx = multiprocessing.get_context(method)
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(child, self._locks), daemon=True)
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        self._served = 0

    def call(self, op_name: str, inputs: Any, point: dict[str, int], device: str = "cpu", seed: int = 0,
             seconds: float = CALL_SECONDS) -> EagerResult:
        """The eager kernel at ``point``. A worker that dies or hangs on a call after answering others is asked
        again in a fresh process: a kernel that writes past its memory and returns (hunt 48: torch-harmonics'
        CPU kernels at sizes they do not check) leaves the process to die at a later, innocent call, and the death
        is this point's only where a fresh process dies too."""
        reused = self._proc is not None and self._proc.is_alive() and self._served > 0
        res = self._answer(op_name, inputs, point, device, seed, seconds)
        if res.crashed and reused:
            again = self._answer(op_name, inputs, point, device, seed, seconds)
            return again if again.crashed else replace(again, broken_by_earlier=res.error)
        return res

    def _answer(self, op_name: str, inputs: Any, point: dict[str, int], device: str, seed: int,
                seconds: float) -> EagerResult:
        res = self._call(op_name, inputs, point, device, seed, seconds)
        if res.ok is None:  # the op was registered (an --import) after the worker was forked: fork it again
            self.close()
            res = self._call(op_name, inputs, point, device, seed, seconds)
            if res.ok is None:
                return EagerResult(False, f"RuntimeError: the eager worker cannot resolve {op_name}")
        return res

    def _call(self, op_name: str, inputs: Any, point: dict[str, int], device: str, seed: int,
              seconds: float) -> EagerResult:
        if self._proc is None or not self._proc.is_alive():
            self._start(device)
        started = time.time()
        with contextlib.suppress(OSError):  # the locks noted are this call's only: one another worker took later
            os.remove(self._locks)  # is not removed as this one's; the worker makes the file only when it takes one
        try:
            message = _dumps((op_name, inputs, point, device, seed))
        except Exception as err:  # noqa: BLE001 - an argument no pickler can carry: this call is not compared
            return EagerResult(False, f"the call cannot be sent to the eager kernel's process ({type(err).__name__}: "
                               f"{str(err)[:200]})", crashed=True)
        try:
            self._conn.send_bytes(message)
            if self._conn.poll(seconds):
                ok, value = self._conn.recv()
                self._served += 1
                return EagerResult(ok, value)
            return self._crashed(f"{TIMED_OUT} {seconds:.0f} s", started)
        except (EOFError, OSError, BrokenPipeError):
            return self._crashed("")

    def _crashed(self, why: str, timed_out: float | None = None) -> EagerResult:
        if timed_out is not None:  # the worker and what it started (a compiler, ninja) go together: its group, and
            # each process below it, since ninja puts each compiler in a group of its own (hunt 40)
            below = _descendants(self._proc.pid)
            with contextlib.suppress(OSError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            for pid in below:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        how = ended(self._proc)
        why = why or f"the eager kernel {how}"
        if timed_out is not None:
            # a library that builds its C++ extension on first call (optimum-quanto) holds torch's build lock
            # meanwhile: killed there, it leaves the lock, and every later call would wait on it (hunt 31)
            from .._torch import audit as CA

            stale = CA.remove_build_locks(timed_out, self._locks)
            with contextlib.suppress(OSError):
                os.remove(self._locks)
            if stale:
                why += f" (it was building a C++ extension: torch's build lock it left, {stale[0]}, removed)"
        self._proc = self._conn = None
        self.crashes += 1
        return EagerResult(False, why, crashed=True)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.remove(self._locks)
        if self._conn is not None:
            self._conn.close()
        if self._proc is not None:
            self._proc.join(2)
            if self._proc.is_alive():
                self._proc.kill()
        self._proc = self._conn = None


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (through /proc, where there is one), children first."""
    out: list[int] = []
    todo = [pid]
    while todo and len(out) < 4096:
        at = todo.pop()
        try:
            kids = [int(x) for t in os.listdir(f"/proc/{at}/task")
                    for x in open(f"/proc/{at}/task/{t}/children", encoding="ascii").read().split()]
        except (OSError, ValueError):
            continue
        out += kids
        todo += kids
    return out


_WORKER: EagerWorker | None = None
_WORKER_PID: int | None = None


def worker() -> EagerWorker:
    """This process's eager worker (a forked audit job gets its own)."""
    global _WORKER, _WORKER_PID
    if _WORKER is None or _WORKER_PID != os.getpid():
        _WORKER, _WORKER_PID = EagerWorker(), os.getpid()
    return _WORKER


def in_child(fn: Any, seconds: float = CALL_SECONDS) -> EagerResult:
    """``fn()`` in a process forked for this one call: ``EagerResult(True, its value)`` (a picklable value), or
    ``crashed`` where the child dies or runs past ``seconds``. For a call that may kill this process: the fake
    at a point where the eager kernel crashed (FakeTensor's fallback runs that same kernel)."""
    if not hasattr(os, "fork"):
        return EagerResult(False, "no fork on this platform: not run in a process of its own", crashed=True)
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_one, args=(child, fn), daemon=True)
    proc.start()
    child.close()
    try:
        if parent.poll(seconds):
            return EagerResult(True, parent.recv())
        why = f"ran past {seconds:.0f} s"
    except (EOFError, OSError):
        why = ""
    finally:
        parent.close()
    how = ended(proc)
    return EagerResult(False, why or how, crashed=True)


def ended(proc: Any) -> str:
    """How a child process ended (killed first if it still runs): "killed its process (SIGSEGV)", or "ended its
    process (exit N)"."""
    if proc.is_alive():
        proc.kill()
    proc.join(5)
    code = proc.exitcode
    if code is not None and code < 0 and -code in signal.Signals._value2member_map_:
        return f"killed its process ({signal.Signals(-code).name})"
    return f"ended its process (exit {code})"


def _one(conn: Any, fn: Any) -> None:
    _close_inherited(conn.fileno())
    try:
        conn.send(fn())
    finally:
        conn.close()
        os._exit(0)  # no teardown of what the fork inherited (torch, the parent's atexit hooks)
