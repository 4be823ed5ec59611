"""One normal form for the formulas sent to z3, so that a proof does not depend on how a size is spelled.

``(H - 3) // 2 + 1``, ``(H - 3 + 2) // 2``, ``(H + 2 - 3) // 2`` and torch's ``-((2 - H) // 2)`` (the ceiling
of ``(H - 2) / 2``) are one number, but z3 sees four different terms; multiplied by the same thing for the
other spatial dim they make a nonlinear equality z3 may time out on. ``normal(node)`` rewrites an expression
so that such spellings become the same tree, and an equality of two spellings folds to ``true`` before z3
is asked at all.

Integer expressions are read as polynomials (a sum of integer multiples of products of atoms) whose atoms
are names and the terms the polynomial cannot open: ``P // Q``, ``min``/``max``, ``a if c else b``. Every
rewrite below is an identity over the integers (Python's floor semantics, negatives included; the side
condition is stated, and ``tests/unit/test_normal.py`` checks each on random integers and with z3):

- ``P % Q`` is ``P - Q * (P // Q)`` (Q non-zero): one kind of term for both operators.
- ``P // s`` for a constant ``s``: ``P // -s == (-P) // s``; ``P // 1 == P``;
  ``(g*A + c) // (g*s) == (A + c // g) // s`` for a positive ``g`` dividing ``s`` and every coefficient of A;
  ``(s*Q + R) // s == Q + R // s`` for an integer polynomial Q (the constant goes to ``[0, s)``);
  ``R // s == -((-R + s - 1) // s)`` puts a positive coefficient first (so ``-((-x) // s)``, the ceiling,
  and ``(x + s - 1) // s`` are one term);
  ``(X // a + R) // b == (X + a*R) // (a*b)`` for positive constants a and b (nested floors).
- ``min``/``max``: nested calls flattened, arguments ordered, repeats dropped, a constant common to all
  taken out (``min(a + 1, b + 1) == min(a, b) + 1``).
- a comparison is ``P >= 0`` (strict ones over the integers: ``P > 0`` is ``P - 1 >= 0``) or ``P == 0`` /
  ``P != 0``, with P divided by the gcd of its coefficients (``2*H - 4 >= 0`` is ``H - 2 >= 0``, and
  ``2*H == 3`` is false).

Divisions by a non-constant keep their divisor; the solver takes the side conditions (divisors non-zero)
from the expression as written, so a term that cancels (``x // y - x // y``) does not drop ``y != 0``.
Anything too large to expand (``_MAX_TERMS``) is left as written, which is always sound.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable

from . import expr as E

Mono = tuple[E.Node, ...]  # a product of atoms, in atom order; () is the constant monomial
Poly = dict[Mono, int]  # monomial -> non-zero coefficient

_MAX_TERMS = 256  # monomials in one polynomial; beyond it the expression is left as it was written


class _TooLarge(Exception):
    pass


@functools.lru_cache(maxsize=16384)
def normal(node: E.Node) -> E.Node:
    """The normal form of a bound expression (integer, condition or shape); equal in value wherever the
    expression is defined. Left as written when it is too large or holds something outside the language."""
    try:
        return _norm(node)
    except (_TooLarge, E.ExprError, RecursionError):
        return node


def _norm(n: E.Node) -> E.Node:
    if isinstance(n, E.TupleE):
        return E.TupleE(tuple(_norm(i) for i in n.items))
    if E.kind_of(n) == "int" and not isinstance(n, E.Const):
        return _node(_poly(n))
    return _cond(n)


# ---------------------------------------------------------------------------------------------------------
# Conditions


def _cond(n: E.Node) -> E.Node:
    if isinstance(n, E.Cmp) and E.kind_of(n.left) == "int" and E.kind_of(n.right) == "int":
        return _cmp(n.op, _sub(_poly(n.left), _poly(n.right)))
    if isinstance(n, E.Cmp):
        return E.compare(n.op, _norm(n.left), _norm(n.right))
    if isinstance(n, E.Not):
        inner = _cond(n.operand)
        return _cond(E.negate(inner)) if isinstance(inner, (E.Cmp, E.Const)) else E.negate(inner)
    if isinstance(n, (E.And, E.Or)):
        kind = type(n)
        parts: set[E.Node] = set()
        for a in n.args:
            a = _cond(a)
            parts.update(a.args if isinstance(a, kind) else (a,))
        args = sorted(parts, key=_key)
        return E.conj(args) if kind is E.And else E.disj(args)
    if isinstance(n, E.Ite):
        return _ite(_cond(n.cond), _norm(n.then), _norm(n.other))
    return n


def _cmp(op: str, p: Poly) -> E.Node:
    """``p op 0`` as ``A >= -c`` or ``A == -c`` / ``A != -c``: A the non-constant part divided by the gcd of
    its coefficients, c the constant."""
    if op in ("<", "<=", ">", ">="):
        if op in ("<", "<="):  # p < 0 is -p > 0
            p = _scale(p, -1)
        if op in ("<", ">"):  # p > 0 is p - 1 >= 0
            p = _add(p, {(): -1})
        op = ">="
    c = p.get((), 0)
    rest = {m: k for m, k in p.items() if m}
    if not rest:
        return E.Const({">=": c >= 0, "==": c == 0, "!=": c != 0}[op])
    g = math.gcd(*rest.values())
    if op == ">=":  # g*A + c >= 0  <=>  A >= -c/g  <=>  A + c // g >= 0
        c = c // g
    else:
        if c % g:
            return E.Const(op == "!=")
        c //= g
        if rest[_leading(rest)] < 0:  # -A == c  <=>  A == -c
            g, c = -g, -c
    return E.Cmp(op, _node({m: k // g for m, k in rest.items()}), E.Const(-c))


def _ite(cond: E.Node, then: E.Node, other: E.Node) -> E.Node:
    if cond == E.TRUE or then == other:
        return then
    if cond == E.FALSE:
        return other
    return E.Ite(cond, then, other)


# ---------------------------------------------------------------------------------------------------------
# Integer expressions as polynomials


def _poly(n: E.Node) -> Poly:
    if isinstance(n, E.Const):
        if isinstance(n.value, bool) or not isinstance(n.value, int):
            raise E.ExprError(E.to_text(n), "not an integer")
        return {(): n.value} if n.value else {}
    if isinstance(n, E.Var):
        return {(n,): 1}
    if isinstance(n, E.Neg):
        return _scale(_poly(n.operand), -1)
    if isinstance(n, E.Arith):
        a, b = _poly(n.left), _poly(n.right)
        if n.op == "+":
            return _add(a, b)
        if n.op == "-":
            return _sub(a, b)
        if n.op == "*":
            return _mul(a, b)
        if n.op == "//":
            return _floordiv(a, b)
        return _sub(a, _mul(b, _floordiv(a, b)))  # a % b == a - b * (a // b)
    if isinstance(n, E.Call):
        return _minmax(n.fn, [_poly(a) for a in n.args])
    if isinstance(n, E.Ite):
        out = _ite(_cond(n.cond), _node(_poly(n.then)), _node(_poly(n.other)))
        return _atom(out) if isinstance(out, E.Ite) else _poly(out)
    raise E.ExprError(E.to_text(n), "not an integer expression")


def _atom(a: E.Node) -> Poly:
    return {(a,): 1}


def _add(a: Poly, b: Poly) -> Poly:
    out = dict(a)
    for m, k in b.items():
        v = out.get(m, 0) + k
        if v:
            out[m] = v
        else:
            out.pop(m, None)
    if len(out) > _MAX_TERMS:
        raise _TooLarge
    return out


def _scale(a: Poly, k: int) -> Poly:
    return {m: v * k for m, v in a.items()} if k else {}


def _sub(a: Poly, b: Poly) -> Poly:
    return _add(a, _scale(b, -1))


def _mul(a: Poly, b: Poly) -> Poly:
    if len(a) * len(b) > _MAX_TERMS * 4:
        raise _TooLarge
    out: Poly = {}
    for ma, ka in a.items():
        for mb, kb in b.items():
            out = _add(out, {tuple(sorted(ma + mb, key=_key)): ka * kb})
    return out


def _const(p: Poly) -> int | None:
    """The value of a constant polynomial, else None."""
    if not p:
        return 0
    return p[()] if len(p) == 1 and () in p else None


def _floordiv(p: Poly, q: Poly) -> Poly:
    s = _const(q)
    if s is None or s == 0:  # a non-constant divisor: the term as it is, operands in normal form
        return {} if not p else _atom(E.Arith("//", _node(p), _node(q)))
    if s < 0:
        p, s = _scale(p, -1), -s
    c = _const(p)
    if c is not None:
        return {(): c // s} if c // s else {}
    rest = {m: k for m, k in p.items() if m}
    g = math.gcd(s, *rest.values())
    if g > 1:  # (g*A + c) // (g*s') == (A + c // g) // s'
        p = {**{m: k // g for m, k in rest.items()}, (): p.get((), 0) // g}
        s //= g
    if s == 1:
        return {m: k for m, k in p.items() if k}
    # (s*Q + R) // s == Q + R // s: the multiples of s out, the constant into [0, s)
    quotient: Poly = {m: k // s for m, k in p.items() if m and k % s == 0}
    c = p.get((), 0)
    if c // s:
        quotient[()] = c // s
    r: Poly = {m: k for m, k in p.items() if m and k % s}
    if not r:
        return quotient
    if c % s:
        r[()] = c % s
    return _add(quotient, _floor_term(r, s))


def _floor_term(r: Poly, s: int) -> Poly:
    """``r // s`` for s > 1, r's constant in [0, s) and no coefficient a multiple of s."""
    if r[_leading(r)] < 0:  # r // s == -((-r + s - 1) // s): a positive coefficient first
        return _scale(_floor_term(_add(_scale(r, -1), {(): s - 1}), s), -1)
    for m in sorted(r, key=_mono_key):  # (X // a + R) // s == (X + a*R) // (a*s), a > 0
        inner = m[0] if len(m) == 1 and r[m] == 1 else None
        if isinstance(inner, E.Arith) and inner.op == "//" and isinstance(inner.right, E.Const) \
                and isinstance(inner.right.value, int) and inner.right.value > 0:
            a = inner.right.value
            others = {mm: kk for mm, kk in r.items() if mm != m}
            return _floordiv(_add(_poly(inner.left), _scale(others, a)), {(): a * s})
    return _atom(E.Arith("//", _node(r), E.Const(s)))


