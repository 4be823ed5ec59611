"""The other side of the kernel's own ``guard_or_false``/``guard_or_true``, run on concrete sizes.

Under unbacked sizes torch answers such a call with its fallback and the trace goes on; a trace whose fallback
torch.export settles the same way (its sizes start at 2) stands for its whole region (``explore.unsettled_fallback``).
But where the condition really holds the other way (``M == 0`` at M = 0), FakeTensorMode on concrete sizes, as
meta-device model init, ``opcheck`` and ``torch.compile``'s first (static) compile run the kernel, takes the other
branch, which no trace followed. Each such side that the leaf's region reaches is run at its least point on
concrete sizes: an output there that differs from the contract is SC002 (its shape) or, where an output table
states them, SC017 (its dtype) or SC018 (its strides), and a raise SC007, at that point and the line that asked. A kernel whose two branches agree costs one static run per fallback side.

Where a path's output table states strides, the answers of torch's layout logic (contiguity, strides, memory
format: ``_prims_common``, ``_prims``) are run on their other side too, the simplest condition first: the trace's
output strides are what those answers give, and the kernel on concrete sizes where the condition holds the other
way may lay its output out otherwise (``clone`` of an expanded channels_last input at one channel, hunt 30).
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from typing import cast

from ..contract.model import BoundCase, BoundPath
from ..contract.outputs import BoundOutput
from ..findings import Finding, PathId
from ..kernel.sources import Kernel
from ..logic import expr as E
from ..logic.solver import Solver, restrict
from ..rules import PLAIN_SIZE_FIX, RuleCode
from ..trace.run import Fallback, Finished
from .least import runnable, spread_point, wide_point
from .obligations import Leaf


def other_sides(kernel: Kernel, case: BoundCase, leaves: list[Leaf], solver: Solver, eras: tuple[str, ...],
                findings: list[Finding]) -> list[Finding]:
    """SC002/SC007 where a fallback's other side, run on concrete sizes, breaks the contract; [] otherwise."""
    # the arguments' dims, then those only the domain names (``Ci == C * r * r``'s C): an output formula names them
    # too, and a point without them cannot say what the contract wants there (hunt 54)
    dims = case.point_dims
    known = {(v.code, v.location.line if v.location else None) for v in findings}
    # an output whose shape a finding already says is wrong on a path: another side's run of it says no more (a
    # wrong shape's strides at a point where the two shapes coincide, the same bug at another size)
    wrong = {(v.path, int(m.group(1))) for v in findings if v.code is RuleCode.OUTPUT_SHAPE_MISMATCH
             and (m := re.match(r"output (\d+) ", v.expr)) is not None}
    # in every era of that path: the obligations report one finding where the eras' formulas agree (hunt 61: the
    # current era's same wrong output blamed on torch's layout answers "at E == 1", at the kernel's unsqueeze lines)
    wrong |= {(p.pid, j) for p in case.paths for path, j in list(wrong) if path is not None and p.pid.id == path.id}
    # likewise an output whose dtype a finding says is wrong on a path: the other side's same wrong dtype is that
    # finding again, not a branch's (a float64 statistic "at D == 1", hunt 49)
    wrong_dtype = {(v.path, int(m.group(1)), "dtype") for v in findings if v.code is RuleCode.OUTPUT_DTYPE_MISMATCH
                   and (m := re.match(r"output (\d+) dtype ", v.expr)) is not None}
    wrong_dtype |= {(v.path, int(m.group(1)), "strides") for v in findings if v.code is RuleCode.OUTPUT_LAYOUT_MISMATCH
                    and (m := re.match(r"output (\d+) strides ", v.expr)) is not None and " at " not in v.expr}
    out: list[Finding] = []
    seen: set[tuple[str, object]] = set()
    layouts = any(spec is not None and spec.strides is not None for p in case.paths for spec in p.specs)
    for leaf in leaves:
        asked = leaf.trace.fallbacks
        if layouts and isinstance(leaf.trace, Finished):  # the strides proved hold only where these answers do
            asked = asked + tuple(sorted((f for f in leaf.trace.layout_fallbacks if f.guard is not None),
                                         key=lambda f: len(E.to_text(cast(E.Node, f.guard)))))  # simplest first
        for fb in asked:
            if not (fb.own or fb in leaf.trace.layout_fallbacks) or fb.guard is None or fb.data_dependent:
                continue
            other = fb.guard if not fb.value else E.negate(fb.guard)
            key = (E.to_text(other), (fb.loc.file, fb.loc.line) if fb.loc else None)
            if key in seen:
                continue
            seen.add(key)
            for point in _points(solver, [case.domain, *leaf.pc, other], dims, E.free_names(other)):
                found = _at(kernel, case, point, eras, fb, other, wrong, solver, [case.domain, *leaf.pc], wrong_dtype)
                if found is not None and _its_own_assert(found, leaf.trace, known):
                    continue  # the kernel's torch._check failed there: SC004 at that line says so, not this side
                if found is not None:
                    if (found.code, fb.loc.line if fb.loc else None) not in known:
                        out.append(found)
                        known.add((found.code, fb.loc.line if fb.loc else None))
                    break
    return out


