"""A kernel's caveats (``Kernel.caveats``: a ``--meta-source`` file's helper or constant that the installed torch's
stands in for): the kernel verified is not the file's, so nothing is proved of it, and nothing refuted either."""

from __future__ import annotations

from dataclasses import replace

from ..findings import Finding
from ..kernel.sources import Kernel
from ..rules import RuleCode


def with_caveats(kernel: Kernel, violations: list[Finding]) -> list[Finding]:
    """``violations`` with each caveat an inconclusive finding, and, where there is one, every other finding
    inconclusive too: a failure of the installed torch's stand-in is not the file's (hunt 58: a file's constant
    bound otherwise in torch gave an SC002 of torch's value)."""
    if not kernel.caveats:
        return violations
    names = ", ".join(loc.function for loc, _ in kernel.caveats)
    out = [v if v.code is RuleCode.INCONCLUSIVE else replace(
        v, code=RuleCode.INCONCLUSIVE, fix="", message=f"{v.code} found with the installed torch's {names} standing in "
        f"for the file's (see the caveat): not reported as a violation. The analysis said: {v.message}")
        for v in violations]
    return out + [Finding(code=RuleCode.INCONCLUSIVE, case="*", expr=f"def {loc.function}", location=loc,
                          counterexample={}, message=why) for loc, why in kernel.caveats]
