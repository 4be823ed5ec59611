"""The one simplifier for formulas shown to people: an expression tree (contract language) is built into a
sympy expression by our own code (never a parsed string), which folds constants and collects terms, and is
read back into a tree. ``shown(node)`` is the text every report uses for output and contract formulas:
``(H + 2 - 3 + 2 - 1) // 2 + 1`` reads ``(H - 2) // 2 + 1``... as sympy folds it.

Integer semantics are kept: ``a // b`` is ``floor(a / b)`` and ``a % b`` is sympy's ``Mod`` (Python's sign
convention), both exact over the integers. The simplified tree is used only when it is shorter than the
original; anything sympy cannot read back (a fraction outside a floor, say) leaves the original as it was.
"""

from __future__ import annotations

import functools

import sympy

from . import expr as E


class _NotSimplified(Exception):
    pass


def shown(node: E.Node | None) -> str:
    """``node`` as report text, simplified."""
    return "" if node is None else E.to_text(simplified(node))


def shown_deep(node: E.Node) -> str:
    """``node`` as report text, each arithmetic part simplified where the whole cannot be (a conditional's
    branches and condition, a min or max's arguments): a stride of max_pool2d's contract read ``(H + 2 - 1 - 1 +
    2 - 1) // 2 + 1`` inside its ``if``s (hunt 42)."""
    return E.to_text(_deep(node))


def _deep(n: E.Node) -> E.Node:
    whole = simplified(n)
    if whole != n:  # (a cached tree equal to n may be another object)
        return whole
    if isinstance(n, E.Ite):
        return E.Ite(_deep(n.cond), _deep(n.then), _deep(n.other))
    if isinstance(n, E.Cmp):
        return E.Cmp(n.op, _deep(n.left), _deep(n.right))
    if isinstance(n, E.Arith):
        return E.Arith(n.op, _deep(n.left), _deep(n.right))
    if isinstance(n, E.Call):
        return E.Call(n.fn, tuple(_deep(a) for a in n.args))
    if isinstance(n, E.And):
        return E.And(tuple(_deep(a) for a in n.args))
    if isinstance(n, E.Or):
        return E.Or(tuple(_deep(a) for a in n.args))
    if isinstance(n, E.Not):
        return E.Not(_deep(n.operand))
    if isinstance(n, E.TupleE):
        return E.TupleE(tuple(_deep(i) for i in n.items))
    return n


@functools.lru_cache(maxsize=4096)
def simplified(node: E.Node) -> E.Node:
    if isinstance(node, E.TupleE):
        return E.TupleE(tuple(simplified(i) for i in node.items))
    try:
        back = _from_sympy(_to_sympy(node))
    except (_NotSimplified, TypeError, ValueError, ZeroDivisionError, RecursionError):
        return node
    return back if len(E.to_text(back)) < len(E.to_text(node)) else node


def _to_sympy(n: E.Node) -> sympy.Expr:
    if isinstance(n, E.Const) and isinstance(n.value, int) and not isinstance(n.value, bool):
        return sympy.Integer(n.value)
    if isinstance(n, E.Var):
        return sympy.Symbol(n.name, integer=True)
    if isinstance(n, E.Neg):
        return -_to_sympy(n.operand)
    if isinstance(n, E.Arith):
        a, b = _to_sympy(n.left), _to_sympy(n.right)
        if n.op == "+":
            return a + b
        if n.op == "-":
            return a - b
        if n.op == "*":
            return a * b
        if b == 0:
            raise _NotSimplified("division by zero")
        if n.op == "//":
            return sympy.floor(a / b)
        if n.op == "%":
            return sympy.Mod(a, b)
    if isinstance(n, E.Call) and n.fn in ("min", "max"):
        args = [_to_sympy(a) for a in n.args]
        return sympy.Min(*args) if n.fn == "min" else sympy.Max(*args)
    raise _NotSimplified(type(n).__name__)


def _from_sympy(x: sympy.Basic) -> E.Node:
    if isinstance(x, sympy.Integer):
        return E.Const(int(x))
    if isinstance(x, sympy.Symbol):
        return E.Var(x.name)
    if isinstance(x, sympy.Add):
        terms = sorted(x.args, key=lambda t: (t.is_number, sympy.default_sort_key(t)))
        out = _from_sympy(terms[0])
        for t in terms[1:]:
            coeff, rest = t.as_coeff_Mul()
            if coeff.is_negative:
                out = E.Arith("-", out, _from_sympy(-t))
            else:
                out = E.Arith("+", out, _from_sympy(t))
        return out
    if isinstance(x, sympy.Mul):
        coeff, rest = x.as_coeff_Mul()
        if not coeff.is_Integer:
            raise _NotSimplified("a fraction outside a floor")
        factors = [f for f in sympy.Mul.make_args(rest)]
        if coeff == -1:
            return E.Neg(_product(factors))
        return _product(factors) if coeff == 1 else E.Arith("*", E.Const(int(coeff)), _product(factors))
    if isinstance(x, sympy.Pow) and x.exp.is_Integer and int(x.exp) >= 1:
        return _product([x.base] * int(x.exp))
    if isinstance(x, sympy.floor):
        num, den = sympy.fraction(sympy.together(x.args[0]))
        return E.Arith("//", _from_sympy(num), _from_sympy(den))
    if isinstance(x, sympy.Mod):
        return E.Arith("%", _from_sympy(x.args[0]), _from_sympy(x.args[1]))
    if isinstance(x, (sympy.Min, sympy.Max)):
        return E.Call("min" if isinstance(x, sympy.Min) else "max", tuple(_from_sympy(a) for a in x.args))
    raise _NotSimplified(type(x).__name__)


def _product(factors: list) -> E.Node:
    out = _from_sympy(factors[0])
    for f in factors[1:]:
        out = E.Arith("*", out, _from_sympy(f))
    return out


def conjuncts(cond: E.Node) -> list[E.Node]:
    """``cond`` as facts that hold one by one: an ``and`` split, a negated ``or`` as its negated parts."""
    if isinstance(cond, E.And):
        return [p for a in cond.args for p in conjuncts(a)]
    if isinstance(cond, E.Not) and isinstance(cond.operand, E.Or):
        return [p for a in cond.operand.args for p in conjuncts(E.negate(a))]
    return [cond]


def relations(cond: E.Node) -> int:
    """The comparisons in a condition (its atoms)."""
    if isinstance(cond, (E.And, E.Or)):
        return sum(relations(a) for a in cond.args)
    if isinstance(cond, E.Not):
        return relations(cond.operand)
    return 1
