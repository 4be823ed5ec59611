"""Each SC018 of the symbolic trace confirmed on concrete sizes, as FakeTensorMode runs the kernel there.

The unbacked trace's strides may be what torch's layout helpers answer when they cannot decide a size condition
(``guard_or_false`` and the like give their fallback: ``suggest_memory_format``), or what a kernel gives where a
size has no hint (FakeTensor's convolution rule re-lays its meta's outputs out only where every size has one:
``has_guarding_hint``), where the same kernel on concrete sizes, and strict export with its example, take the layout
the sizes give (hunt 30: every layout of ``aten::convolution`` with a channels-last input read as contiguous; hunt
68: a ``convolution_backward`` meta whose own strides were wrong, right only through that rule). The SC005 says which
of the two the trace shows. An SC018 stands where the kernel, run at its counterexample (or at the path's least
point with every dim at 2 or more), returns strides the contract's layout does not give: a real counterexample.
Where neither run does, the trace's strides are not the kernel's at any point tried: nothing is proved of the
layout (SC005), and no counterexample is claimed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ..contract.model import BoundCase
from ..findings import Finding, PathId
from ..kernel.sources import Kernel
from ..logic import expr as E
from ..logic.solver import Solver
from ..rules import RuleCode
from ..trace.run import Fallback
from .least import runnable, wide_point
from .obligations import Leaf
from .other_side import strides_differ


def confirmed_layouts(kernel: Kernel, case: BoundCase, findings: list[Finding], solver: Solver,
                      leaves: Sequence[Leaf] = ()) -> tuple[list[Finding], set[PathId]]:
    """``findings`` with each SC018 checked on concrete sizes (module doc): kept, moved to a point where the
    kernel's strides break the contract, or SC005; and the paths of those that became SC005. ``leaves``: the
    case's finished traces (what torch's layout logic could not decide in them names the SC005's reason)."""
    asked = [f for leaf in leaves for f in leaf.trace.layout_fallbacks]
    out = [_confirmed(kernel, case, v, solver, asked) if v.code is RuleCode.OUTPUT_LAYOUT_MISMATCH else v
           for v in findings]
    unproved = {w.path for v, w in zip(findings, out) if w is not v and w.code is RuleCode.INCONCLUSIVE
                and w.path is not None}
    return out, unproved


def _confirmed(kernel: Kernel, case: BoundCase, v: Finding, solver: Solver, asked: Sequence[Fallback] = ()
               ) -> Finding:
    m = re.match(r"output (\d+) ", v.expr)
    path = next((p for p in case.paths if v.path is not None and p.pid == v.path), None)
    if m is None or path is None or not v.counterexample:
        return v
    j = int(m.group(1))
    spec = path.specs[j] if j < len(path.specs) else None
    if spec is None or spec.strides is None:
        return v
    dims = case.point_dims
    tried: list[dict[str, int]] = []
    for point in _points(case, path.when, v.counterexample, dims, solver):
        seen = _strides_at(kernel, case, j, point)
        if seen is None:
            return v  # not run there (an error, a data-dependent size): the trace's finding stands
        tried.append(point)
        want = strides_differ(spec, seen[0], seen[1], point)
        if want is not None:
            first = {d: v.counterexample.get(d) for d in dims}
            if point == first:
                return v
            # the finding moves to this point: the message names the trace's point, which it no longer shows
            was = ", ".join(f"{k}={x}" for k, x in first.items())
            there = (f"at the trace's counterexample ({was}) the kernel on concrete sizes keeps the contract's "
                     "layout" if tried[0] == first else f"the trace's counterexample ({was}) is too large to run "
                     "on concrete sizes")
            at = ", ".join(f"{k}={x}" for k, x in point.items())
            return replace(v, counterexample=point, message=f"{v.message}; {there}; at {at}, the counterexample "
                           f"shown, it returns strides {seen[0]} where the layout gives {want}")
    shown = "; ".join(", ".join(f"{k}={x}" for k, x in p.items()) for p in tried)
    if asked:
        fb = asked[0]
        at = f" at {fb.loc.short}" if fb.loc is not None else ""
        why = (f"the trace's strides are torch's layout helpers' answers where they cannot decide a size condition "
               f"(guard_or_false: {fb.raw}{at}, {len(asked)} in all), not the kernel's there")
    else:  # hunt 68: a meta whose strides are wrong, re-laid out by FakeTensor's convolution rule where sizes have hints
        why = ("the trace asked torch's layout logic nothing it could not decide, so those strides are the kernel's "
               "own under unbacked sizes; the kernel torch runs lays its outputs out otherwise where every size has a "
               "hint (as at concrete sizes, and in torch.export's trace of its example), so the contract's layout "
               "holds there and not where a size is unbacked (a size made from data)")
    return replace(v, code=RuleCode.INCONCLUSIVE, counterexample={}, fix="",
                   message=f"{v.message}, in the symbolic trace; but the kernel run on concrete sizes, as "
                   f"FakeTensorMode runs it, returns the contract's strides at {shown}: {why}; so the layout is not "
                   "proved, and no counterexample is claimed")


def _points(case: BoundCase, when: E.Node, counterexample: dict[str, int], dims: list[str],
            solver: Solver) -> list[dict[str, int]]:
    """The finding's counterexample, then the path's least point with every dim at 2 or more."""
    out = []
    first = {d: counterexample[d] for d in dims if d in counterexample}
    if len(first) == len(dims) and runnable(first):
        out.append(first)
    wide = wide_point(solver, [case.domain, when], dims)
    return out + [wide] if wide is not None and wide not in out else out


def _strides_at(kernel: Kernel, case: BoundCase, j: int, point: dict[str, int]) -> tuple[tuple[int, ...], int] | None:
    """Output ``j``'s strides and element count with the kernel run at ``point`` on concrete sizes; None where it
    raised, returned no tensor there, or its inputs cannot be made."""
    from .replay import run_concrete

    run = run_concrete(kernel, case, point)
    if run is None or run.error is not None or j >= len(run.layouts) or run.layouts[j] is None:
        return None
    _, strides, numel = run.layouts[j]  # type: ignore[misc]
    return strides, numel