def _its_own_assert(found: Finding, trace: Finished, known: Set[tuple[RuleCode, int | None]]) -> bool:
    """A raise at a point where an assert of the trace's, at the line that raised, fails, and that assert is
    reported (SC004 at that line): the kernel's own check refused the point, whatever a fallback answered
    (max_unpool2d's ``C > 0`` at C = 0, where the layout logic's ``C < 2`` was the side run: hunt 53)."""
    if found.code is not RuleCode.KERNEL_ERROR or found.location is None or not found.counterexample:
        return False
    line = found.location.line
    if (RuleCode.ASSERT_NARROWS_RANGE, line) not in known:
        return False
    point = found.counterexample
    return any(a.loc is not None and a.loc.line == line and a.loc.file == found.location.file
               and a.relation is not None and E.free_names(a.relation) <= set(point)
               and E.evaluate(a.relation, point) is False for a in trace.asserts)


def _points(solver: Solver, conds: list[E.Node], dims: list[str], asked: set[str]) -> list[dict[str, int]]:
    """The side's least point, then its least point with every dim the condition does not name at 2 or more (as
    many as the domain allows), then with those apart from each other too (``spread_point``): a size of 1 elsewhere
    hides the strides a layout gives (a channels-last output of one channel is contiguous), equal sizes a swap;
    then, for each dim the condition names and bounds from above (``N <= 1``), the side's least point with that
    dim at its greatest: a fallback that is right at 0 and wrong at 1 is wrong at the side's far end. ``conds``: the
    region's conditions with the side's last."""
    model = solver.small_model(conds)
    least = restrict(model, dims) if model is not None else {}
    out = [least] if len(least) == len(dims) and runnable(least) else []
    wide = wide_point(solver, conds, dims, asked)
    out += [wide] if wide is not None and wide not in out else []
    spread = spread_point(solver, conds, dims, asked)  # and apart: a swap of two sizes shows
    out += [spread] if spread is not None and spread not in out else []
    for name in sorted(asked & set(dims)):
        top = solver.extreme(conds, name, lowest=False)
        if top is None or top == least.get(name) or top == solver.extreme(conds[:-1], name, lowest=False):
            continue  # the side does not bound it: its far end is the region's
        far = solver.small_model([*conds, E.Cmp("==", E.Var(name), E.Const(top))])
        point = restrict(far, dims) if far is not None else {}
        if len(point) == len(dims) and runnable(point) and point not in out:
            out.append(point)
    return out


