"""The audit's exploration of a fallback chain: the trace that asked a guard_or_* stands for the side torch assumed,
the kernel's own fallbacks as its helpers' (pixel_shuffle's ``self_0 == 0``, ``self_1 == 0``, ...: 4 traces for the
same path), and a helper's fallback that torch answers the same way again under the assumption of its other side
is said and left, not traced again until the trace bound (linalg_pinv: 12 traces, 7 regions left)."""

import pytest

from shapecheck.audit.run import AuditOptions, audit_op

GUARDS_ONLY = AuditOptions(cache=False, variants=0, differential=False)


@pytest.mark.slow  # two audits of torch's ops
def test_a_fallback_chain_of_the_kernels_own_costs_one_trace():
    rec = audit_op("aten::pixel_shuffle.default", None, GUARDS_ONLY)
    assert rec["status"] == "clean" and rec["traces"] == 1, rec
    assert sum("torch answered" in n for n in rec["notes"]) == 3  # each fallback still said


@pytest.mark.slow
def test_a_helper_fallback_torch_answers_again_under_its_other_side_is_said_not_traced_to_the_bound():
    rec = audit_op("aten::linalg_pinv.rcond_tensor", None, GUARDS_ONLY)
    # the first trace, the zero region's, then one a side torch took against the region: the helpers' 0/1 sides
    # between them are stood for by the trace that asked, the contradicted contiguity answer notwithstanding
    assert rec["traces"] <= 6, rec["traces"]
    assert not any(n.startswith("stopped after") for n in rec["notes"]), rec["notes"]
    (note,) = [n for n in rec["notes"] if n.startswith("torch could not take the side ")]
    assert "guard_or_* answered False again" in note
    assert rec["status"] == "findings" and rec["partial"]  # that side untraced: explored in part, never a pass
    assert [f["expr"] for f in rec["findings"]] == ["self_0 * self_1 == 0"]
