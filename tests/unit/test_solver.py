from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck import expr as E
from shapecheck.solver import Bounds, Outcome, Solver


def solver():
    return Solver([Bounds("L", 1, 2**31 - 1), Bounds("S", 1, 2**31 - 1), Bounds("k", -7, 7)])


def test_proves_and_refutes_with_a_real_counterexample():
    s = solver()
    assert s.implies([E.parse("L <= 8")], E.parse("L < 9")).outcome == Outcome.PROVED
    r = s.implies([], E.parse("L <= 8"))
    assert r.outcome == Outcome.REFUTED and r.model["L"] > 8


def test_small_model_is_readable():
    m = solver().small_model([E.parse("not (L <= 8)")])
    assert m["L"] == 9 and m["S"] == 1


@settings(max_examples=60, deadline=None)
@given(st.integers(-40, 40), st.integers(-7, 7).filter(lambda v: v != 0))
def test_floor_semantics_match_python_for_negative_operands(a, k):
    s = solver()
    expr = E.parse(f"({a}) // k == {a // k} and ({a}) % k == {a % k}")
    r = s.satisfiable([E.parse(f"k == {k}"), E.negate(expr)])
    assert r.outcome == Outcome.PROVED


def test_extreme_values():
    s = solver()
    assert s.extreme([E.parse("L <= 8")], "L", lowest=False) == 8
    assert s.extreme([E.parse("S >= 1024")], "S", lowest=True) == 1024
