from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.logic import expr as E
from shapecheck.logic.solver import Bounds, Outcome, Sat, Solver


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
    assert r.sat is Sat.UNSAT


def test_extreme_values():
    s = solver()
    assert s.extreme([E.parse("L <= 8")], "L", lowest=False) == 8
    assert s.extreme([E.parse("S >= 1024")], "S", lowest=True) == 1024


_ATOMS = ["a + b >= {n}", "a * b == {n}", "b - a >= {n}", "(a + {n}) % 3 == 1", "a // 2 != {n}", "c >= a",
          "max(a, b) == {n}", "min(b, c) < {n}"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_ATOMS), st.integers(0, 9)), min_size=1, max_size=3),
       st.booleans())
def test_small_model_is_the_least_model_and_does_not_depend_on_history(atoms, warm):
    """Against brute force on a small box: the least model in (a, b, c) order, or None when there is none,
    the same whether or not the solver answered other queries first."""
    conds = [E.parse(a.format(n=n)) for a, n in atoms]
    s = Solver([Bounds("a", 1, 9), Bounds("b", 1, 9), Bounds("c", 0, 4)])
    if warm:  # unrelated queries first: z3's own models would change, the least model must not
        s.satisfiable([E.parse("a * b == 12")])
        s.small_model([E.parse("a + b + c == 15")])
    box = [(a, b, c) for a in range(1, 10) for b in range(1, 10) for c in range(0, 5)]
    sat = [p for p in box if all(E.evaluate(cond, dict(zip("abc", p))) for cond in conds)]
    got = s.small_model(conds)
    if not sat:
        assert got is None
    else:
        assert (got["a"], got["b"], got["c"]) == min(sat)
        lo = min(p[1] for p in sat)
        hi = max(p[1] for p in sat)
        assert s.extreme(conds, "b", lowest=True) == lo and s.extreme(conds, "b", lowest=False) == hi
