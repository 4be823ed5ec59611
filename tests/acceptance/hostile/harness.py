"""Run shapecheck's command line in-process, in a forked child, under a time and a memory budget.

``run(argv)`` forks; the child sends its stdout and stderr to files, caps its address space
(``RLIMIT_AS``: what it has mapped at the fork plus ``memory_mb``) and its CPU time (``RLIMIT_CPU``:
``seconds``) and calls ``shapecheck.cli.main.main(argv)``; the parent kills a child still running after
``wall_factor * seconds`` of wall time (a hang that waits rather than computes, a FIFO). The budget is CPU time
because the machines that run the suite are shared: under a load of 15 a 2-second check took 20 s of wall time. The child inherits everything the parent
has imported (torch, z3), so a run costs a fork, not an interpreter start.

``judge`` states the contract of the command line with bad input: an exit code of 0-3 (4 is a bug, and a
child killed by the deadline is a hang), no traceback, and for exit 2 one line on stderr naming the file.
"""

from __future__ import annotations

import io
import os
import resource
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Outcome:
    argv: tuple[str, ...]
    code: int | None  # None: killed at the deadline
    stdout: str
    stderr: str
    seconds: float  # wall time
    cpu: float = 0.0  # CPU time of the child (user + system): what the budgets and "fast" checks compare

    def __str__(self) -> str:
        return (f"shapecheck {' '.join(self.argv)[:300]}\n  exit {self.code} after {self.seconds:.1f}s ({self.cpu:.1f}s CPU)\n"
                f"  stderr: {self.stderr[-1500:]!r}\n  stdout: {self.stdout[-500:]!r}")


def _mapped_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def _child(argv: list[str], out: int, err: int, memory_mb: int, cpu_seconds: float, cwd: Path) -> None:
    """In the forked child: never returns."""
    code = 70
    try:
        os.chdir(cwd)
        os.dup2(out, 1)
        os.dup2(err, 2)
        sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), encoding="utf-8", write_through=True)
        sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), encoding="utf-8", write_through=True)
        limit = _mapped_bytes() + memory_mb * (1 << 20)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        cpu = max(1, int(cpu_seconds + 0.999))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
        from shapecheck.cli.main import main

        try:
            main(argv)
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException as e:  # noqa: BLE001 - the harness itself failed in the child: say so, exit 70
        os.write(2, f"\nharness: {type(e).__name__}: {e}\n".encode())
        code = 70
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def run(argv: list[str], *, seconds: float = 30.0, memory_mb: int = 1536, cwd: Path = ROOT,
        wall_factor: float = 4.0) -> Outcome:
    """``shapecheck argv`` in a forked child; ``code`` is None when the child used more than ``seconds`` of
    CPU time, or ran past ``wall_factor * seconds`` of wall time."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _child(list(argv), out.fileno(), err.fileno(), memory_mb, seconds, cwd)
        code: int | None = None
        cpu = 0.0
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                cpu = usage.ru_utime + usage.ru_stime
                code = os.waitstatus_to_exitcode(status)
                if code in (-signal.SIGXCPU, -signal.SIGKILL):  # past the CPU budget (soft, then hard limit)
                    code = None
                break
            if time.monotonic() - start > wall_factor * seconds:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            time.sleep(0.005)
        elapsed = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return Outcome(tuple(argv), code, out.read().decode("utf-8", "replace"),
                       err.read().decode("utf-8", "replace"), elapsed, cpu)


def judge(o: Outcome, names: str | None = None) -> None:
    """The command line's promise for any input: a verdict (0, 1, 3) or bad input (2, one line naming
    ``names``, the file at fault), never an internal error (4), a hang, a crash or a traceback."""
    assert o.code is not None, f"no answer within the deadline (a hang):\n{o}"
    assert o.code in (0, 1, 2, 3), f"exit code {o.code} (4: an internal error; <0: killed by a signal):\n{o}"
    assert "Traceback" not in o.stderr and "Traceback" not in o.stdout, f"a traceback:\n{o}"
    if o.code == 2:
        lines = o.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("shapecheck: error"), f"exit 2 without one error line:\n{o}"
        if names is not None:
            assert names in lines[0], f"exit 2 without naming {names}:\n{o}"
