"""A case's least point, run on concrete sizes: where the contract's domain holds a size of 0 or 1, the kernel
runs there as FakeTensorMode runs concrete sizes (meta-device model init, shape propagation), and a raise is SC007.

The symbolic trace stands for every size of its region only as far as torch's simplification is sound there,
and torch simplifies as if a divisor were never 0: ``(n * d) // n`` is ``d`` for an unbacked ``n``, while at
``n = 0`` the kernel raises ZeroDivisionError; a divisor made of sizes, batch norm's ``n / (n - 1)``, is 0 at
``n = 1``, where the unbacked trace's symbolic division raises nothing. Only a case whose dims may be 0 or 1
pays for it: one run at most, the static run first (cheap), then, where it
raises, the run with a ShapeEnv and backed sizes (``trace.fake_run``), so that a data-dependent output, which
a static FakeTensorMode cannot make, is never taken for a kernel error.
"""

from __future__ import annotations

from collections.abc import Set

from ..contract.model import BoundCase
from ..findings import Finding
from ..kernel.sources import Kernel, NotApplicable
from ..logic import expr as E
from ..logic.solver import Solver, kept, restrict
from ..rules import RuleCode

#: a finding that already says the case's kernel raises (or that shapecheck failed in it): nothing to add
_RAISES = frozenset({RuleCode.KERNEL_ERROR, RuleCode.ASSERT_NARROWS_RANGE, RuleCode.INTERNAL_ERROR})


def least_point(kernel: Kernel, case: BoundCase, solver: Solver, findings: list[Finding]) -> list[Finding]:
    """SC007 where the kernel raises at the case's least point (z3's lexicographically least model of its
    domain) and that point holds a dynamic size of 0 or 1; [] otherwise."""
    if any(v.code in _RAISES for v in findings) or not any(d.dynamic and d.min <= 1 for d in case.dims):
        return []  # a divisor torch simplifies away is wrong at 0, one made of sizes (``n - 1``) at 1 too
    model = solver.small_model([case.domain])
    if model is None:
        return []
    point = restrict(model, [d.name for d in case.dims])
    if not any(d.dynamic and point.get(d.name) in (0, 1) for d in case.dims) or len(point) < len(case.dims) \
            or not runnable(point):
        return []
    from .replay import run_concrete

    run = run_concrete(kernel, case, point)
    if run is None or run.error is None:
        return []
    from .._torch import core as C
    from ..trace.run import first_line, own_code

    error = raised_as_torch_runs(kernel, case, point)
    if error is None:
        return []
    text = f"{type(error).__name__}: {first_line(error)}"
    at = ", ".join(f"{k}={v}" for k, v in point.items())
    return [Finding(code=RuleCode.KERNEL_ERROR, case=case.id, expr=text, counterexample=point,
                    location=C.kernel_frame(C.exception_frames(error), own_code(kernel)),
                    message=f"the kernel raised {text} at {at}, a point of the contract's domain, run on concrete "
                            "sizes under FakeTensorMode; the symbolic trace did not: torch simplifies as if sizes "
                            "used as divisors, and divisors made of sizes (batch norm's n / (n - 1) at n = 1), were "
                            "never 0")]


#: a size no concrete tensor has (its storage would overflow int64 with any other size but 0)
UNRUNNABLE = 2**40


def runnable(point: dict[str, int]) -> bool:
    """Whether tensors of ``point``'s sizes can be made on concrete sizes: a dim at 0 empties them, else every size
    is below ``UNRUNNABLE`` (a contract may range up to int64's largest value)."""
    return any(v == 0 for v in point.values()) or all(v < UNRUNNABLE for v in point.values())


def wide_point(solver: Solver, conds: list[E.Node], dims: list[str], exempt: Set[str] = frozenset()
               ) -> dict[str, int] | None:
    """The least point of ``conds`` with every dim but the ``exempt`` ones at 2 or more (as many of them as the
    domain allows, ``solver.kept``), where a size of 1 hides no layout (a channels-last tensor of one channel is
    contiguous); None where there is none, or it is not ``runnable``."""
    wide = kept(solver, list(conds), [E.Cmp(">=", E.Var(d), E.Const(2)) for d in dims if d not in exempt])
    model = solver.small_model(wide)
    point = restrict(model, dims) if model is not None else {}
    return point if len(point) == len(dims) and runnable(point) else None


def spread_point(solver: Solver, conds: list[E.Node], dims: list[str], exempt: Set[str] = frozenset()
                 ) -> dict[str, int] | None:
    """``wide_point`` with the dims but the ``exempt`` ones also apart from each other where the domain allows: a
    kernel that swaps two sizes (``(H, W)`` for ``(W, H)``, ``S`` where ``L`` belongs) returns the right shape where
    they are equal (hunt 61: convolution's Ho and Wo swapped behind ``guard_or_false(Ci == 1)``)."""
    names = [d for d in dims if d not in exempt]
    wide = kept(solver, list(conds), [E.Cmp(">=", E.Var(d), E.Const(2)) for d in names])
    apart: list[E.Node] = [E.Cmp("!=", E.Var(a), E.Var(b)) for i, a in enumerate(names) for b in names[i + 1:]]
    model = solver.small_model(kept(solver, wide, apart))
    point = restrict(model, dims) if model is not None else {}
    return point if len(point) == len(dims) and runnable(point) else None


def raised_as_torch_runs(kernel: Kernel, case: BoundCase, point: dict[str, int]) -> BaseException | None:
    """What the kernel raises at ``point`` run as torch runs fakes (``trace.fake_run``: a ShapeEnv, backed sizes,
    so a data-dependent output is no error), where a static run raised; None where it returns there, cannot take
    the case, or the error is shapecheck's own or a name this torch lacks (verify reports those)."""
    from ..errors import ShapecheckError
    from ..trace.fake_run import fake_run
    from ..trace.run import missing_name

    try:
        error = fake_run(kernel, case, point).error
    except NotApplicable:
        return None
    if error is None or isinstance(error, ShapecheckError) or missing_name(error):
        return None
    return error
