"""Input sizes as torch.export's ``Dim``s take them: a size over one dim (``k * X + c``, a derived Dim of X's) and
a size over several (``S1 + S2``, ``C * r * r``), which gets a Dim of its own over its range, as a user gives it.
Used by ``--confirm-export`` (``prove.export``) and the export-style run behind SC022 (``prove.helper_guards``)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import cast

from ..contract.model import BoundArg, BoundCase
from ..logic import expr as E
from ..logic.solver import Sat, Solver


def linear_item(node: E.Node) -> tuple[str, int, int] | None:
    """``(X, a, b)`` where ``node`` is written ``a * X + b`` over one dim (``2 * h``, ``h * 3 - 1``); else None."""
    if isinstance(node, E.Var):
        return node.name, 1, 0
    if not isinstance(node, E.Arith):
        return None
    left, right = node.left, node.right
    if node.op == "*":
        for k, x in ((left, right), (right, left)):
            inner = linear_item(x)
            if isinstance(k, E.Const) and isinstance(k.value, int) and inner is not None:
                return inner[0], k.value * inner[1], k.value * inner[2]
    if node.op in ("+", "-") and isinstance(right, E.Const) and isinstance(right.value, int):
        inner = linear_item(left)
        if inner is not None:
            return inner[0], inner[1], inner[2] + (right.value if node.op == "+" else -right.value)
    return None


#: the greatest a composite axis's Dim may take where its range has no smaller one (``composite_bounds``)
COMPOSITE_MAX = 2**62
#: an expression's text -> (its Dim's name, least, greatest): one Dim per size over one call's inputs
Composites = dict[str, tuple[str, int, int]]
Bounds = Callable[[E.Node, int], tuple[int, int]]


def composite_axes(a: BoundArg, sizes: dict[str, int], dynamic: Collection[str], taken: Collection[str],
                   bounds: Bounds | None = None, named: Composites | None = None) -> dict[int, tuple[str, int, int]]:
    """The axes of ``a`` whose size is an expression over dynamic dims that no ``Dim`` states (``S1 + S2``,
    ``C * r * r``: neither one dim nor ``k * X + c``) and is 2 or more at ``sizes``: axis -> the Dim of its own
    that a user gives such an axis: its name (``self_size0``, none of ``taken``), least and greatest value
    (``bounds(item, value at sizes)``, else 2 and ``COMPOSITE_MAX``). The same size on another input of the call
    (``named``, shared) is the same Dim, as a user gives it: two Dims fail export ("other_size0 = self_size0").
    torch.export then relates it to the other dims through the guards the kernel installs. Held at the example's
    value instead, the axis fixed the dims' sum or product (``S2 = 5 - S1``), and export's refusal of that was no
    refusal of the contract's: a false SC022 with a counterexample the kernel never guards (hunt 33)."""
    out: dict[int, tuple[str, int, int]] = {}
    named = {} if named is None else named
    assert a.shape is not None  # a tensor argument's
    for j, item in enumerate(a.shape.items):
        fixed = {n: E.Const(sizes[n]) for n in E.free_names(item) - set(dynamic) if n in sizes}
        if isinstance(item, (E.Var, E.Const)) or not E.free_names(item) & set(dynamic) \
                or linear_item(E.bind(item, fixed) if fixed else item) is not None:
            continue  # one dynamic dim, ``k * X + c`` once the static dims are bound: export relates it by a
            # derived Dim (a Dim of its own there fails: "F = 2*C"), not this
        value = cast(int, E.evaluate(item, sizes))
        if value < 2:
            continue
        key = E.to_text(item)
        if key not in named:
            name = "".join(c if c.isalnum() else "_" for c in f"{a.name}_size{j}")
            while name in taken or any(name == n for n, _, _ in named.values()):
                name += "_"
            lo, hi = bounds(item, value) if bounds is not None else (2, COMPOSITE_MAX)
            named[key] = name, min(value, max(2, lo)), max(value, min(COMPOSITE_MAX, hi))
        if named[key][1] < named[key][2]:  # one value over the domain (sizes from 2): static, as any such size
            out[j] = named[key]
    return out


def composite_bounds(case: BoundCase, solver: Solver, dynamic: Collection[str]) -> Bounds:
    """``composite_axes``' ``bounds``: the least and greatest value of an axis of several dims over the case's
    domain with the dynamic dims from 2 (export's sizes), by bisection from its value at the example: the ``min``
    and ``max`` of the Dim a user gives it. narrow's ``self`` of ``S + T``: from 2, export refuses it on the
    kernel's own ``start + length <= size``, from 4 it accepts; ``S1 + S2`` with both at most 4: without ``max=8``
    export refuses a branch on ``> 8`` that no input takes (hunt 35). 2 and ``COMPOSITE_MAX`` where z3 cannot say."""
    base = [case.domain, *(E.Cmp(">=", E.Var(d), E.Const(2)) for d in sorted(dynamic))]
    memo: dict[tuple[E.Node, int], tuple[int, int]] = {}

    def reached(cond: E.Node) -> bool | None:
        answer = solver.satisfiable([*base, cond]).sat
        return None if answer is Sat.UNKNOWN else answer is Sat.SAT

    def least(item: E.Node, value: int) -> int:
        lo, hi = 2, value  # the least is in [lo, hi]: hi is reached (at the example)
        while lo < hi:
            mid = (lo + hi) // 2
            got = reached(E.Cmp("<=", item, E.Const(mid)))
            if got is None:
                return 2
            lo, hi = (lo, mid) if got else (mid + 1, hi)
        return lo

    def greatest(item: E.Node, value: int) -> int:
        lo, hi = value, value  # the greatest is at least lo: hi doubles until it is not reached
        while hi < COMPOSITE_MAX:
            got = reached(E.Cmp(">=", item, E.Const(min(2 * hi, COMPOSITE_MAX))))
            if got is None:
                return COMPOSITE_MAX
            if not got:
                break
            lo = hi = min(2 * hi, COMPOSITE_MAX)
        if hi >= COMPOSITE_MAX:
            return COMPOSITE_MAX
        hi = 2 * hi - 1  # the greatest is in [lo, hi]
        while lo < hi:
            mid = (lo + hi + 1) // 2
            got = reached(E.Cmp(">=", item, E.Const(mid)))
            if got is None:
                return COMPOSITE_MAX
            lo, hi = (mid, hi) if got else (lo, mid - 1)
        return lo

    def both(item: E.Node, value: int) -> tuple[int, int]:
        if (item, value) not in memo:
            memo[item, value] = least(item, value), greatest(item, value)
        return memo[item, value]

    return both
