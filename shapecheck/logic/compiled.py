"""Contract expressions compiled to closures, for the search: ``compiled(node)(values)`` has ``logic.expr.evaluate``'s
semantics (Python's ``//``/``%``; a division by zero raises ZeroDivisionError). Generated points are re-checked
with ``logic.expr.evaluate`` before they are emitted, and a test compares the two.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import cast

from ..errors import InternalError
from . import expr as E

OPS: dict[str, Callable[[int, int], bool]] = {
    "<=": lambda a, b: a <= b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, ">": lambda a, b: a > b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
#: a compiled expression: the dims' values -> the expression's value (``logic.expr.evaluate``'s)
Compiled = Callable[[Mapping[str, int]], E.Value]
_COMPILED: dict[int, tuple[E.Node, Compiled]] = {}
_ARITH: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "//": lambda a, b: a // b,
    "%": lambda a, b: a % b}


def compiled(node: E.Node) -> Compiled:
    """``node`` as a function of the dims' values, with ``logic.expr.evaluate``'s semantics (Python's ``//``/``%``;
    a division by zero raises ZeroDivisionError)."""
    hit = _COMPILED.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    fn = _compile(node)
    if len(_COMPILED) > 100_000:
        _COMPILED.clear()
    _COMPILED[id(node)] = (node, fn)  # the node is kept alive, so its id is not reused
    return fn


def _ints(n: E.Node) -> Callable[[Mapping[str, int]], int]:
    """``_compile`` of an operand of arithmetic, ``min``/``max`` or a comparison: the contract language's type
    check (``expr.kind_of``, when a contract loads) admits only integers there, so the closure gives an int (but
    for ``==``/``!=`` with a choice's string, which ``OPS`` compares the same way)."""
    return cast(Callable[[Mapping[str, int]], int], _compile(n))


def _compile(n: E.Node) -> Compiled:
    if isinstance(n, E.Const):
        value = n.value
        return lambda v: value
    if isinstance(n, E.Var):
        name = n.name
        return lambda v: v[name]
    if isinstance(n, E.Arith):
        f, left, right = _ARITH[n.op], _ints(n.left), _ints(n.right)
        return lambda v: f(left(v), right(v))
    if isinstance(n, E.Neg):
        inner = _ints(n.operand)
        return lambda v: -inner(v)
    if isinstance(n, E.Call):
        pick, args = (min if n.fn == "min" else max), [_ints(a) for a in n.args]
        return lambda v: pick(a(v) for a in args)
    if isinstance(n, E.Cmp):
        f, left, right = OPS[n.op], _ints(n.left), _ints(n.right)
        return lambda v: f(left(v), right(v))
    if isinstance(n, E.And):
        parts = [_compile(a) for a in n.args]
        return lambda v: all(p(v) for p in parts)
    if isinstance(n, E.Or):
        parts = [_compile(a) for a in n.args]
        return lambda v: any(p(v) for p in parts)
    if isinstance(n, E.Not):
        operand = _compile(n.operand)
        return lambda v: not operand(v)
    if isinstance(n, E.Ite):
        cond, then, other = _compile(n.cond), _compile(n.then), _compile(n.other)
        return lambda v: then(v) if cond(v) else other(v)
    if isinstance(n, E.TupleE):
        items = [_compile(i) for i in n.items]
        return lambda v: tuple(i(v) for i in items)
    raise InternalError(f"cannot compile {E.to_text(n)}")


def fast_holds(node: E.Node, values: Mapping[str, int]) -> bool:
    """``holds`` through ``compiled``: False where the predicate is undefined."""
    try:
        return compiled(node)(values) is True
    except ZeroDivisionError:
        return False
