"""The audit compares a fake with the eager kernel at one thread count (hunt 52): the forked eager worker runs one
thread (OpenMP's pool does not survive a fork), and the fakes ran at the process's count, so an op that returns
the thread count was SC038 with 2 threads and clean with OMP_NUM_THREADS=1."""

from __future__ import annotations

import pytest


@pytest.mark.slow  # an audit with the eager worker
def test_an_op_returning_the_thread_count_is_clean_whatever_the_processs_count():
    import torch

    from shapecheck.audit.run import AuditOptions, run_audit

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        run = run_audit(("auditthreads::*",), ("tests.kernels.audit_threads",), jobs=1,
                        options=AuditOptions(cache=False))
        assert torch.get_num_threads() == 2  # put back after the audit
    finally:
        torch.set_num_threads(before)
    (rec,) = run.records
    assert rec["findings"] == [] and rec.get("eager", {}).get("status") == "compared", rec
    assert run.exit_code == 0


def test_a_pattern_that_matches_none_of_the_imports_ops_names_their_namespace():
    """hunt 52: a typo in --ops said the import "defines none with a fake" where it defines six."""
    from shapecheck.audit.run import run_audit
    from shapecheck.errors import UserError

    with pytest.raises(UserError) as err:
        run_audit(("auditthreads::cuont*",), ("tests.kernels.audit_threads",), jobs=1)
    assert "registers ops in auditthreads: check the pattern" in str(err.value), err.value


def test_a_check_the_eager_kernel_gains_is_a_new_finding_beside_a_baseline():
    """hunt 52: SC041's expression is "the fake returns where the eager kernel raises", so its fingerprint (rule,
    op, expression, file, function) accepted any missing check once one was in the baseline."""
    from shapecheck.ci.baseline import audit_fingerprint

    rec = {"op": "lib::rows.default"}
    loc = {"file": __file__, "function": "_", "line": 3}

    def finding(error):
        return {"code": "SC041", "expr": "the fake returns where the eager kernel raises", "class": "fake-accepts",
                "location": loc, "message": f"at x_0=5: the eager kernel: RuntimeError: {error}"}

    old = audit_fingerprint(rec, finding("x must be (N, 3), got 2 columns"))
    assert old == audit_fingerprint(rec, finding("x must be (N, 3), got 4 columns"))  # numbers aside
    assert old != audit_fingerprint(rec, finding("at most 4 rows in version 2"))


def test_an_untraced_excuse_that_names_no_op_overload_is_said():
    """hunt 52: an excuse for a name torch has no op for (or with no overload, which no record's name equals)
    excused nothing, in silence."""
    from shapecheck.audit.run import AuditRun
    from shapecheck.render.audit import coverage_line

    run = AuditRun([], 0, (1, 1), 0.0, "", excused={"aten::mm.default": "why", "aten::mm": "no overload",
                                                     "lib::gone.default": "typo", "sph_ok": "no namespace"})
    assert run.coverage()["excused_unknown"] == ["aten::mm", "lib::gone.default", "sph_ok"]
    assert "3 untraced op(s) the config or baseline excuses name no op" in coverage_line(run)
