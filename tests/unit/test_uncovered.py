"""``explore.uncovered``: the rest of the space outside an earlier case's leaf regions, as small conjunctions
(the branches of the exploration tree no leaf took), never as the negated union that torch's range refinement
turns into exponentially many clauses. Checked by enumeration: the regions and the rest cover every point,
and no point of the rest lies in a region."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.logic import expr as E
from shapecheck.prove.explore import uncovered

DIMS = ("x", "y")
RANGE = range(0, 5)

guards = st.builds(lambda d, op, c: E.parse(f"{d} {op} {c}"), st.sampled_from(DIMS),
                   st.sampled_from(["<=", "==", "!=", ">"]), st.integers(0, 4))


def trees(depth: int):
    leaf = st.booleans().map(lambda keep: ("leaf", keep))
    if depth == 0:
        return leaf
    sub = trees(depth - 1)
    branch = st.tuples(st.just("branch"), guards, sub, sub)
    values = st.tuples(st.just("values"), st.sampled_from(DIMS), st.lists(st.tuples(st.integers(0, 4), sub),
                                                                          min_size=1, max_size=3, unique_by=lambda t: t[0]))
    return st.one_of(leaf, branch, values)


def paths(tree, prefix=()):
    """The kept leaves' paths of an exploration tree: a guard's two sides, or a specialisation's values."""
    if tree[0] == "leaf":
        return [list(prefix)] if tree[1] else []
    if tree[0] == "branch":
        _, g, yes, no = tree
        return paths(yes, (*prefix, g)) + paths(no, (*prefix, E.negate(g)))
    _, dim, kids = tree
    return [p for v, kid in kids for p in paths(kid, (*prefix, E.parse(f"{dim} == {v}")))]


def holds(region, point) -> bool:
    return all(E.evaluate(c, point) is True for c in region)


@pytest.mark.slow  # over 0.5 s on an idle core
@settings(max_examples=300, deadline=None)
@given(trees(3))
def test_the_regions_and_the_rest_cover_every_point_and_the_rest_meets_no_region(tree):
    regions = paths(tree)
    rest = uncovered(regions)
    for xy in itertools.product(RANGE, RANGE):
        point = dict(zip(DIMS, xy))
        in_region = any(holds(r, point) for r in regions)
        in_rest = any(holds(r, point) for r in rest)
        assert in_region or in_rest, (point, regions, rest)
        assert not (in_region and in_rest), (point, regions, rest)
        assert sum(holds(r, point) for r in rest) <= 1  # the rest's regions are disjoint too


def test_the_rest_of_a_guard_whose_one_side_raised_is_that_side():
    """The shape of the case that hung before: every leaf on ``B3 == 2``, ten of them over four more guards;
    the rest is ``B3 != 2`` alone, not the negation of ten conjunctions."""
    guards_ = [E.parse(t) for t in ("A1 != 1", "A0 != 1", "B1 != 1", "B2 != 1")]
    regions = [[E.parse("B3 == 2"), *(g if bit else E.negate(g) for g, bit in zip(guards_, bits))]
               for bits in itertools.product((True, False), repeat=4)]
    assert [[E.to_text(c) for c in r] for r in uncovered(regions)] == [["B3 != 2"]]
    assert uncovered([]) == [[]]