def _minmax(fn: str, args: list[Poly]) -> Poly:
    flat: list[Poly] = []
    for a in args:  # min(x, min(y, z) + k) == min(x, y + k, z + k)
        rest = [m for m in a if m]
        inner = rest[0][0] if len(rest) == 1 and len(rest[0]) == 1 and a[rest[0]] == 1 else None
        if isinstance(inner, E.Call) and inner.fn == fn:
            flat.extend(_add(_poly(x), {(): a[()]} if () in a else {}) for x in inner.args)
        else:
            flat.append(a)
    consts = [c for c in (_const(a) for a in flat) if c is not None]
    terms = [a for a in flat if _const(a) is None]
    if consts:
        terms.append({(): (min if fn == "min" else max)(consts)} if (min if fn == "min" else max)(consts) else {})
    shift = min(a.get((), 0) for a in terms)  # min(a + m, b + m) == min(a, b) + m
    nodes = sorted({_node(_add(a, {(): -shift})) for a in terms}, key=_key)
    if len(nodes) == 1:
        return _add(_poly(nodes[0]), {(): shift})
    return _add(_atom(E.Call(fn, tuple(nodes))), {(): shift})


# ---------------------------------------------------------------------------------------------------------
# Order and text


@functools.lru_cache(maxsize=65536)
def _key(n: E.Node) -> tuple:
    """A total order on atoms (and conditions): names first, then the rest by kind and text."""
    rank = 0 if isinstance(n, E.Var) else 1 if isinstance(n, E.Arith) else 2
    return rank, E.to_text(n)


def _mono_key(m: Mono) -> tuple:
    return (len(m) == 0, -len(m), tuple(_key(a) for a in m))


def _leading(p: Poly) -> Mono:
    return min(p, key=_mono_key)


def _node(p: Poly) -> E.Node:
    """A polynomial as a tree: its monomials in order (the highest degree first, the constant last)."""
    out: E.Node | None = None
    for m in sorted(p, key=_mono_key):
        k = p[m]
        term = _product(m, abs(k))
        if out is None:
            out = term if k > 0 else (E.Const(k) if not m else E.Neg(term))
        else:
            out = E.Arith("+" if k > 0 else "-", out, term)
    return E.Const(0) if out is None else out


def _product(m: Iterable[E.Node], k: int) -> E.Node:
    out: E.Node | None = None
    for a in m:
        out = a if out is None else E.Arith("*", out, a)
    if out is None:
        return E.Const(k)
    return out if k == 1 else E.Arith("*", E.Const(k), out)
