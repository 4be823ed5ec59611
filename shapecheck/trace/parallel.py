"""Cases in forked worker processes: the cases' first (unassumed) traces, or whole cases when they are
independent (``--full``, ``--explore``).

Every case starts with the same trace: the kernel under no assumption. That trace is most of a verification's
cost (about 8 ms of torch's symbolic arithmetic per case on torch 2.13, against well under 1 ms of z3), and the
cases are independent, so ``prefetch_roots`` runs them on several cores. Exploration, proofs and reports stay
in the calling process and in case order: a report is the same for every ``jobs``.

Workers are forked after one warm-up case, so each inherits the imported torch (and the dynamo modules
FakeTensorMode pulls in on first use) instead of paying for them again. All processes, the caller included,
take cases one at a time from a shared counter. A worker sends back its results pickled (``Trace`` records,
or whole case results); a worker that fails in any way only means the caller redoes its cases. Fork is used
only where it is safe by default (Linux); elsewhere ``jobs`` falls back to 1 unless asked for.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..contract.model import BoundCase
from ..kernel.sources import Kernel, NotApplicable
from .run import Failed, Finished, Guarded, Trace, trace_case

MIN_CASES = 8  # below this, a fork costs more than it saves


def auto_jobs() -> int:
    """Usable cores on Linux; 1 elsewhere (fork after the Objective-C runtime is loaded is unsafe on macOS)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return 1
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, 8))


def resolve_jobs(jobs: int) -> int:
    """``jobs`` as asked (0 means automatic), limited to what this platform can do."""
    if jobs <= 0:
        return auto_jobs()
    return jobs if hasattr(os, "fork") else 1


Root = Trace | NotApplicable

#: ``within(thunk)``: runs one item's work (``thunk()``) in a scope of the caller's, a time budget say
Within = Callable[[Callable[[], Any]], Any]
#: ``here(warm)``: the caller's own work while the workers start on the items, given the warm-up item's value
#: (absent: none, or it raised): a step that needs only that item, taken off the path of the items after it
Here = Callable[[dict[Any, Any]], None]
#: ``caught(exc)``: for an exception an item raised, the value delivered for the item instead (a record of a
#: time budget that ran out), or None to leave the item to the caller; it may raise, which stops the map
Caught = Callable[[Exception], Any]


def _root(kernel: Kernel, case: BoundCase, track_return: bool) -> Root:
    try:
        return trace_case(kernel, case, [], track_return=track_return)
    except NotApplicable as why:
        return why


def prefetch_roots(kernel: Kernel, cases: Sequence[BoundCase], jobs: int, *,
                   track_return: bool = False) -> dict[str, Root]:
    """case id -> the case's unassumed trace (or the NotApplicable it raised), for as many cases as the
    workers delivered. Empty when running in parallel would not pay. Other exceptions are left for the
    caller's own trace of that case to raise, in order."""
    return {k: root for k, (root, _) in prefetch_cases(kernel, cases, jobs, track_return=track_return).items()}


class NotDone:
    """``prefetch_cases``' ``also`` raised for this case: the caller runs it again, and sees what it raises."""


def prefetch_cases(kernel: Kernel, cases: Sequence[BoundCase], jobs: int, *, track_return: bool = False,
                   also: Callable[[BoundCase], Any] | None = None, within: Within | None = None,
                   caught: Caught | None = None, here: Here | None = None) -> dict[str, Any]:
    """``prefetch_roots``, and with each root ``also(case)`` (a step of the case that depends on no other case:
    the export-style run), or NotDone where it raised or the case is not applicable. ``within``, ``caught`` and
    ``here`` as for ``map_cases``: a case's time budget, say; a value ``caught`` gives comes back in the tuple's
    place."""
    def both(case: BoundCase) -> tuple[Root, Any]:
        root = _root(kernel, case, track_return)
        if also is None or isinstance(root, NotApplicable):
            return root, NotDone()
        try:
            return root, also(case)
        except Exception:  # noqa: BLE001 - the caller's own run of it raises it again, in order
            return root, NotDone()

    def valid(v: Any) -> bool:
        return (isinstance(v, tuple) and isinstance(v[0], (Finished, Guarded, Failed, NotApplicable))) or (
            caught is not None and not isinstance(v, tuple))

    return map_cases(both, cases, jobs, MIN_CASES, valid, within=within, caught=caught, here=here)


