"""A runtime assert (or a range refinement, ``torch._check(M >= 1)``) that fails only where one of the kernel's own
``guard_or_false``/``guard_or_true`` answers was the other way.

Under unbacked sizes torch answers such a call with its fallback and the trace goes on; where torch.export settles
the call the same way (its sizes start at 2), the trace stands for its whole region (``explore.unsettled_fallback``).
An assert after the call may then fail only at points where the condition really holds the other way: torch's
storage-bounds check of ``as_strided_`` after ``guard_or_false(N == 0)`` fails at N = 0 (hunt 56: ``_linalg_eigh``
with N from 0). torch's layout logic's answers count too where the case states strides (its other sides are run
then). No run reaches that assert there: FakeTensorMode on concrete sizes takes the call's other branch
(``other_side.other_sides`` runs it), and the program torch.export makes carries the assert only where torch
cannot decide it under export's sizes. So the assert is proved where the fallbacks hold as torch assumed them
and torch decides it true; else it stands as refuted (SC004).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from .._torch import static as CS
from ..contract.model import BoundCase
from ..errors import ExprError
from ..kernel.sources import Kernel
from ..logic import expr as E
from ..logic.solver import Solver
from ..trace.run import Assert, Fallback
from .obligations import Discharged, Kind, Leaf, Obligation, Status, discharge
from .torch_decides import TorchView


def aside(ob: Obligation, d: Discharged, leaf: Leaf, case: BoundCase, solver: Solver, view: TorchView,
          kernel: Kernel | None = None) -> Discharged:
    """``d``, or PROVED where a refuted assert or range holds wherever the leaf's own fallbacks hold as assumed and
    torch decides it true under export's sizes (module doc). Where only torch's layout answers are the other way
    at the refuting point, the ``kernel`` must also return there on concrete sizes: a reshape's own check that
    fails on both sides of the answer (glu's ``A1 // 2 != 0`` at A1 = 0, hunt 39) stays refuted."""
    if ob.kind not in (Kind.ASSERT, Kind.RANGE) or d.status is not Status.REFUTED or not d.point:
        return d
    a = ob.source
    claim = (a.sym if a.sym is not None else a.expr) if isinstance(a, Assert) else ob.claim  # a range's: its bounds
    if claim is None:
        return d
    # the kernel's own answers; torch's layout logic's too where the case states strides, for then
    # ``other_side.other_sides`` runs their other side on concrete sizes as it runs the kernel's (hunt 65:
    # ``clone_preserve_strides``' storage length after ``guard_or_false(S * B == 0)``, whose as_strided assert
    # fails only at S = 0, made every *_scatter op with an empty dim inconclusive)
    layouts = any(spec is not None and spec.strides is not None for p in case.paths for spec in p.specs)
    own = _held(fb for fb in leaf.trace.fallbacks if fb.own)
    assumed = own + (_held(leaf.trace.layout_fallbacks) if layouts else [])
    if not any(_false_at(p, d.point) for p in assumed):
        return d  # the point lies where every fallback holds as torch assumed: a real failure of this path
    if not any(_false_at(p, d.point) for p in own) and not _returns_at(kernel, case, d.point):
        return d
    within = discharge(replace(ob, premises=(*ob.premises, *assumed)), case, solver)
    if within.status is not Status.PROVED:
        return d
    try:
        decided = view.decides(claim, list(leaf.pc))
    except CS.TorchCannotSay:
        return d
    return Discharged(Status.PROVED, by="fallbacks") if decided is True else d


def _held(fallbacks: Iterable[Fallback]) -> list[E.Node]:
    """Each fallback's condition as torch assumed it (those in the contract language, not about a size made
    from data)."""
    return [fb.guard if fb.value else E.negate(fb.guard) for fb in fallbacks
            if fb.guard is not None and not fb.data_dependent]


def _returns_at(kernel: Kernel | None, case: BoundCase, point: dict[str, int]) -> bool:
    """Whether the kernel returns at ``point`` on concrete sizes, under FakeTensorMode (False where it cannot be
    run there)."""
    from .replay import run_concrete

    if kernel is None or not all(d in point for d in case.point_dims):
        return False
    run = run_concrete(kernel, case, {d: point[d] for d in case.point_dims})
    return run is not None and run.error is None


def _false_at(cond: E.Node, point: dict[str, int]) -> bool:
    try:
        return E.evaluate(cond, point) is False
    except ExprError:
        return False
