"""``fuzz op`` with a kernel that crashes its process: the run goes to a supervised child (``trace.isolate``)
that names each example before it runs it, so that an example the kernel dies on (SIGSEGV, as a C++ kernel's
bug does) is the run's failure, SC007 with the example's sizes and a replay command, instead of a command
killed with no report. The search stops there: nothing after the crash is known.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..findings import Verdict
from ..rules import RuleCode
from ..trace.isolate import Died, can_isolate, load_crash, supervised
from .fuzz_report import Failure, FuzzReport

#: the function of ``runtime.check.Checker`` that runs the runtime's kernel: a crash under it is the runtime's
RUNTIME_STEP = "_runtime_checks"

#: set in a supervised child: called with ("start", op, contract, kernel, seed, replay, torch) as a run begins
#: and ("example", text, case, dims, seed, replay) before each example runs
sink: Callable[[tuple], None] | None = None


def tell(message: tuple) -> None:
    if sink is not None:
        sink(message)


def crash_safe(run: Callable[[], FuzzReport]) -> FuzzReport:
    """``run()`` in a supervised child where the platform allows: its report, or, when the kernel crashed the
    child, a failing report whose one failure is the example it crashed on."""
    if not can_isolate():
        return run()
    seen: list[tuple] = []
    start = time.perf_counter()

    def child(send: Callable[[tuple], None]) -> FuzzReport:
        global sink
        sink = send
        return run()

    out = supervised(child, seen.append)
    if not isinstance(out, Died):
        return out
    return _crashed(seen, out, time.perf_counter() - start)


def _crashed(seen: list[tuple], died: Died, seconds: float) -> FuzzReport:
    starts = [m for m in seen if m[0] == "start"]
    examples = [m for m in seen if m[0] == "example"]
    if not starts or not examples:  # died before its first example (loading the kernel): nothing to name
        raise load_crash(died)
    _, op, contract, kernel, seed, replay_run, torch = starts[-1]
    _, text, case, dims, ex_seed, replay = examples[-1]
    name = died.name()
    if any(fn == RUNTIME_STEP for _, _, fn in died.frames()):
        # the runtime's kernel died, not the meta kernel (hunt 59: _weight_norm_interface's eager SIGFPE at a size
        # of 0 blamed on a meta kernel that returns there), as ``ref check`` says it (SC014)
        failure = Failure("runtime", text, case, dims, ex_seed, {}, {}, "the runtime returns its outputs or raises",
                          f"the process died of {name}",
                          f"the runtime crashed the process ({name}) on this example instead of running it or "
                          "raising: the op's kernel, or torch's C++ under it; the search stopped at it (nothing after "
                          "it is known)", replay, RuleCode.RUNTIME_REJECTS)
    else:
        failure = Failure("kernel-error", text, case, dims, ex_seed, {}, {}, "the kernel returns its outputs",
                          f"the process died of {name}",
                          f"the kernel crashed the process ({name}) on this example: the kernel, or torch's C++ under "
                          "it, cannot run here; the search stopped at it (nothing after it is known)", replay,
                          RuleCode.KERNEL_ERROR)
    return FuzzReport(op, contract, kernel, Verdict.FAIL, seed, len(examples), 0, seconds, {"other": round(seconds, 4)},
                      (failure,), {}, {}, "not reported: the run's process died at the example below", "", replay_run,
                      torch=torch)
