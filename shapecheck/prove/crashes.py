"""A verification that survives a kernel that crashes its process (issue 22: no crash loses a run).

The run goes to a supervised child (``trace.isolate``) that reports each case as it finishes. When the child
dies of a signal, the case it was in gets a finding of its own and a new child checks the cases not done yet;
a crash between cases (the work run ahead in parallel, torch.export's confirmation) skips that step, with a
finding that says so. Every other case reports as it would have.
"""

from __future__ import annotations

import functools
import linecache
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..findings import Finding, SourceLoc, Verdict
from ..kernel.sources import Kernel
from ..logic import expr as E
from ..result.report import CRASHED, CaseResult, Report
from ..rules import RuleCode
from ..trace.isolate import Died, supervised


@dataclass
class Resume:
    """What a new child takes over from those that crashed: the cases done (and those that crashed, with their
    findings), the steps between cases to skip, and the findings of the crashes there."""

    results: dict[str, tuple[CaseResult, list[Finding]]] = field(default_factory=dict)
    skip: set[str] = field(default_factory=set)
    findings: list[Finding] = field(default_factory=list)


#: the channel of a supervised child's progress messages (tuples)
Send = Callable[[tuple], None]


def run_isolated(run: Callable[[Resume, Send], Report], kernel: Kernel,
                 on_case: Callable[[str], None] | None) -> Report:
    """``run(resume, send)`` in a supervised child, again after each crash with what was done; its report. Each
    crash finishes a case or leaves out a step, else ``_Seen.resumed`` raises: the restarts end."""
    resume, start = Resume(), time.perf_counter()
    while True:
        seen = _Seen(on_case)
        out = supervised(functools.partial(run, resume), seen.message, one_thread=False)  # fake kernels only
        if not isinstance(out, Died):
            return out if not resume.results else replace(out, seconds=time.perf_counter() - start)
        resume = seen.resumed(resume, out, kernel)


class _Seen:
    """The child's progress as its messages arrive: ("case", id) as a case starts, ("done", id, result, found)
    as it ends, ("stage", name, quiet) and ("end", name) around a step between cases. A crash in a quiet step
    (work done ahead of the cases' turns, which they redo in turn) is no finding of its own."""

    def __init__(self, on_case: Callable[[str], None] | None):
        self.on_case = on_case
        self.results: dict[str, tuple[CaseResult, list[Finding]]] = {}
        self.case: str | None = None
        self.region: list[E.Node] | None = None  # the assumptions of the case's trace under way
        self.stage: str | None = None
        self.quiet = False

    def message(self, m: tuple) -> None:
        if m[0] == "case":
            self.case, self.region = m[1], None
            if self.on_case is not None:
                self.on_case(m[1])
        elif m[0] == "trace" and m[1] == self.case:
            self.region = m[2]
        elif m[0] == "done":
            self.results[m[1]] = (m[2], m[3])
            self.case = None
        elif m[0] == "stage":
            self.stage, self.quiet = m[1], m[2]
        elif m[0] == "end":
            self.stage = None

    def resumed(self, resume: Resume, died: Died, kernel: Kernel) -> Resume:
        results = {**resume.results, **self.results}
        if self.case is not None:
            found = crash_finding(self.case, died, kernel, "while this case was checked" + _tracing(self.region),
                                  tracing=self.region is not None)
            verdict = Verdict.ERROR if found.code is RuleCode.INTERNAL_ERROR else Verdict.FAIL
            results[self.case] = (CaseResult(self.case, verdict, skipped=f"{CRASHED}the process died of {died.name()}"),
                                  [found])
            return replace(resume, results=results)
        if self.stage is not None:
            step = [] if self.quiet else [crash_finding("*", died, kernel, f"during {self.stage}, which is left out")]
            return Resume(results, resume.skip | {self.stage}, [*resume.findings, *step])
        if len(results) > len(resume.results):
            return replace(resume, results=results)
        raise RuntimeError(f"the verification's process died of {died.name()} outside any case: "
                           f"{died.dump.strip()[-600:] or 'no stack was written'}")


def _tracing(region: list[E.Node] | None) -> str:
    """Where in the case the crash came: the region whose trace was under way (its assumptions)."""
    if region is None:
        return ""
    text = " and ".join(E.to_text(n) for n in region)
    return f", tracing the kernel on the region {text}" if text else ", tracing the kernel on the whole domain"


def crash_finding(case: str, died: Died, kernel: Kernel, when: str, *, tracing: bool = False) -> Finding:
    """The finding of a crash: the kernel's (SC007, at its innermost line on the crashed stack) when the kernel
    was running, else shapecheck's own (SC023). ``tracing``: a trace of the kernel was under way; a signal
    that leaves no stack (SIGTERM, SIGKILL: the kernel's ``os.kill``, or from outside) then ended the kernel's
    run, and is the kernel's, at its ``def``."""
    own = kernel.located_in
    at = next((SourceLoc(f, n, fn, linecache.getline(f, n).strip()) for f, n, fn in died.frames() if f in own), None)
    name = died.name()
    if at is None and tracing and not died.frames():
        return Finding(code=RuleCode.KERNEL_ERROR, case=case, expr=name, location=kernel.definition, counterexample={},
                       message=f"the process died of {name} {when}, with no stack written (a signal faulthandler "
                       "does not catch: sent by the kernel, or from outside the run): nothing is known about its "
                       "sizes", traceback=died.dump)
    if at is None:
        return Finding(code=RuleCode.INTERNAL_ERROR, case=case, expr=name, counterexample={},
                       message=f"the process died of {name} {when}, outside the kernel's code (a bug in shapecheck "
                       "or torch, please report it): nothing is known about it; faulthandler's stack is in the "
                       "JSON report", traceback=died.dump)
    return Finding(code=RuleCode.KERNEL_ERROR, case=case, expr=name, location=at, counterexample={},
                   message=f"the kernel crashed the process ({name}) {when}: the kernel, or torch's C++ under it, "
                   "cannot run here, and neither can torch.export; no sizes are known (the other cases ran in a "
                   "new process). SHAPECHECK_ISOLATE=0 with --case runs it in one process, for a debugger",
                   traceback=died.dump)
