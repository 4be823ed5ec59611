"""torch's sympy expressions (over the unbacked symbols of a trace) -> contract expression trees.

What translates is exact: ``//``, ``%``, ``min``/``max``, comparisons, ``sym_ite`` (Piecewise), shifts and
power-of-two bit masks, ``int()`` of a true division, an integer compared with a float. Anything else raises
``Unsupported``, and the caller evaluates torch's own expression at real points instead (never a pass).
torch's own classes are reached through ``_torch.core``.
"""

from __future__ import annotations

from typing import Any

import sympy

from ..logic import expr as E
from .core import INT_OO as int_oo

_MEMO: dict[tuple[str, Any, frozenset], Any] = {}
"""(what, expression, the symbols' names) -> its translation: every trace of a case has a ShapeEnv of its own, but
its symbols are made in the same order with the same assumptions (equal sympy symbols), so the kernel's guards,
fallbacks and asserts are the same sympy expressions from trace to trace (the regions of one case, its variants)."""


def _memo(what: str, expr: Any, names: dict[Any, str], make: Any) -> Any:
    """``make(expr, names)``, once per expression and naming; an ``Unsupported`` is remembered and raised again."""
    try:
        key = (what, expr, frozenset(names.items()))
        found = _MEMO.get(key, _MEMO)
    except TypeError:  # an unhashable argument: translated each time
        return make(expr, names)
    if found is _MEMO:
        try:
            found = make(expr, names)
        except Unsupported as exc:
            found = exc
        if len(_MEMO) > 8192:  # one process verifies many contracts: keep it bounded
            _MEMO.clear()
        _MEMO[key] = found
    if isinstance(found, Unsupported):
        raise Unsupported(*found.args)
    return found


class Unsupported(Exception):
    """A torch expression outside what shapecheck can translate; the caller reports inconclusive."""


def _bit_mask(name: str, args: list[E.Node]) -> E.Node | None:
    """``x & -2**k`` (align down, as in ``(x + 7) & ~7``), ``x & (2**k - 1)`` (low bits) and
    ``x | (2**k - 1)`` in integer arithmetic, exact for every int under two's complement; else None."""
    consts = [a for a in args if isinstance(a, E.Const) and isinstance(a.value, int)]
    if len(consts) != 1:
        return None
    c = consts[0].value
    x = args[1] if args[0] is consts[0] else args[0]
    if c < 0 and (-c) & (-c - 1) == 0:  # c = -2**k
        return E.arith("*", E.arith("//", x, E.Const(-c)), E.Const(-c))
    if c >= 0 and (c + 1) & c == 0:  # c = 2**k - 1
        if name == "BitwiseFn_bitwise_and":
            return E.arith("%", x, E.Const(c + 1))
        return E.arith("+", E.arith("*", E.arith("//", x, E.Const(c + 1)), E.Const(c + 1)), E.Const(c))
    return None


_REL_OPS = {"Equality": "==", "Unequality": "!=", "StrictLessThan": "<", "LessThan": "<=",
            "StrictGreaterThan": ">", "GreaterThan": ">="}