def _at(kernel: Kernel, case: BoundCase, point: dict[str, int], eras: tuple[str, ...], fb: Fallback,
        other: E.Node, wrong: Set[tuple[PathId | None, int]] = frozenset(), solver: Solver | None = None,
        conds: Sequence[E.Node] = (), wrong_dtype: Set[tuple[PathId | None, int, str]] = frozenset()) -> Finding | None:
    """What the kernel does at ``point`` on the other side of ``fb`` (``conds``: the leaf's region, for the side
    the trace took)."""
    from .replay import run_concrete

    assert fb.guard is not None  # other_sides takes only fallbacks with a guard
    who = "the trace" if fb.own else "torch's layout logic (contiguity, strides, memory format), called there,"
    from .torch_decides import asked_by

    how = ("guard_size_oblivious's answer, as for sizes from 2" if asked_by(fb) == "guard_size_oblivious" else
           f"guard_or_{str(fb.value).lower()}'s fallback, or statically_known_{'false' if fb.value else 'true'}")
    side = (f"where {E.to_text(fb.guard)} is {not fb.value}: {who} took the answer {fb.value} that torch gives "
            f"when it cannot decide it ({how}), and FakeTensorMode on concrete sizes takes the other branch")
    at = ", ".join(f"{k}={v}" for k, v in point.items())
    run = run_concrete(kernel, case, point)
    if run is None:
        return None
    if run.error is not None:
        return _raised(kernel, case, point, fb, side, at, solver, conds)
    unknown: Finding | None = None
    for p in case.paths:
        if (eras and p.era not in eras) or E.evaluate(p.when, point) is not True:
            continue
        for j, want in enumerate(p.outputs):
            spec = p.specs[j] if j < len(p.specs) else None
            if spec is not None and spec.sizes and j < len(run.outputs) and (p.pid, j) not in wrong:
                found = _sized(case, p, j, spec, run.outputs[j], point, fb, other, side, at)
                if found is not None:
                    return found
                continue
            if want is None or j >= len(run.outputs) or (p.pid, j) in wrong:
                continue
            expected = E.evaluate(want, point)
            got = run.outputs[j]
            if isinstance(expected, tuple):
                expected = tuple(expected)
            if got is None:
                continue
            if _unknown_agrees(got, expected):  # nothing proved on this side: inconclusive, never a pass (unless
                # another output is wrong here: that one is reported)
                shown = _shape_text(got)
                unknown = unknown or Finding(
                    code=RuleCode.INCONCLUSIVE, case=case.id, path=p.pid, counterexample=point, location=fb.loc,
                    expr=f"output {j} = {shown} at {E.to_text(other)}, contract {E.to_text(want)}",
                    dims=tuple(sorted(E.free_names(other))),
                    message=f"output {j} is {shown} at {at}, where the contract's path {p.pid} says {expected}: ? is "
                            f"a size made from data, which the contract does not name (state it with `sizes` in an "
                            f"output table), {side}")
                continue
            if got == expected:
                spec = p.specs[j] if j < len(p.specs) else None
                found = _table(case, p, j, spec, run.layouts[j] if j < len(run.layouts) else None, point, fb,
                               other, side, at, {w for pid, k, w in wrong_dtype if (pid, k) == (p.pid, j)})
                if found is not None:
                    return found
                continue
            shown = _shape_text(got)
            return Finding(code=RuleCode.OUTPUT_SHAPE_MISMATCH, case=case.id, path=p.pid,
                           expr=f"output {j} = {shown} at {E.to_text(other)}, contract {E.to_text(want)}",
                           counterexample=point, location=fb.loc, dims=tuple(sorted(E.free_names(other))),
                           message=f"output {j} is {shown} at {at} but the contract's path {p.pid} says {expected}"
                                   f"{' (?: a size made from data)' if '?' in shown else ''}, {side}")
    return unknown


