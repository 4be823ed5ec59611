"""The limits on input, in one place. Bad or hostile input over a limit is refused with one line naming the
file and the key (exit 2), before it can use memory or time without bound.

Every number is far above what a real contract or kernel file needs (the largest value among the shipped
contracts is noted). docs/contracts.md (Limits) and docs/cli.md list them. Nothing here imports torch, z3 or
another module of the package but ``errors``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

# -- contract files -------------------------------------------------------------------------------------
CONTRACT_BYTES = 1 << 20  # a contract file (shipped: 9 KB)
TOML_DEPTH = 32  # tables and arrays nested in one another (shipped: 5)
DIMS = 256  # declared dims (shipped: 7; each is a size of every trace and a z3 variable of every query)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # every integer of a contract, dim ranges included

# -- expressions ----------------------------------------------------------------------------------------
EXPR_CHARS = 2000  # one expression's text (shipped: 99)
EXPR_DEPTH = 64  # one expression's nesting, e.g. the terms of a + chain (shipped: 6)
EXPRESSIONS = 4096  # expression fields in one contract (shipped: 74)
LET_CHAIN = 32  # a let that uses a let that uses a let ... (shipped: 4)
BOUND_DEPTH = 128  # an expression once lets and argument shapes are substituted (shipped: 8)
BOUND_NODES = 20_000  # the same, counted in nodes with every let expanded (shipped: 82)
CONST_BITS = 4096  # any number an expression can reach over the dims' ranges: |n| < 2**4096 (shipped: 40)
TENSOR_LIST = 1024  # elements of one tensors argument (shipped: none; docs/examples/cat.toml: 3)

# -- cases ----------------------------------------------------------------------------------------------
DEFAULT_MAX_CASES = 4096  # combinations of choices; --max-cases raises it (shipped: 108)
EXPRESSIONS_PER_CASE = 256  # cases x expression fields, per allowed case (shipped: 108 x 74 in all)
BIND_NODES_PER_CASE = 256  # expression nodes bound, counted as done (most expressions bind once for all
# cases), per allowed case (shipped: 17)

# -- kernel files (--meta, --meta-source, --import FILE.py) ----------------------------------------------
# parsing is the cost (a 2 MiB file of 17,000 registrations: about 300 MB and 2 s; 16 MiB took 2.7 GB and 52 s)
SOURCE_BYTES = 2 << 20  # torch/_meta_registrations.py: 300 KB; torch's largest .py file: 1.3 MB

# -- the project's other files --------------------------------------------------------------------------
CONFIG_BYTES = 1 << 20  # pyproject.toml (torch's own: 20 KB)
BASELINE_BYTES = 32 << 20  # a gate or audit baseline (one finding: about 300 bytes; torch's audit: 40 KB)
REPORT_BYTES = 64 << 20  # a verify JSON report read back (fuzz --from-verify)
SHARDS = 10_000  # N of --shard K/N (a CI matrix: GitHub allows 256 jobs)

_max_cases: ContextVar[int] = ContextVar("shapecheck_max_cases", default=DEFAULT_MAX_CASES)


def max_cases() -> int:
    """The case limit in force (``--max-cases``, else ``DEFAULT_MAX_CASES``)."""
    return _max_cases.get()


@contextlib.contextmanager
def case_limit(n: int | None) -> Iterator[None]:
    """Contracts loaded inside may have up to ``n`` cases (None: the default)."""
    token = _max_cases.set(DEFAULT_MAX_CASES if n is None else n)
    try:
        yield
    finally:
        _max_cases.reset(token)


class TooLarge(Exception):
    """A file over its size limit (the caller names it)."""


class NotRegularFile(OSError):
    """A path that is not a regular file (a FIFO, a device, a socket, a directory): refused before any byte is
    read, so that a FIFO cannot hang a run and ``/dev/zero`` cannot fill memory. An ``OSError``: callers that
    report "cannot read" report it too, with its ``strerror``."""


def read_bounded(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes: the one reader for every file shapecheck reads
    (contracts, kernel files, config, baselines, cache entries).

    The file is opened without blocking (a FIFO opens at once) and without following a final symlink to
    anything but a regular file: ``fstat`` on the open descriptor decides, so nothing can swap the file between
    the check and the read. Raises ``NotRegularFile`` for anything else, ``TooLarge`` over the limit (read at
    most ``limit + 1`` bytes), and ``OSError`` as ``open`` does."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, f"not a regular file ({_kind(st.st_mode)})", str(path))
        if st.st_size > limit:
            raise TooLarge(f"larger than the limit of {size_text(limit)}")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:  # it grew while being read
        raise TooLarge(f"larger than the limit of {size_text(limit)}")
    return data


def read_input(path: str | os.PathLike, limit: int, name: str, error: type | None = None) -> bytes:
    """``read_bounded``, each refusal bad input (``error``: ``errors.UserError`` or a subclass, exit 2) that
    starts with ``name`` (the option and the file, e.g. ``--baseline b.json``): not a regular file, over the
    limit, cannot be read."""
    from .errors import UserError

    error = error or UserError
    try:
        return read_bounded(path, limit)
    except NotRegularFile as err:
        raise error(f"{name}: {err.strerror}") from None
    except OSError as err:
        raise error(f"{name}: cannot read ({err.strerror or err})") from None
    except TooLarge as err:
        raise error(f"{name}: the file is {err}") from None


def read_json(path: str | os.PathLike, limit: int, option: str, what: str) -> Any:
    """A JSON file the user names (a baseline, a report), read by ``read_input``: bad input naming the option and
    the file when it is not ``what`` (JSON that does not parse, integers of thousands of digits, nesting too
    deep for Python's parser)."""
    import json

    from .errors import UserError

    raw = read_input(path, limit, f"{option} {path}")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:  # ValueError: JSON, or int() over 4300 digits
        raise UserError(f"{option} {path}: not {what} ({type(err).__name__}: {str(err)[:200]})") from None


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a file"


def size_text(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n} bytes"


def int_text(n: int) -> str:
    """An integer for a message: in full when short, else its order of magnitude (a message stays one short
    line, and Python refuses to print integers of more than 4300 digits)."""
    if -(10**30) < n < 10**30:
        return str(n)
    return f"{'-' if n < 0 else ''}about 10**{int(abs(n).bit_length() * 0.30103)}"


def key_text(key: str) -> str:
    """A TOML key for a message: bare when it is a bare key, else quoted (newlines and controls escaped)."""
    if key and all(c.isascii() and (c.isalnum() or c in "_-") for c in key):
        return key
    return '"' + key.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'


# -- a kernel or a module of the user's that ends the process -------------------------------------------


class HardExit(BaseException):
    """User code (a kernel, a module of ``--meta`` or ``--import``) called ``os._exit``: raised in its place, so that
    the call is the kernel's failure (SC007) or a module that cannot be imported (exit 2), never a run that ends
    with exit 0 and no report."""


def _own_or_stdlib(path: str) -> bool:
    import sysconfig

    here = os.path.dirname(os.path.abspath(__file__))
    roots = {here, sysconfig.get_paths()["stdlib"]}
    path = os.path.abspath(path)
    return any(path == r or path.startswith(r + os.sep) for r in roots)


_EXECS = ("execv", "execve", "execl", "execle", "execlp", "execlpe", "execvp", "execvpe")


@contextlib.contextmanager
def no_hard_exit() -> Iterator[None]:
    """While it is in force, ``os._exit`` called from any code but shapecheck's own and the standard library's
    (multiprocessing's workers end with it) raises ``HardExit``. Forked workers inherit it. Not a sandbox: a kernel
    can still kill its process by other means (a signal)."""
    import sys

    real = os._exit

    def guarded(code: int) -> Any:
        caller = sys._getframe(1).f_code.co_filename
        if _own_or_stdlib(caller):
            real(code)
        raise HardExit(f"os._exit({code}) called at {caller}:{sys._getframe(1).f_lineno}")

    def replacing(name: str) -> Any:
        """``os.exec*``: the process would become another program, whose exit status (``/bin/true``: 0) would
        read as shapecheck's verdict."""
        exec_real = getattr(os, name)

        def guarded_exec(*args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_code.co_filename
            if _own_or_stdlib(caller):
                return exec_real(*args, **kwargs)
            raise HardExit(f"os.{name}(...) called at {caller}:{sys._getframe(1).f_lineno}: it would replace the "
                           "process")
        return exec_real, guarded_exec

    execs = {name: replacing(name) for name in _EXECS if hasattr(os, name)}
    os._exit = guarded  # type: ignore[assignment]
    for name, (_, guarded_exec) in execs.items():
        setattr(os, name, guarded_exec)
    try:
        yield
    finally:
        os._exit = real
        for name, (exec_real, _) in execs.items():
            setattr(os, name, exec_real)