def map_cases(fn: Callable[[Any], Any], cases: Sequence[Any], jobs: int, min_cases: int = 2,
              valid: Callable[[Any], bool] = lambda v: True, key: Callable[[Any], Any] = lambda c: c.id,
              warm: bool = True, within: Within | None = None, caught: Caught | None = None,
              here: Here | None = None) -> dict[Any, Any]:
    """key(case) (the case id) -> fn(case), computed by ``jobs`` processes (this one included), for as many
    cases as succeeded; the caller computes the rest itself (and sees their exceptions). ``fn`` must be
    deterministic and its results picklable. Empty when parallel work would not pay. ``warm``: the first case
    is computed before forking (its lazy imports then happen once); off where the process is warm already.
    The items need not be cases (``key`` names them): a case's regions, say.

    ``within`` runs each item in every process (the case's time budget, whose timer rings in a worker too);
    ``caught`` turns an item's exception into its value. When ``caught`` raises in this process, the workers are
    killed and the exception goes to the caller: nothing keeps running, or hangs, behind it. ``here`` runs in
    this process once the workers are forked, before it takes items of its own (not at all where no worker
    would pay); what it raises goes to the caller, the workers killed."""
    jobs = resolve_jobs(jobs)
    if jobs <= 1 or len(cases) < max(min_cases, 2):
        return {}
    one = _item(fn, within, caught)
    out: dict[Any, Any] = {}
    if warm:
        try:
            got = one(cases[0])  # warm-up: lazy imports happen once, here, before forking
        except Exception:  # noqa: BLE001 - the caller runs this case again and reports what it raises
            if caught is not None:  # ``caught`` stopped the map
                raise
            return {}
        if got is not _NONE:
            out[key(cases[0])] = got
    rest = list(cases[1:] if warm else cases)
    # cases are handed out one at a time from a shared counter: their costs differ by orders of magnitude
    # (a skipped case, a guard-free one, one explored through 40 traces), so fixed shares would idle
    import multiprocessing

    try:
        counter = multiprocessing.get_context("fork").Value("l", 0)
    except (OSError, ValueError, ImportError):  # no POSIX semaphores here: no workers
        return {}

    def take() -> Any:
        with counter.get_lock():
            i = counter.value
            counter.value = i + 1
        return rest[i] if i < len(rest) else None

    children = [child for _ in range(jobs - 1) for child in [_fork_worker(one, take, key)] if child is not None]
    try:
        if here is not None:
            here(dict(out))
        while (case := take()) is not None:
            try:
                value = one(case)
            except Exception:  # noqa: BLE001 - left for the caller to re-raise in order
                if caught is not None:  # ``caught`` stopped the map
                    raise
                continue
            if value is not _NONE and valid(value):
                out[key(case)] = value
        while children:
            pid, fd = children[0]
            out.update({k: v for k, v in _collect(pid, fd).items() if v is not _NONE and valid(v)})
            children.pop(0)
    finally:
        for pid, fd in children:  # stopped early (``caught`` raised, an interrupt): no worker outlives the map
            _kill(pid, fd)
    return out


_NONE = ("shapecheck.trace.parallel: no value",)  # an item ``caught`` left to the caller (compared by identity)


def _item(fn: Callable[[Any], Any], within: Within | None, caught: Caught | None) -> Callable[[Any], Any]:
    """One item's work as every process runs it: ``fn`` in ``within``, its exception given to ``caught``
    (_NONE: none delivered; the exception itself where there is no ``caught``)."""
    def one(case: Any) -> Any:
        try:
            return within(lambda: fn(case)) if within is not None else fn(case)
        except Exception as exc:
            if caught is None:
                raise
            value = caught(exc)
            return _NONE if value is None else value

    return one


def _kill(pid: int, fd: int) -> None:
    from .isolate import stop

    try:
        os.close(fd)
    except OSError:
        pass
    stop(pid)


def _fork_worker(fn: Callable[[Any], Any], take: Callable[[], Any],
                 key: Callable[[Any], Any]) -> tuple[int, int] | None:
    """A forked process computing fn over the cases ``take`` hands it; (pid, read end of its pipe), or None
    if none started."""
    try:
        r, w = os.pipe()
    except OSError:
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return None
    if pid == 0:  # the worker: never returns into the caller's stack
        from .. import progress

        progress.sink = None  # a supervised child's pipe is its own: a worker writing to it would garble it
        code = 0
        try:
            os.close(r)
            results: dict[Any, Any] = {}
            while (case := take()) is not None:
                try:
                    value = fn(case)
                except Exception:  # noqa: BLE001 - the parent runs it again and sees the error
                    continue
                if value is not _NONE:
                    results[key(case)] = value
            data = _dumps(results)
            with os.fdopen(w, "wb") as f:
                f.write(data)
        except BaseException:  # noqa: BLE001 - whatever happens, the parent falls back
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def _dumps(results: dict[Any, Any]) -> bytes:
    """Pickle what pickles; a result that does not (an exotic frame) is simply not sent."""
    try:
        return pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - pickling can raise anything an object's __reduce__ raises
        good = {}
        for k, v in results.items():
            try:
                pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - as above; the parent traces this case itself
                continue
            good[k] = v
        return pickle.dumps(good, protocol=pickle.HIGHEST_PROTOCOL)


def _collect(pid: int, fd: int) -> dict[Any, Any]:
    try:
        with os.fdopen(fd, "rb") as f:
            data = f.read()
    except OSError:
        data = b""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        status = 1
    if status != 0 or not data:
        return {}
    try:
        got = pickle.loads(data)  # noqa: S301 - our own child's output, through a private pipe
    except Exception:  # noqa: BLE001 - a truncated or odd pickle only costs time: the parent redoes the cases
        return {}
    return got if isinstance(got, dict) else {}
