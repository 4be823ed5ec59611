"""The Dim ranges a fix offers for each side of a one-dim guard are the side's own pieces (hunt 53: the side of
``B == 1`` that is false was offered as ``Dim('B', min=0, max=65536)``, which holds B = 1)."""

from __future__ import annotations

import pytest

from shapecheck.logic import expr as E


@pytest.mark.parametrize(("side", "pieces"), [
    ("B != 1", [(0, 0), (2, 65536)]),
    ("B == 1", [(1, 1)]),
    ("B <= 8", [(0, 8)]),
    ("B % 2 == 0", []),  # more pieces than a fix lists
])
def test_a_sides_ranges_are_its_pieces(side, pieces):
    from shapecheck.logic.solver import Bounds, Solver
    from shapecheck.prove.fixes import _intervals

    solver = Solver([Bounds("B", 0, 65536)])
    assert _intervals(solver, E.TRUE, E.parse(side), "B") == pieces
