"""The normal form z3 is given (logic/normal.py): every rewrite is an identity over the integers, negatives
included, checked by evaluating both forms on random expressions and points and, for the rewrite rules
themselves, proved by z3; equivalent spellings of one size become one tree."""

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.logic import expr as E
from shapecheck.logic.normal import normal
from shapecheck.logic.solver import Bounds, Sat, Solver, to_z3

NAMES = ("a", "b", "c")
_consts = st.integers(-9, 9)


def _exprs() -> st.SearchStrategy[E.Node]:
    leaves = st.one_of(st.sampled_from([E.Var(n) for n in NAMES]), _consts.map(E.Const))

    def extend(inner):
        arith = st.builds(E.Arith, st.sampled_from(["+", "-", "*"]), inner, inner)
        # divisors: mostly constants (positive and negative), sometimes an expression
        divisor = st.one_of(st.integers(-6, 6).filter(bool).map(E.Const), inner)
        div = st.builds(E.Arith, st.sampled_from(["//", "%"]), inner, divisor)
        call = st.builds(E.Call, st.sampled_from(["min", "max"]), st.lists(inner, min_size=2, max_size=3).map(tuple))
        cond = st.builds(E.Cmp, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), inner, inner)
        ite = st.builds(E.Ite, cond, inner, inner)
        return st.one_of(arith, div, div, st.builds(E.Neg, inner), call, ite)

    return st.recursive(leaves, extend, max_leaves=10)


def _conds() -> st.SearchStrategy[E.Node]:
    ints = _exprs()
    cmp = st.builds(E.Cmp, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), ints, ints)
    return st.recursive(cmp, lambda inner: st.one_of(
        st.builds(E.Not, inner), st.lists(inner, min_size=2, max_size=3).map(lambda xs: E.And(tuple(xs))),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: E.Or(tuple(xs)))), max_leaves=4)


def _value(node: E.Node, point: dict[str, int]):
    try:
        return E.evaluate(node, point)
    except (E.ExprError, ZeroDivisionError):
        return None


_points = st.fixed_dictionaries({n: st.integers(-50, 50) for n in NAMES})


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(_exprs(), st.lists(_points, min_size=1, max_size=6))
def test_the_normal_form_of_an_integer_expression_has_its_value_everywhere_it_is_defined(node, points):
    out = normal(node)
    assert E.free_names(out) <= E.free_names(node)
    for p in points:
        want = _value(node, p)
        if want is not None:
            assert _value(out, p) == want, (E.to_text(node), E.to_text(out), p)


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
@settings(max_examples=400, deadline=None)
@given(_conds(), st.lists(_points, min_size=1, max_size=6))
def test_the_normal_form_of_a_condition_has_its_truth_everywhere_it_is_defined(node, points):
    out = normal(node)
    for p in points:
        want = _value(node, p)
        if want is not None:
            assert _value(out, p) is want, (E.to_text(node), E.to_text(out), p)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(_exprs())
def test_the_normal_form_is_a_fixed_point(node):
    assert normal(normal(node)) == normal(node), (E.to_text(node), E.to_text(normal(node)), E.to_text(normal(normal(node))))


# Each rewrite rule as an identity, proved by z3 for all integers (x, y, r, q unbounded; the divisors are
# the rule's constants, both signs where the rule claims them)
_RULES = [
    ("(x - {k}) // {s} + 1", "(x - {k} + {s}) // {s}"),  # an output size, two spellings
    ("(x + {c} * {s}) // {s}", "x // {s} + {c}"),  # constants out of a floor
    ("(x // {s}) // {t}", "x // ({s} * {t})"),  # nested floors, positive constants
    ("-((-x) // {s})", "(x + {s} - 1) // {s}"),  # the ceiling, two spellings
    ("x % {s}", "x - {s} * (x // {s})"),
    ("x // -{s}", "(-x) // {s}"),
    ("(2 * x + 1) // (2 * {s})", "x // {s}"),  # a gcd out of numerator and divisor
    ("(x // {s} + y) // {t}", "(x + {s} * y) // ({s} * {t})"),
    ("min(x + {c}, y + {c})", "min(x, y) + {c}"),
]


@pytest.mark.parametrize("left,right", _RULES)
@pytest.mark.parametrize("s,t,k,c", [(1, 1, 0, 0), (2, 3, 3, -2), (3, 2, 5, 7), (7, 4, 1, -9)])
def test_each_rewrite_is_an_identity_over_all_integers_proved_by_z3(left, right, s, t, k, c):
    v = {n: z3.Int(n) for n in ("x", "y")}
    a, b = (E.bind(E.parse(x.format(s=s, t=t, k=k, c=c)), {}) for x in (left, right))
    side: list = []
    solver = z3.Solver()
    solver.add(*side, to_z3(a, v, side) != to_z3(b, v, side))
    assert solver.check() == z3.unsat
    assert normal(a) == normal(b)  # and the normaliser makes them one term
    # and the normal form itself is equal to the original, for all integers
    for x in (a, b):
        solver = z3.Solver()
        solver.add(to_z3(x, v, []) != to_z3(normal(x), v, []))
        assert solver.check() == z3.unsat


@pytest.mark.parametrize("spellings", [
    ["(H - 3) // 2 + 1", "(H - 3 + 2) // 2", "(H + 2 - 3) // 2", "-((2 - H) // 2)", "(H - 2 + 1) // 2"],
    ["(H + 2 * 1 - 1 * (3 - 1) - 1) // 2 + 1", "(H + 2 - 3) // 2 + 1 + 0", "1 + (H - 1) // 2"],
    ["(L + 31) // 32 * 32", "-(-L // 32) * 32", "32 * ((L + 31) // 32)"],
    ["L % 8", "L - 8 * (L // 8)", "L - L // 8 * 8"],
    ["min((H - 1) // 2 + 1, (H + 1) // 2)", "(H + 1) // 2 + 0"],
    ["max(H + 1, W + 1)", "max(W, H) + 1", "1 + max(H, W)"],
    ["(H // 2) // 2", "H // 4", "((H + 0) // 2) // 2"],
])
def test_equivalent_spellings_are_one_term(spellings):
    forms = {normal(E.parse(t)) for t in spellings}
    assert len(forms) == 1, [E.to_text(f) for f in forms]


def test_conditions_are_one_form_and_fold():
    assert normal(E.parse("H > 1")) == normal(E.parse("2 * H - 4 >= 0")) == normal(E.parse("not (H <= 1)"))
    assert normal(E.parse("2 * H == 3")) == E.FALSE and normal(E.parse("2 * H != 3")) == E.TRUE
    eq = E.parse("((H - 3) // 2 + 1) * ((W - 3) // 2 + 1) == -((2 - H) // 2) * -((2 - W) // 2)")
    assert normal(eq) == E.TRUE


def test_a_cancelled_division_keeps_its_divisor_non_zero_for_the_solver():
    s = Solver([Bounds("x", 0, 9), Bounds("y", 0, 3)])
    assert normal(E.parse("x // y - x // y")) == E.Const(0)
    r = s.satisfiable([E.parse("x // y - x // y == 0"), E.parse("y == 0")])
    assert r.sat is Sat.UNSAT  # x // 0 is undefined: no point, as before normalising


def test_too_large_to_expand_is_left_as_written():
    big = E.parse(" * ".join(f"(a{i} + b{i} + 1)" for i in range(8)))
    assert normal(big) == big
