"""The audit compares a fake with its eager kernel past each constant bound of the fake's output formulas
(``points.formula_bounds``): a cap the eager kernel lacks is found there, and a cap it shares is no finding.
Kernels: tests/kernels/audit_bounds.py."""

from __future__ import annotations

import pytest

from shapecheck.logic import expr as E

LIBRARY = "tests.kernels.audit_bounds"


def test_a_min_gives_a_point_past_its_cap_and_a_conditional_size_both_sides():
    from shapecheck.audit.points import formula_bounds

    asked = []

    def near(conds, keep, loose=True):
        asked.append([E.to_text(c) for c in conds])
        return {"x_0": len(asked)}

    paths = [{"when": "true", "outputs": ["(min(x_0, 1024), 2)"]}]
    assert formula_bounds(paths, {"x_0", "x_1"}, near) == [{"x_0": 1}]
    assert asked[0][0] == "x_0 == 1025"
    asked.clear()
    paths = [{"when": "true", "outputs": ["(x_0 if x_0 <= 256 else 256,)"]}]
    assert len(formula_bounds(paths, {"x_0"}, near)) == 2
    assert {a[0] for a in asked} == {"x_0 <= 256", "x_0 > 256"}


def test_a_floor_division_or_modulo_by_a_constant_gives_a_point_at_that_constant():
    from shapecheck.audit.points import formula_bounds

    asked = []

    def near(conds, keep, loose=True):
        asked.append(E.to_text(conds[0]))
        return {"x_0": len(asked), "x_1": 3}

    formula_bounds([{"when": "true", "outputs": ["(x_0 - x_0 // 1024, x_1)"]}], {"x_0", "x_1"}, near)
    assert asked == ["x_0 == 1024"]
    asked.clear()
    formula_bounds([{"when": "true", "outputs": ["(x_0 % 4096, x_1 // 1)"]}], {"x_0", "x_1"}, near)
    assert asked == ["x_0 == 4096"]  # a division by 1 changes nothing


def test_a_cap_past_65536_is_tried_where_the_inputs_stay_small_enough():
    """hunt 52: bounds above 65536 were never tried (a fake's ``sym_min(x_0, 100000)`` passed); the limit is now
    the elements an input holds at the point."""
    from shapecheck.audit.points import BOUND_ELEMENTS, formula_bounds

    def near(conds, keep, loose=True):
        wanted = int(E.to_text(conds[0]).split("== ")[1])
        return {"x_0": wanted, "x_1": 3, "w_0": 4096}

    paths = [{"when": "true", "outputs": ["(min(x_0, 100000), x_1)"]}]
    assert formula_bounds(paths, {"x_0", "x_1", "w_0"}, near) == [{"x_0": 100001, "x_1": 3, "w_0": 4096}]
    paths = [{"when": "true", "outputs": [f"(min(x_0, {BOUND_ELEMENTS // 2}), x_1)"]}]
    assert formula_bounds(paths, {"x_0", "x_1"}, near) == []  # 3 columns of 2**23 + 1 rows: too many


@pytest.mark.slow  # an audit
def test_a_cap_the_eager_kernel_lacks_is_found_past_it_and_a_shared_one_is_not():
    from shapecheck.audit.run import run_audit

    run = run_audit(("auditbounds::*",), (LIBRARY,), jobs=1)
    recs = {r["op"].split("::")[1]: r for r in run.records}
    (f,) = recs["capped.default"]["findings"]
    assert f["class"] == "eager-shape" and f["counterexample"]["x_0"] == 1025, f
    assert "returns [1025, 2], the fake [1024, 2]" in f["message"]
    assert recs["tiles.default"]["findings"] == [] and recs["tiles.default"]["status"] == "clean"
    # a floor division by a constant is tried at that constant (hunt 55: clean at every drawn point below it)
    found = {f["class"]: f for f in recs["blocks.default"]["findings"]}
    assert found["eager-shape"]["counterexample"]["x_0"] == 1024, found
    # and ``x_0 - x_0 // 1024 >= 0``, the size's own check, is one torch.export cannot prove (SC035)
    assert set(found) == {"eager-shape", "undischargeable"}, found
