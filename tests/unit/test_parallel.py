"""--jobs: the cases' first traces in forked workers. A report must not depend on the number of jobs, and a
worker that fails must only cost time."""

import dataclasses
import os
import sys

import pytest

from shapecheck.errors import UserError
from shapecheck.kernel.sources import NotApplicable
from shapecheck.prove.verify import Options, verify_op
from shapecheck.trace import parallel
from shapecheck.trace.run import Finished
from tests.conftest import KERNELS, SDPA_MPS

K = f"{KERNELS / 'sdpa_kernels.py'}"
needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="--jobs > 1 needs os.fork (POSIX)")
# 12 cases of ranks 3, 4 and 5: enough for the workers to start (parallel.MIN_CASES)
MIXED = ("mask=bool,is_causal=false,dtype=float32", "mask=none,is_causal=true,dtype=float16")


def comparable(report):
    """A report without its timing."""
    d = dataclasses.asdict(report)
    d.pop("seconds")
    return d


@needs_fork
@pytest.mark.parametrize("fn", [None, "regressed", "out_rank_not_restored", "check_L_le_4096",
                                "branch_changes_shape", "branch_with_guard_or_false",
                                "rows_from_a_float", "guard_on_true_division", "rows_by_sym_ite"])
@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_report_is_the_same_for_every_jobs(fn):
    meta = f"{K}:{fn}" if fn else None
    reports = [verify_op(SDPA_MPS, meta=meta, options=Options(cases=MIXED, jobs=j)) for j in (1, 2, 3)]
    assert len(reports[0].cases) >= parallel.MIN_CASES
    assert comparable(reports[0]) == comparable(reports[1]) == comparable(reports[2])
    if fn is not None:
        assert reports[0].violations  # the comparison covers findings, not only passes


@needs_fork
@pytest.mark.slow
def test_cases_that_share_an_earlier_cases_regions_run_whole_in_workers(monkeypatch):
    """The default mode's shortcut with --jobs: once a case has explored its violating first guard in full, the
    later cases expected to share its regions run whole in the workers, and the report is that of one process."""
    from shapecheck.prove import verify as V

    delivered: list[set[str]] = []
    real = V._share_ahead

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        delivered.append(set(out))
        return out

    monkeypatch.setattr(V, "_share_ahead", spy)
    two = verify_op(SDPA_MPS, meta=f"{K}:regressed", options=Options(cases=MIXED, jobs=2))
    shared = {c.case for c in two.cases if c.shared_with}
    assert shared and delivered and set().union(*delivered) == shared
    monkeypatch.setattr(V, "_share_ahead", real)
    one = verify_op(SDPA_MPS, meta=f"{K}:regressed", options=Options(cases=MIXED, jobs=1))
    assert comparable(one) == comparable(two)


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
@needs_fork
@pytest.mark.parametrize("fn", ["regressed", "branch_with_guard_or_false"])
def test_whole_cases_in_workers_when_cases_are_independent(fn):
    """--full and --explore: no case depends on another, so whole cases run in workers; same report."""
    for extra in ({"full": True}, {"explore": True, "max_traces": 16}):
        one, two = (verify_op(SDPA_MPS, meta=f"{K}:{fn}", options=Options(cases=MIXED, jobs=j, **extra))
                    for j in (1, 2))
        assert comparable(one) == comparable(two) and one.violations


@pytest.mark.slow
@needs_fork
def test_cases_the_kernel_cannot_take_cross_the_pipe_as_skips():
    # the March-2026 signature has no enable_gqa: those cases are NotApplicable, in workers too
    one = verify_op(SDPA_MPS, meta=f"{K}:regressed", options=Options(cases=("enable_gqa=true",), max_traces=4))
    two = verify_op(SDPA_MPS, meta=f"{K}:regressed",
                    options=Options(cases=("enable_gqa=true",), max_traces=4, jobs=2))
    assert len(two.cases) >= parallel.MIN_CASES and all(c.skipped for c in two.cases)
    assert comparable(one) == comparable(two)


@needs_fork
def test_prefetch_covers_every_case(sdpa_contract):
    from shapecheck.kernel.load import installed_kernel

    kernel = installed_kernel(sdpa_contract.op)
    cases = list(sdpa_contract.cases())[:20]
    got = parallel.prefetch_roots(kernel, cases, 2)
    assert set(got) == {c.id for c in cases}
    assert all(isinstance(t, Finished) for t in got.values())


def test_no_workers_when_they_would_not_pay(sdpa_contract):
    from shapecheck.kernel.load import installed_kernel

    kernel = installed_kernel(sdpa_contract.op)
    cases = list(sdpa_contract.cases())
    assert parallel.prefetch_roots(kernel, cases, 1) == {}
    assert parallel.prefetch_roots(kernel, cases[: parallel.MIN_CASES - 1], 2) == {}


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
@needs_fork
def test_a_failed_worker_only_costs_time(monkeypatch, sdpa_contract):
    from shapecheck.kernel.load import installed_kernel

    kernel = installed_kernel(sdpa_contract.op)
    cases = list(sdpa_contract.cases())[:12]

    def broken_worker(fn, take, key):  # a worker that takes two cases and dies before sending anything
        pid = os.fork()
        if pid == 0:
            take()
            take()
            os._exit(3)
        r, w = os.pipe()
        os.close(w)
        return pid, r

    monkeypatch.setattr(parallel, "_fork_worker", broken_worker)
    got = parallel.prefetch_roots(kernel, cases, 2)
    # the parent's own cases arrived; the two the dead worker took are left for the caller to trace
    assert len(got) == len(cases) - 2
    for options in (Options(cases=MIXED, jobs=2), Options(cases=MIXED, jobs=2, full=True)):
        full = verify_op(SDPA_MPS, options=options)
        assert full.verdict.value == "pass" and len(full.cases) == 12 and all(c.traces == 1 for c in full.cases)


def test_collect_ignores_garbage_from_a_worker():
    r, w = os.pipe()
    pid = os.fork() if hasattr(os, "fork") else None
    if pid is None:
        pytest.skip("needs os.fork")
    if pid == 0:
        os.close(r)
        os.write(w, b"not a pickle")
        os._exit(0)
    os.close(w)
    assert parallel._collect(pid, r) == {}


def test_auto_jobs_is_a_positive_count():
    n = parallel.auto_jobs()
    assert n >= 1
    if not sys.platform.startswith("linux"):
        assert n == 1
    assert parallel.resolve_jobs(0) == n and parallel.resolve_jobs(3) in (1, 3)


def test_root_wraps_not_applicable(sdpa_contract):
    from shapecheck.kernel.load import function_kernel

    kernel = function_kernel(f"{K}", "regressed")
    case = next(c for c in sdpa_contract.cases() if "enable_gqa=true" in c.id)
    assert isinstance(parallel._root(kernel, case, False), NotApplicable)


def test_unknown_case_filter_is_a_usage_error():
    with pytest.raises(UserError, match="no case id contains 'rank=7'"):
        verify_op(SDPA_MPS, options=Options(cases=("rank=7",)))
