"""A region's assumptions in the form torch takes cheapest (trace.run.range_bounds): dim ranges, dims fixed to
one value, and the assumptions left. The three together must describe exactly the region's points."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck._torch.core import AssumptionRejected
from shapecheck.logic import expr as E
from shapecheck.trace.run import range_bounds

DIMS = (("A", 0, 6), ("B", 1, 5), ("C", 3, 3))  # C: a dim the contract itself fixes


def case(dims=DIMS):
    return SimpleNamespace(dims=[SimpleNamespace(name=n, min=lo, max=hi) for n, lo, hi in dims])


OPS = ("==", "!=", "<", "<=", ">", ">=")
atoms = st.one_of(
    st.builds(lambda n, op, c: E.Cmp(op, E.Var(n), E.Const(c)), st.sampled_from("ABC"), st.sampled_from(OPS),
              st.integers(-1, 7)),
    st.builds(lambda n, op, c: E.Cmp(op, E.Const(c), E.Var(n)), st.sampled_from("AB"), st.sampled_from(OPS),
              st.integers(-1, 7)),
    st.builds(lambda a, op, b: E.Cmp(op, E.Var(a), E.Var(b)), st.sampled_from("ABC"), st.sampled_from(OPS),
              st.sampled_from("ABC")),
    st.builds(lambda a, op, b: E.Cmp(op, E.Arith("+", E.Var(a), E.Var(b)), E.Const(6)), st.sampled_from("AB"),
              st.sampled_from(OPS), st.sampled_from("BC")),
)
conditions = st.one_of(atoms, atoms.map(E.Not))


def points():
    for values in itertools.product(*(range(lo, hi + 1) for _, lo, hi in DIMS)):
        yield dict(zip((n for n, _, _ in DIMS), values))


def holds(conds, p) -> bool:
    return all(E.evaluate(c, p) for c in conds)


@pytest.mark.slow  # over 0.5 s on an idle core
@settings(max_examples=300, deadline=None)
@given(st.lists(conditions, max_size=6))
def test_ranges_fixed_values_and_the_rest_describe_exactly_the_region(assumptions):
    region = [p for p in points() if holds(assumptions, p)]
    try:
        bounds, fixed, rest = range_bounds(case(), assumptions)
    except AssumptionRejected:
        assert region == []  # refused only where no point is left
        return
    assert not set(bounds) & set(fixed)
    assert "C" not in fixed  # the contract's own fixed dim stays a size
    described = [p for p in points()
                 if all(bounds[n][0] <= p[n] <= bounds[n][1] for n in bounds)
                 and all(p[n] == v for n, v in fixed.items()) and holds([a for a, _ in rest], p)]
    assert described == region
    for a, original in rest:  # what is left names no fixed dim, and each keeps the assumption it came from
        assert not E.free_names(a) & set(fixed)
        assert original in assumptions


def test_a_bound_by_a_constant_becomes_the_range_and_a_single_value_a_constant():
    bounds, fixed, rest = range_bounds(case(), [E.parse("A <= 4"), E.parse("not (B < 2)"), E.parse("A != 3"),
                                                E.parse("B == 4"), E.parse("A + B <= 7")])
    assert fixed == {"B": 4}
    assert bounds == {"A": (0, 4), "C": (3, 3)}
    assert [E.to_text(a) for a, _ in rest] == ["A != 3", "A + 4 <= 7"]  # B = 4 put in
    assert rest[1][1] == E.parse("A + B <= 7")


def test_a_value_fixed_by_two_bounds_is_a_constant_too():
    bounds, fixed, rest = range_bounds(case(), [E.parse("A >= 2"), E.parse("A <= 2"), E.parse("B > A + 1")])
    assert fixed == {"A": 2} and bounds["B"] == (4, 5) and rest == []
    _, fixed, rest = range_bounds(case(), [E.parse("A == 2"), E.parse("B * A != 6")])
    assert fixed == {"A": 2} and rest == [(E.parse("B * 2 != 6"), E.parse("B * A != 6"))]


@pytest.mark.parametrize("conds", [["A > 4", "A < 3"], ["B == 2", "B != 2"], ["A == 1", "B == 2", "A + B > 6"]])
def test_a_region_with_no_point_is_refused(conds):
    with pytest.raises(AssumptionRejected):
        range_bounds(case(), [E.parse(c) for c in conds])