def _sized(case: BoundCase, p: BoundPath, j: int, spec: BoundOutput, got: object, point: dict[str, int],
           fb: Fallback, other: E.Node, side: str, at: str) -> Finding | None:
    """An output with data-dependent sizes on the other side: a size made from data (None) may be any value, a
    plain size is right only where the runtime's range holds that one value at ``point`` (SC020 else: a fake that
    says no row is kept where one may be), and every other size is the contract's (SC002 else)."""
    if spec.shape is None or not isinstance(got, tuple):
        return None
    ranges = {n: (E.evaluate(lo, point), E.evaluate(hi, point)) for n, lo, hi in spec.sizes}
    items = spec.shape.items
    dims = tuple(sorted(E.free_names(other)))
    if len(got) != len(items):
        return Finding(code=RuleCode.OUTPUT_SHAPE_MISMATCH, case=case.id, path=p.pid, counterexample=point,
                       expr=f"output {j} = {_shape_text(got)} at {E.to_text(other)}, contract {E.to_text(spec.shape)}",
                       location=fb.loc, dims=dims, message=f"output {j} is {_shape_text(got)} at {at} but the "
                       f"contract's path {p.pid} says {E.to_text(spec.shape)}, {side}")
    for i, (item, have) in enumerate(zip(items, got, strict=True)):
        if have is None:
            continue  # a size made from data: its range is the trace's to check
        if isinstance(item, E.Var) and item.name in ranges:
            lo, hi = ranges[item.name]
            if lo == hi == have:
                continue
            return Finding(code=RuleCode.DYNAMIC_SIZE_RANGE, case=case.id, path=p.pid, counterexample=point,
                           expr=f"output {j} size {item.name}: {have} at {E.to_text(other)}, contract {item.name} in "
                                f"[{lo}, {hi}]", location=fb.loc, dims=dims,
                           message=f"output {j}'s size {i} is {have} at {at}, not a data-dependent size: the runtime's "
                                   f"{item.name} ranges over [{lo}, {hi}] there, {side}", fix=PLAIN_SIZE_FIX)
        if E.free_names(item) & set(ranges):
            continue  # a formula of a data-dependent size: not compared on concrete sizes
        want = E.evaluate(item, point)
        if isinstance(want, int) and want != have:
            return Finding(code=RuleCode.OUTPUT_SHAPE_MISMATCH, case=case.id, path=p.pid, counterexample=point,
                           expr=f"output {j} = {_shape_text(got)} at {E.to_text(other)}, contract "
                                f"{E.to_text(spec.shape)}", location=fb.loc, dims=dims,
                           message=f"output {j} is {_shape_text(got)} at {at} but the contract's path {p.pid} says "
                                   f"{E.to_text(spec.shape)} (size {i}: {want}), {side}")
    return None


def _shape_text(got: object) -> str:
    """A run's output shape as the contract's are written, ``?`` for a size made from data: ``(?, 0)``."""
    if not isinstance(got, tuple):
        return str(got)
    return "(" + ", ".join("?" if x is None else str(x) for x in got) + ("," if len(got) == 1 else "") + ")"


def _unknown_agrees(got: object, expected: object) -> bool:
    """A shape with sizes made from data (None: the run's unbacked sizes) whose other sizes are the contract's: no
    mismatch shown at this point, nothing proved either (hunt 39 reported ``(None, 0)`` as a wrong shape)."""
    if not isinstance(got, tuple) or None not in got or not isinstance(expected, tuple) or len(got) != len(expected):
        return False
    return all(g is None or g == e for g, e in zip(got, expected, strict=True))


def _table(case: BoundCase, p: BoundPath, j: int, spec: BoundOutput | None, got: tuple[str, tuple[int, ...], int] | None,
           point: dict[str, int], fb: Fallback, other: E.Node, side: str, at: str,
           known: Set[str] = frozenset()) -> Finding | None:
    """SC017/SC018 where the other side's output ``j`` has the contract's shape but another dtype, or strides its
    layout does not give (``significant``: a size-1 dim's stride and an empty tensor do not count); not what a
    finding of the trace says of the output already (``known``: "dtype", "strides")."""
    if spec is None or got is None:
        return None
    dtype, strides, numel = got
    if spec.dtype is not None and dtype != spec.dtype and "dtype" not in known:
        return Finding(code=RuleCode.OUTPUT_DTYPE_MISMATCH, case=case.id, path=p.pid,
                       expr=f"output {j} dtype {dtype} at {E.to_text(other)}, contract {spec.dtype}",
                       counterexample=point, location=fb.loc, dims=tuple(sorted(E.free_names(other))),
                       message=f"output {j} has dtype {dtype} at {at} but the contract's path {p.pid} says "
                               f"{spec.dtype}, {side}")
    want = strides_differ(spec, strides, numel, point)
    if want is None or "strides" in known:
        return None
    return Finding(code=RuleCode.OUTPUT_LAYOUT_MISMATCH, case=case.id, path=p.pid,
                   expr=f"output {j} strides {strides} at {E.to_text(other)}, contract {want}",
                   counterexample=point, location=fb.loc, dims=tuple(sorted(E.free_names(other))),
                   message=f"output {j} has strides {strides} at {at} but the contract's path {p.pid} gives {want} "
                           f"({spec.layout}), {side}")


