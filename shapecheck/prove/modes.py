"""Both kernels of an op whose ways of running differ (``kernel.sources.Kernel.other``): torch.export and
torch.compile run one kernel (the Python dispatcher on), plain FakeTensorMode another (meta-device model init,
FakeTensorProp, shape propagation): upsample_nearest2d's decomposition and its meta registration. Both are
verified against the contract; each finding says which one failed.

The verdict is that of the kernel torch.export runs, which is what a model that exports or compiles depends
on; plain FakeTensorMode's findings are shown and do not count (they are listed as accepted, with the reason)
unless ``--both-modes`` asks for both, when the worse verdict counts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..contract.model import Contract
from ..findings import Finding, Verdict
from ..kernel.sources import Kernel
from ..options import VerifyOptions
from ..result.report import KernelMode, Report

#: why a finding of plain FakeTensorMode's kernel does not count without --both-modes
NOT_COUNTED = ("found only in plain FakeTensorMode's kernel; the verdict is that of the kernel torch.export runs "
               "(--both-modes counts both)")

_WORSE = {Verdict.PASS: 0, Verdict.INCONCLUSIVE: 1, Verdict.FAIL: 2}


def prefix(kernel: Kernel) -> str:
    return f"plain FakeTensorMode ({kernel.name})"


def with_other_mode(report: Report, contract: Contract, kernel: Kernel, options: VerifyOptions,
                    run: Callable[[Contract, Kernel, VerifyOptions], Report]) -> Report:
    """``report`` (of ``kernel``) with the findings of ``kernel.other`` added, each naming its kernel."""
    other = kernel.other
    assert other is not None  # called only for a kernel that plain FakeTensorMode runs differently
    theirs = run(contract, other, replace(options, confirm_export=False))
    tagged = tuple(_tagged(v, other, options.both_modes) for v in theirs.violations)
    verdict = report.verdict
    if options.both_modes and _WORSE[theirs.verdict] > _WORSE[verdict]:
        verdict = theirs.verdict
    modes = (KernelMode(kernel.modes_text or "every way of running the op", kernel.name, report.verdict),
             KernelMode(other.modes_text, other.name, theirs.verdict))
    return replace(report, verdict=verdict, violations=report.violations + tagged, kernel_modes=modes,
                   seconds=report.seconds + theirs.seconds, notes=tuple(dict.fromkeys(report.notes + theirs.notes)))


def _tagged(v: Finding, kernel: Kernel, counted: bool) -> Finding:
    return replace(v, mode=kernel.mode or "fake", message=f"[{prefix(kernel)}] {v.message}",
                   suppressed=v.suppressed or ("" if counted else NOT_COUNTED))
