"""The export-style run's findings (SC022, and the kernel's own branches and raises seen only with backed sizes:
``helper_guards``) joined to a case's: each one the case's trace did not report already, under any rule."""

from __future__ import annotations

from ..contract.model import BoundCase
from ..findings import Finding
from ..kernel.sources import Kernel
from ..logic import expr as E
from ..logic.solver import Solver
from ..rules import RULES, RuleCode, Severity


def exported_findings(kernel: Kernel, case: BoundCase, solver: Solver, ahead: list[Finding] | None,
                      findings: list[Finding]) -> list[Finding]:
    """The export-style run's findings (``helper_guards``; ``ahead``: made in a worker ahead of the case's turn)
    that the case's ``findings`` do not report already."""
    from .helper_guards import helper_guards

    run = helper_guards(kernel, case, solver) if ahead is None else ahead
    return [v for v in run if _new(v, findings) and not _seen_guard(v, findings) and not _seen_raise(v, findings)]


def _seen_guard(v: Finding, found: list[Finding]) -> bool:
    """An SC022 guard that the trace already reported (either side of it, under any rule): a C++ kernel's guard
    reached through a sub-op's Python code is the kernel's in the trace and torch's in the export run, and a
    helper's guard the trace saw (SDPA's ``E == Ev``) is ``E != Ev`` where export's example takes the other side."""
    if v.code not in (RuleCode.GUARD_IN_TORCH_HELPER, RuleCode.GUARD_ON_DYNAMIC_DIM) or v.node is None:
        return False
    texts = {E.to_text(v.node), E.to_text(E.negate(v.node))}
    if any(f.node is not None and E.to_text(f.node) in texts for f in found):
        return True
    # the kernel's own branch the export-style run saw (SC001 there): the trace saw it too where it reported a guard
    # at that line (``int(x.size(0))``: SC003 ``N`` in the trace, ``N == 2`` with backed sizes)
    line = (v.location.file, v.location.line) if v.location else None
    return v.code is RuleCode.GUARD_ON_DYNAMIC_DIM and line is not None and any(
        f.location is not None and (f.location.file, f.location.line) == line and f.code in _GUARD_CODES for f in found)


#: the rules of a guard the kernel installs on the dims, as the trace reports them
_GUARD_CODES = frozenset({RuleCode.GUARD_ON_DYNAMIC_DIM, RuleCode.VALUE_SPECIALIZATION, RuleCode.ASSERT_NARROWS_RANGE,
                          RuleCode.GUARD_TORCH_CANNOT_DISCHARGE})


def _seen_raise(v: Finding, found: list[Finding]) -> bool:
    """The export-style run's raise (SC007) where the trace raised too, or where the case has a finding at the
    line that raised: a ``torch._check`` the trace reported as SC004 fails at export's example too, one defect."""
    if v.code is not RuleCode.KERNEL_ERROR:
        return False
    at = (v.location.file, v.location.line) if v.location else None
    # an inconclusive finding there (the trace's raise that did not reproduce on static sizes, now SC005) is no
    # defect reported: the export-style run's raise is (hunt 39: a data-dependent index under export)
    return any(f.code is RuleCode.KERNEL_ERROR or (at is not None and f.location is not None
                                                   and (f.location.file, f.location.line) == at
                                                   and RULES[f.code].severity is Severity.ERROR) for f in found)


def _new(v: Finding, found: list[Finding]) -> bool:
    loc = (v.location.file, v.location.line) if v.location else None
    return all((f.code, f.expr, (f.location.file, f.location.line) if f.location else None) != (v.code, v.expr, loc)
               for f in found)