def strides_differ(spec: BoundOutput, strides: tuple[int, ...], numel: int, point: dict[str, int]
                   ) -> tuple[int, ...] | None:
    """The strides ``spec``'s layout gives at ``point`` where an output of ``numel`` elements with ``strides``
    breaks them (``significant``: a size-1 dim's stride and an empty tensor do not count); None where it keeps
    them or the table states no layout."""
    if spec.strides is None or numel == 0:
        return None
    want = tuple(int(cast(int, E.evaluate(s, point))) for s in spec.strides)
    sizes = E.evaluate(spec.shape, point) if spec.shape is not None else None
    if spec.match == "exact" or not isinstance(sizes, tuple):
        differs = want != strides
    else:  # significant (dense, its older name)
        differs = any(w != h for w, h, n in zip(want, strides, sizes) if n != 1)
    return want if differs else None


def _raised(kernel: Kernel, case: BoundCase, point: dict[str, int], fb: Fallback, side: str, at: str,
            solver: Solver | None = None, conds: Sequence[E.Node] = ()) -> Finding | None:
    """SC007 where the other side raises, also as torch runs fakes (``least.raised_as_torch_runs``), at the
    kernel's line that raised. Where the kernel raises the same way on the trace's side too, with the dims the
    condition does not name held (glu's reshape at a halved size of 0, whatever ``A0 == 1`` answered: hunt 39),
    the fallback is not the cause and the message does not say it is."""
    from .._torch import core as C
    from ..trace.run import first_line, own_code
    from .least import raised_as_torch_runs

    error = raised_as_torch_runs(kernel, case, point)
    if error is None:
        return None
    text = f"{type(error).__name__}: {first_line(error)}"
    loc = C.kernel_frame(C.exception_frames(error), own_code(kernel)) or fb.loc
    mate = _trace_side(solver, conds, fb, point) if solver is not None and fb.guard is not None else None
    again = raised_as_torch_runs(kernel, case, mate) if mate is not None else None
    if mate is not None and fb.guard is not None and again is not None and type(again) is type(error):
        where = ", ".join(f"{k}={v}" for k, v in mate.items())
        why = (f"and at {where} too, where {E.to_text(fb.guard)} is {fb.value}: the kernel raises on both sides "
               f"of that condition, which the symbolic trace went on past (its unbacked sizes took another path)")
    else:
        why = side
    return Finding(code=RuleCode.KERNEL_ERROR, case=case.id, expr=text, counterexample=point, location=loc,
                   message=f"the kernel raised {text} at {at}, a point of the contract's domain, {why}")


def _trace_side(solver: Solver, conds: Sequence[E.Node], fb: Fallback, point: dict[str, int]) -> dict[str, int] | None:
    """A point of the side the trace took (the fallback's answer holds) with every dim the condition does not name
    at ``point``'s value, or None."""
    assert fb.guard is not None
    taken = fb.guard if fb.value else E.negate(fb.guard)
    asked = E.free_names(fb.guard)
    held = [E.Cmp("==", E.Var(k), E.Const(v)) for k, v in point.items() if k not in asked]
    model = solver.small_model([*conds, taken, *held])
    mate = restrict(model, list(point)) if model is not None else None
    return mate if mate is not None and len(mate) == len(point) and runnable(mate) else None