def _int_vs_number(expr: Any, names: dict[Any, str]) -> E.Node | None:
    """An integer expression compared with a non-integer number (``L > 2.5``): Python compares int and float
    exactly, so ``x > 2.5`` is ``x > 2``, ``x >= 2.5`` is ``x >= 3``, ``x == 2.5`` is false. None when the
    relation is not of that form."""
    import fractions
    import math

    op = _REL_OPS.get(type(expr).__name__)
    left, right = expr.args
    if op is None:
        return None
    if isinstance(left, (sympy.Float, sympy.Rational)) and not isinstance(left, sympy.Integer):
        left, right, op = right, left, {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
    if not isinstance(right, (sympy.Float, sympy.Rational)) or isinstance(right, sympy.Integer):
        return None
    if isinstance(right, sympy.Float):
        if not right.is_finite:
            return None
        c = fractions.Fraction(float(right))
    else:
        c = fractions.Fraction(int(right.p), int(right.q))
    x = _to_node(left, names)
    if c.denominator == 1:
        return E.normalize_cmp(E.Cmp(op, x, E.Const(int(c))))
    if op in ("==", "!="):
        return E.Const(op == "!=")
    bound = math.floor(c) if op in (">", "<=") else math.ceil(c)
    return E.normalize_cmp(E.Cmp(op, x, E.Const(bound)))


def to_node(expr: Any, names: dict[Any, str]) -> E.Node:
    """Translate a sympy expression over traced symbols into the contract language, renaming symbols."""
    return _memo("node", expr, names, _to_node)


def _to_node(expr: Any, names: dict[Any, str]) -> E.Node:
    atom = _atom(expr, names)
    if atom is not None:
        return atom
    name = type(expr).__name__
    if name in ("CeilToInt", "FloorToInt", "TruncToInt") and len(expr.args) == 1:
        quotient = _quotient(expr.args[0], names)
        if quotient is not None:
            return _rounded_division(name, *quotient)
    if name == "ToFloat" and len(expr.args) == 1 and expr.args[0].is_integer:
        # float(n) of an integer is n itself below 2**53; only comparisons and float-free arithmetic on it
        # translate (a float constant in a product does not), so the number keeps its meaning
        return _to_node(expr.args[0], names)
    if isinstance(expr, sympy.core.relational.Relational):
        mixed = _int_vs_number(expr, names)
        if mixed is None:
            mixed = _quotients_compared(expr, names)
        if mixed is not None:
            return mixed
    if isinstance(expr, sympy.Piecewise):  # torch.sym_ite(c, a, b) -> Piecewise((a, c), (b, True))
        return _piecewise(expr, names)
    if isinstance(expr, sympy.Pow):
        return _power(expr, names)
    args = [_to_node(a, names) for a in expr.args]
    if isinstance(expr, sympy.Add):
        return _sum(args)
    if isinstance(expr, sympy.Mul):
        return _product(args)
    out = _function(name, expr, args)
    if out is None:
        raise Unsupported(f"the function {name} in {expr}")
    return out


def _atom(expr: Any, names: dict[Any, str]) -> E.Node | None:
    """Constants and symbols; None for anything compound."""
    if isinstance(expr, (bool, int)):
        return E.Const(expr)
    if expr is sympy.true:
        return E.TRUE
    if expr is sympy.false:
        return E.FALSE
    if isinstance(expr, sympy.Symbol):
        if expr not in names:
            raise Unsupported(f"the symbol {expr} is not a contract dim")
        return E.Var(names[expr])
    if isinstance(expr, sympy.Integer):
        return E.Const(int(expr))
    if expr is int_oo or expr is -int_oo or isinstance(expr, sympy.Rational):
        raise Unsupported(f"the number {expr}")
    return None


def _quotient(expr: Any, names: dict[Any, str]) -> tuple[E.Node, E.Node] | None:
    """A float expression of sizes built from true divisions (``K / 128``), sums, products, ``float()`` of an
    integer and integer-valued float constants, as one exact quotient ``(numerator, denominator)`` of integer
    expressions: ``(K / 128 + 3) / 4`` is ``(K + 384, 512)``, so ``math.floor`` of it is ``(K + 384) // 512``.
    Python computes it in floats, which agrees while the values stay below 2**53 (as for ``math.ceil(a / b)``;
    docs/how-it-works.md). A float constant is a quotient where it is one of small integers (``_float_quotient``:
    ``1.5 * float(H)`` is ``(3 * H, 2)``); None when the expression is anything else."""
    name = type(expr).__name__
    if name in ("IntTrueDiv", "FloatTrueDiv") and len(expr.args) == 2:
        a, b = (_quotient(x, names) for x in expr.args)
        if a is None or b is None:
            return None
        return E.arith("*", a[0], b[1]), E.arith("*", a[1], b[0])
    if name == "ToFloat" and len(expr.args) == 1:
        return _quotient(expr.args[0], names)
    if isinstance(expr, sympy.Float):
        return _float_quotient(expr)
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        parts = [_quotient(x, names) for x in expr.args]
        if any(p is None for p in parts):
            return None
        parts.sort(key=lambda p: isinstance(p[0], E.Const))  # people write the constant last: K + 384
        num, den = parts[0]
        for n, d in parts[1:]:
            if isinstance(expr, sympy.Mul):
                num, den = E.arith("*", num, n), E.arith("*", den, d)
            elif den == d:
                num = E.arith("+", num, n)
            else:
                num, den = E.arith("+", E.arith("*", num, d), E.arith("*", n, den)), E.arith("*", den, d)
        return num, den
    if getattr(expr, "is_integer", False) or isinstance(expr, (bool, int)):
        try:
            return _to_node(expr, names), E.Const(1)
        except Unsupported:
            return None
    return None


def _float_quotient(value: Any) -> tuple[E.Node, E.Node] | None:
    """A float constant as an exact quotient of small integers (``1.5`` is ``3 / 2``, interpolate's scale
    factor): every double is n / 2**k, and a product with a size stays exact in floats while n * size < 2**53;
    n and 2**k are kept below 2**16, so sizes up to 2**37 agree. None for a constant such as 0.1 (n is 53
    bits: its products round) or one that is not finite."""
    import fractions

    if not value.is_finite:
        return None
    exact = fractions.Fraction(float(value))
    if abs(exact.numerator) >= 2**16 or exact.denominator >= 2**16:
        return None
    return E.Const(exact.numerator), E.Const(exact.denominator)


def _quotients_compared(expr: Any, names: dict[Any, str]) -> E.Node | None:
    """A relation with a float side that ``_quotient`` expresses exactly (``S == round_up(K / 128, 4)``):
    ``n1 / d1 op n2 / d2`` is ``n1 * d2 op n2 * d1`` for positive constant denominators. None otherwise."""
    op = _REL_OPS.get(type(expr).__name__)
    if op is None or all(getattr(x, "is_integer", False) for x in expr.args):
        return None
    (n1, d1), (n2, d2) = (_quotient(x, names) or (None, None) for x in expr.args)
    if n1 is None or n2 is None or not all(isinstance(d, E.Const) and d.value > 0 for d in (d1, d2)):
        return None
    return E.normalize_cmp(E.Cmp(op, E.arith("*", n1, d2), E.arith("*", n2, d1)))


def _rounded_division(name: str, a: E.Node, b: E.Node) -> E.Node:
    """math.ceil / math.floor / int() of an integer a / b, exactly as integers: ceil(a/b) = -((-a) // b), and
    int() rounds toward zero (floor, plus one when the quotient is negative and inexact). Python divides in
    floats, which agrees while |a| < 2**53 (docs/how-it-works.md, "What translates")."""
    floor = E.arith("//", a, b)
    if name == "FloorToInt":
        return floor
    if name == "CeilToInt":
        return E.Neg(E.arith("//", E.Neg(a), b))
    zero = E.Const(0)
    exact = E.compare("==", E.arith("%", a, b), zero)
    same_sign = E.disj([E.conj([E.compare(">=", a, zero), E.compare(">", b, zero)]),
                        E.conj([E.compare("<", a, zero), E.compare("<", b, zero)])])
    cond = E.disj([exact, same_sign])
    if cond == E.TRUE:
        return floor
    return E.Ite(cond, floor, E.arith("+", floor, E.Const(1)))


def _piecewise(expr: Any, names: dict[Any, str]) -> E.Node:
    pieces = list(expr.args)
    last_value, last_cond = pieces[-1].args
    if last_cond is not sympy.true:
        raise Unsupported(f"the piecewise expression {expr} (no default piece)")
    out = _to_node(last_value, names)
    for value, cond in reversed([p.args for p in pieces[:-1]]):
        out = E.Ite(_to_node(cond, names), _to_node(value, names), out)
    return out


def _power(expr: Any, names: dict[Any, str]) -> E.Node:
    base, exp = expr.args
    if not (isinstance(exp, sympy.Integer) and 1 <= int(exp) <= 8):
        raise Unsupported(f"the power {expr}")
    b = _to_node(base, names)
    out = b
    for _ in range(int(exp) - 1):
        out = E.arith("*", out, b)
    return out


def _sum(args: list[E.Node]) -> E.Node:
    # sympy puts the constant first (1 + 2*L); people write it last (2 * L + 1)
    args = [a for a in args if not isinstance(a, E.Const)] + [a for a in args if isinstance(a, E.Const)]
    out = args[0]
    for a in args[1:]:
        out = E.arith("+", out, a)
    return out


def _product(args: list[E.Node]) -> E.Node:
    rest = [a for a in args if not isinstance(a, E.Const)]
    coef = 1
    for c in args:
        if isinstance(c, E.Const):
            coef *= c.value
    out = rest[0] if rest else E.Const(coef)
    for a in rest[1:]:
        out = E.arith("*", out, a)
    if rest and coef == -1:
        return E.Neg(out)
    if rest and coef != 1:
        out = E.arith("*", E.Const(coef), out)
    return out


def _function(name: str, expr: Any, args: list[E.Node]) -> E.Node | None:
    """torch's integer functions, relations and connectives; None for anything else."""
    if name in ("FloorDiv", "CleanDiv"):
        return E.arith("//", args[0], args[1])
    if name in ("Mod", "PythonMod"):
        return E.arith("%", args[0], args[1])
    if name in ("LShift", "RShift") and len(args) == 2 and isinstance(args[1], E.Const) and args[1].value >= 0:
        # x << k = x * 2**k; x >> k = x // 2**k (Python's floor, negatives included)
        return E.arith("*" if name == "LShift" else "//", args[0], E.Const(2 ** args[1].value))
    if name in ("BitwiseFn_bitwise_and", "BitwiseFn_bitwise_or") and len(args) == 2:
        masked = _bit_mask(name, args)
        if masked is None:
            raise Unsupported(f"the bitwise expression {expr}")
        return masked
    if name in ("Min", "Max"):
        return E.Call(name.lower(), tuple(args))
    if name in ("Identity", "TruncToInt", "CeilToInt", "FloorToInt", "RoundToInt") and len(args) == 1 \
            and not isinstance(expr.args[0], (sympy.Float,)) and expr.args[0].is_integer:
        return args[0]  # the identity on an integer argument
    rel = _REL_OPS.get(name)
    if rel is not None:
        return E.normalize_cmp(E.Cmp(rel, args[0], args[1]))
    connective = {"And": E.conj, "Or": E.disj}.get(name)
    if connective is not None:
        return connective(args)
    if name == "Not":
        return E.negate(args[0])
    return None


def rename_symbols(expr: Any, names: dict[Any, str]) -> str:
    """sympy text with traced symbols renamed to dim names."""
    return _memo("text", expr, names, _renamed_text)


def _renamed_text(expr: Any, names: dict[Any, str]) -> str:
    try:
        return str(expr.xreplace({s: sympy.Symbol(n) for s, n in names.items()}))
    except Exception:  # noqa: BLE001 - display text only: the expression as torch prints it will do
        return str(expr)


def with_dim_names(expr: Any, names: dict[Any, str]) -> Any:
    """The sympy expression over symbols named after the contract's dims (picklable, no ``u3``)."""
    return _memo("sympy", expr, names, _dim_named)


def _dim_named(expr: Any, names: dict[Any, str]) -> Any:
    if isinstance(expr, (bool, int)):
        return expr
    try:
        return expr.xreplace({s: sympy.Symbol(n, integer=True) for s, n in names.items()})
    except Exception:  # noqa: BLE001 - only used to evaluate at points; None means "cannot"
        return None


def dims_of(expr: Any) -> set[str]:
    """The dim names an expression from ``with_dim_names`` uses."""
    return {s.name for s in getattr(expr, "free_symbols", set())}


def value_at(expr: Any, point: dict[str, int]) -> bool | int | float | None:
    """The expression evaluated at concrete sizes with torch's own sympy functions (``IntTrueDiv`` is
    Python's ``/``, and so on): what the kernel computes at those sizes. None when it does not evaluate
    to a plain value."""
    if isinstance(expr, (bool, int)):
        return expr
    try:
        syms = getattr(expr, "free_symbols", set())
        if any(s.name not in point for s in syms):
            return None
        out = expr.xreplace({s: sympy.Integer(point[s.name]) for s in syms})
    except Exception:  # noqa: BLE001 - an expression torch's sympy functions cannot evaluate
        return None
    if out is sympy.true:
        return True
    if out is sympy.false:
        return False
    if isinstance(out, sympy.Integer):
        return int(out)
    if isinstance(out, sympy.Float):
        return float(out)
    return None


#: torch's sympy functions of float semantics: a formula with one, evaluated in sympy, may part from what Python's
#: float arithmetic gave the kernel (``TruncToInt(3.0 * ToFloat(L))`` at L = 31 is 93; 31 * 0.3 * 10 truncates to 92)
_FLOAT_FUNCTIONS = ("ToFloat", "FloatTrueDiv", "IntTrueDiv", "TruncToFloat", "FloatPow", "RoundDecimal", "Opaque")


def has_floats(expr: Any) -> bool:
    """Whether the expression holds a float (a constant, or one of torch's float functions)."""
    if isinstance(expr, float):
        return True
    if not isinstance(expr, sympy.Basic):
        return False
    if expr.atoms(sympy.Float):
        return True
    return any(type(f).__name__.startswith(_FLOAT_FUNCTIONS) for f in expr.atoms(sympy.Function))


def free_symbols(expr: Any) -> set[Any]:
    return set(getattr(expr, "free_symbols", set()))
