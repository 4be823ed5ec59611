"""An op whose first inputs the eager kernel refused is compared only where a traced variant was compared with
the eager kernel at a point or more (hunt 55: a warp kernel refused the first inputs' int64 positions but took
them a rank up; the report said "0 compared" and "not compared" of an op it had compared, and a layout of the
refused inputs, compared but never traced, counted as the comparison)."""

from shapecheck.audit.compared import valid_call_traced, was_compared


def _rec(*variants):
    return {"eager": {"status": "rejected", "compared": 0}, "variants": list(variants)}


def test_a_traced_variant_compared_at_a_point_counts_and_an_untraced_layout_does_not():
    traced = {"args": "x=Tensor[rank 2, int64]", "status": "traced", "traces": 1, "compared": 7}
    layout = {"args": "x transposed", "status": "compared", "traces": 0}
    uncompared = {"args": "flag=False", "status": "traced", "traces": 1, "compared": 0}
    assert valid_call_traced([traced]) and was_compared(_rec(traced))
    assert not valid_call_traced([layout, uncompared]) and not was_compared(_rec(layout, uncompared))
    assert was_compared({"eager": {"status": "compared", "compared": 3}, "variants": []})
    assert not was_compared({"eager": {"status": "compared", "compared": 0}, "variants": []})
