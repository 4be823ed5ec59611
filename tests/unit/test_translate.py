"""torch's sympy (as a trace produces it) -> the contract language: each translation must mean exactly what
Python computes on the sizes, negative values included (z3 then proves over the translation)."""

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck._torch import translate as T
from shapecheck.logic import expr as E

X = sympy.Symbol("u0", integer=True)
NAMES = {X: "L"}


def torch_fn(name):
    import torch.utils._sympy.functions as F

    return getattr(F, name)


@settings(max_examples=200, deadline=None)
@given(st.integers(-10**6, 10**6), st.integers(0, 12))
def test_bit_masks_and_shifts_translate_exactly(x, k):
    cases = [
        (torch_fn("BitwiseFn_bitwise_and")(X, sympy.Integer(-(2**k))), x & -(2**k)),
        (torch_fn("BitwiseFn_bitwise_and")(sympy.Integer(2**k - 1), X), x & (2**k - 1)),
        (torch_fn("BitwiseFn_bitwise_or")(X, sympy.Integer(2**k - 1)), x | (2**k - 1)),
        (torch_fn("RShift")(X, sympy.Integer(k)), x >> k),
        (torch_fn("LShift")(X, sympy.Integer(k)), x << k),
    ]
    for expr, want in cases:
        node = T.to_node(expr, NAMES)
        assert E.evaluate(node, {"L": x}) == want, (expr, E.to_text(node))


def test_other_bit_masks_stay_untranslated():
    with pytest.raises(T.Unsupported):
        T.to_node(torch_fn("BitwiseFn_bitwise_and")(X, sympy.Integer(6)), NAMES)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.integers(-10**6, 10**6), st.integers(-64, 64).filter(bool))
def test_ceil_floor_and_int_of_true_division(x, d):
    """math.ceil(x / d), math.floor(x / d) and int(x / d) as Python computes them, negatives included."""
    import math

    div = torch_fn("IntTrueDiv")(X, sympy.Integer(d))
    for fn, want in (("CeilToInt", math.ceil(x / d)), ("FloorToInt", math.floor(x / d)), ("TruncToInt", int(x / d))):
        node = T.to_node(torch_fn(fn)(div), NAMES)
        assert E.evaluate(node, {"L": x}) == want, (fn, E.to_text(node))


def test_value_at_evaluates_torchs_own_functions():
    expr = torch_fn("IntTrueDiv")(sympy.Symbol("L", integer=True), sympy.Integer(3)) > 2.5
    assert T.value_at(expr, {"L": 7}) is False and T.value_at(expr, {"L": 8}) is True
    assert T.value_at(expr, {"S": 8}) is None  # a dim the point lacks
    assert T.dims_of(expr) == {"L"}


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40))
def test_piecewise_from_sym_ite_translates_and_proves(lv, sv):
    from shapecheck.logic.solver import Bounds, Outcome, Solver

    S = sympy.Symbol("u1", integer=True)
    names = {X: "L", S: "S"}
    pw = sympy.Piecewise((X, X <= 8), (S, True))
    node = T.to_node(pw, names)
    assert isinstance(node, E.Ite) and E.to_text(node) == "(L if L <= 8 else S)"
    assert E.evaluate(node, {"L": lv, "S": sv}) == (lv if lv <= 8 else sv)
    solver = Solver([Bounds("L", 1, 2**31 - 1), Bounds("S", 1, 2**31 - 1)])
    assert solver.implies([E.parse("L <= 8")], E.Cmp("==", node, E.Var("L"))).outcome == Outcome.PROVED
    r = solver.implies([], E.Cmp("==", node, E.Var("L")))
    assert r.outcome == Outcome.REFUTED and r.model["L"] > 8 and r.model["S"] != r.model["L"]


def test_a_conditional_is_an_expression_of_the_contract_language_with_pythons_meaning():
    """``a if cond else b`` (output dtypes per case, docs/contracts.md)."""
    node = E.parse("L if L <= 8 else S")
    assert [E.evaluate(node, {"L": L, "S": 5}) for L in (8, 9)] == [8, 5]


@settings(max_examples=200, deadline=None)
@given(st.integers(-50, 50), st.sampled_from([2.5, -2.5, 0.1, 3.0, -7.75, 1e-3]),
       st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), st.booleans())
def test_integers_compared_with_floats_translate_exactly(x, c, op, flipped):
    import operator

    ops = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
           "!=": operator.ne}
    rel = {"<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge, "==": sympy.Eq, "!=": sympy.Ne}[op]
    f = sympy.Float(c)
    expr = rel(f, X + 1, evaluate=False) if flipped else rel(X + 1, f, evaluate=False)
    want = ops[op](c, x + 1) if flipped else ops[op](x + 1, c)
    node = T.to_node(expr, NAMES)
    assert E.evaluate(node, {"L": x}) == want, (E.to_text(node), x, c, op, flipped)


def test_float_of_an_integer_compared_with_a_float():
    to_float = torch_fn("ToFloat")
    node = T.to_node(sympy.StrictGreaterThan(to_float(X), sympy.Float(2.5), evaluate=False), NAMES)
    assert E.to_text(node) == "L > 2"
