"""An int argument's variants include -1 (hunt 52): with no hook, sphericart's ``l_max`` was tried at 0 and 2 only,
and its fake's missing check (the eager kernel raises at -1, the fake returns an empty output) went unseen."""

from __future__ import annotations

import pytest


@pytest.mark.slow  # an audit with the eager worker
def test_an_int_the_fake_does_not_check_below_0_is_found_at_minus_1():
    from shapecheck.audit.run import AuditOptions, run_audit

    run = run_audit(("auditneg::*",), ("tests.kernels.audit_negative",), jobs=1, options=AuditOptions(cache=False))
    (rec,) = run.records
    found = [f for f in rec["findings"] if f["class"] == "fake-accepts"]
    assert found and "l_max=-1" in found[0]["message"] and "must be non-negative" in found[0]["message"], rec
