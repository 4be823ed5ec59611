"""Checks 2 and 3 of a fuzz example, against the op's runtime reference (``runtime.reference_for``): dispatch
(SC010), whether the runtime accepts the input (SC014), output 0 against the meta kernel's (SC011: shape;
dtype and density too) and the runtime's values against the float64 math (SC012), with the rule codes,
tolerances, quirks and contract suppressions ``ref check`` uses.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..contract.model import BoundPath
from ..search.examples import Example
from .fuzz_report import density, describe, dtype_name
from .reference import Unmodelled, accepted_by, compare_values

if TYPE_CHECKING:
    from .check import Checker
    from .check import _Fail as Fail


def runtime_checks(checker: Checker, ex: Example, era: str, holding: list[BoundPath], args: Mapping[str, Any],
                   outs: list[Any], fail: Fail) -> None:
    """Checks 2 and 3 in one era of the runtime, in ``ref check``'s order: dispatch (SC010), the runtime
    accepts the input (SC014), output 0 (SC011), values (SC012). ``outs``: the meta kernel's outputs. A
    reference that is the real op (``compares_all_outputs``) compares every output, strides included. A
    deviation the contract accepts with a ``[[suppress]]`` of that rule, as ``ref check`` reads it, is a note."""
    ref, ids = checker.reference, [p.id for p in holding]
    out0 = outs[0] if outs else None
    try:
        rpath, real, error = _run(checker, args, era)
    except Unmodelled as err:
        checker.notes[f"{era}: not modelled by the reference: {str(err).splitlines()[0][:80]}"] += 1
        return
    pid = None if rpath is None else ref.path_id(rpath)
    if rpath is not None:
        fail.runtime_paths[era] = rpath
    mismatch = f"{era}: the runtime takes {rpath}, the contract says {'/'.join(ids)}"
    if ids and pid is not None and pid not in ids and not _accepted(checker, "SC010", ids, ex, mismatch):
        raise fail("runtime", "/".join(ids), str(pid), f"the runtime ({era}) takes {rpath}; the contract's "
                   f"`when` names {'/'.join(ids)}", "SC010")
    if error is not None:
        what = f"{era}: the runtime rejects the input ({type(error).__name__})"
        claim = [pid] if pid in ids else ids
        if ids and not _accepted(checker, "SC014", claim, ex, f"{what} on contract path {'/'.join(claim)}"):
            where = f"{era}, {rpath}" if rpath is not None else ref.describe(())
            raise fail("runtime", "outputs", type(error).__name__, f"the runtime ({where}) raises "
                       f"{type(error).__name__} on an input contract path {'/'.join(claim)} admits: "
                       f"{str(error).strip().splitlines()[0][:200]}", "SC014") from error
        if not ids:
            checker.notes[what] += 1
        return
    if not ids:
        checker.notes[f"{era}: the runtime takes {rpath} where no contract path holds"] += 1
    ref0 = real[0]
    if getattr(ref, "compares_all_outputs", False):
        _all_outputs(checker, ex, ids, outs, real, fail)
        return
    want = f"{describe(ref0)} {dtype_name(ref0)} {density(ref0)}"
    got = f"{describe(out0)} {dtype_name(out0)} {density(out0)}"
    if want != got:
        shape = describe(ref0) != describe(out0)
        code = "SC011" if shape and ids else None
        if shape and _accepted(checker, "SC011", [pid], ex,
                               f"{era}: the runtime's output 0 on {rpath} differs from the contract"):
            return
        raise fail("runtime", want, got, f"output 0 of the meta kernel is {got}; the runtime ({era}, "
                   f"{rpath}) returns {want}", code)
    _values(checker, ex, era, rpath, args, ref0, fail)


def _all_outputs(checker: Checker, ex: Example, ids: list[str], outs: list[Any], real: tuple[Any, ...],
                 fail: Fail) -> None:
    """Every output of the meta kernel against the real kernel's: shape (SC011 for output 0 on a contract
    path), dtype and significant strides (SC015), as torch's fake-tensor cross-check compares them."""
    from .reference import outputs_differ

    ref = checker.reference
    if len(outs) != len(real):
        raise fail("runtime", f"{len(real)} outputs", f"{len(outs)} outputs", f"the meta kernel returns "
                   f"{len(outs)} outputs, the runtime ({ref.describe(())}) {len(real)}")
    for j, (m, r) in enumerate(zip(outs, real)):
        why = outputs_differ(m, r)
        if why is None:
            continue
        shape = why.startswith("shape")
        code = "SC011" if shape and ids and j == 0 else None
        if code and _accepted(checker, "SC011", ids, ex, f"the runtime's output {j} differs from the contract"):
            continue
        if code is None and _accepted(checker, "SC015", ids, ex, f"output {j} of the meta kernel differs "
                                                                  "from the runtime's"):
            continue
        raise fail("runtime", _layout(r), _layout(m), f"output {j} of the meta kernel has {why} "
                   f"({ref.describe(())})", code)


def _layout(x: Any) -> str:
    if not hasattr(x, "stride"):
        return describe(x)
    return f"{describe(x)} {dtype_name(x)} strides {tuple(x.stride())}"


def _run(checker: Checker, args: Mapping[str, Any], era: str) -> tuple[str | None, Any, BaseException | None]:
    """(the runtime's path, its outputs, None), or (its path or None, None, what it raised where the real
    op raises too); ``Unmodelled`` propagates."""
    ref, rpath = checker.reference, None
    start = time.perf_counter()
    try:
        rpath = ref.select_path(args, era)
        return rpath, tuple(ref.run(args, era, rpath)), None
    except ref.rejects as err:
        return rpath, None, err
    finally:
        checker._time(ref.name, start)


def _values(checker: Checker, ex: Example, era: str, rpath: str, args: Mapping[str, Any], ref0: Any,
            fail: Fail) -> None:
    """Check 3: the runtime's output 0 against the float64 math, within the dtype's tolerance (SC012)."""
    ref = checker.reference
    start = time.perf_counter()
    ref_math = ref.expected(args, era, rpath)
    checker._time("math", start)
    if ref_math is None:
        return
    accept = f"{era}: the runtime's values on {rpath} differ from the math"
    if ref_math.numel() != ref0.numel():
        if not _accepted(checker, "SC012", [ref.path_id(rpath)], ex, accept):
            raise fail("values", f"{tuple(ref_math.shape)} values", describe(ref0), f"the runtime ({era}, "
                       f"{rpath}) returns {ref0.numel()} values, the math {ref_math.numel()}", "SC012")
        return
    atol, rtol = ref.tolerance(args, dtype_name(ref0))
    bad = compare_values(ref0, ref_math, atol, rtol)
    if bad is not None and not _accepted(checker, "SC012", [ref.path_id(rpath)], ex, accept):
        raise fail("values", f"{bad.want:.6g} (math)", f"{bad.got:.6g}",
                   f"the runtime ({era}, {rpath}) differs from the math at index {bad.index} "
                   f"({bad.bad} of {bad.total} values; atol={atol}, rtol={rtol})", "SC012")


def _accepted(checker: Checker, rule: str, path_ids: list[str], ex: Example, note: str) -> bool:
    """Whether a ``[[suppress]]`` of ``rule`` on one of ``path_ids`` accepts the deviation; if so, count
    ``note`` (with the rule) as a note."""
    if any(accepted_by(checker.accepted, rule, pid, ex.case.id) for pid in path_ids):
        checker.notes[f"{note}, accepted by the contract's [[suppress]] ({rule})"] += 1
        return True
    return False
