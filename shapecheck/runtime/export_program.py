"""fuzz's check of torch.export's program at an example where a dynamic dim is 0 or 1 (``Checker``'s step): the
program export traces from 2, evaluated at the example, must give the contract's outputs, unless a guard it
keeps refuses the example."""

from __future__ import annotations

import time
from typing import Any


def check_export_program(checker: Any, ex: Any, paths: list[Any], fail: Any, differences: Any) -> None:
    """Where a dynamic dim is 0 or 1 at the example, torch.export traces from 2 and runs that program here:
    its outputs at the example must be the contract's too (a guard_or_false fallback taken for every size).
    ``differences``: ``check.contract_differences``."""
    from .._torch.backed import holds_at
    from ..logic import expr as E
    from ..trace.fake_run import fake_run

    low = [d.name for d in ex.case.dims if d.dynamic and ex.values.get(d.name) in (0, 1)]
    if not low:
        return
    traced_at = {**ex.values, **{n: 2 for n in low}}
    if E.evaluate(ex.case.domain, traced_at) is not True:
        return
    start = time.perf_counter()
    run = fake_run(checker.kernel, ex.case, ex.values, export_view=True, reuse=checker.reuse,
                   record_outputs=True)
    checker._time("meta", start)
    if run.error is not None or any(holds_at(g.expr, run.names, ex.values) is not True for g in run.guards
                                    if not g.fallback or not _from_two(checker, ex, g, run.names)):
        return  # export would fail to trace, or its program refuses the example: not a shape (a guard_or_*
        # fallback that holds at every size from 2 is no guard there: export decides it; one that does not,
        # lerp's broadcasting ``B0 == A0`` at equal hints, is a guard the program keeps)
    at = ", ".join(f"{n}=2" for n in low)
    for code, expected, actual, message in differences(paths, run.outputs, ex.values):
        raise fail("meta-shape", expected, actual, f"torch.export's program (traced with {at}) at the example: "
                   f"{message}", code)


def _from_two(checker: Any, ex: Any, g: Any, names: dict) -> bool:
    """Whether a guard_or_* answer holds wherever each dynamic dim is from 2 (z3), so that torch.export decides
    it from its Dim ranges with no guard; not where it cannot be read. The domain's relations are no premise:
    export's Dims do not state ``A0 == B0 or A0 == 1 or B0 == 1``, and its program keeps ``B0 == A0``."""
    key = (ex.case.id, g.expr, tuple(sorted((str(s), names.get(s)) for s in g.expr.free_symbols)))
    if key not in checker.from_two:
        checker.from_two[key] = _decide_from_two(checker, ex, g, names)
    return checker.from_two[key]


def _decide_from_two(checker: Any, ex: Any, g: Any, names: dict) -> bool:
    from .._torch import translate as T
    from ..logic import expr as E
    from ..logic.solver import Decision

    try:
        node = T.to_node(g.expr, names)
    except T.Unsupported:
        return False
    ge2 = [E.Cmp(">=", E.Var(d.name), E.Const(2)) for d in ex.case.dims if d.dynamic]
    return checker._solver().decide(ge2, node)[0] is Decision.TRUE
