"""``fuzz op`` reuses a backed-size run's trace wherever a later example meets all of its guards
(``trace/reuse.py``): the reused run gives what a fresh run gives (outputs, guards), a guard the example breaks
runs the kernel again, a run that made a size the data decides is never kept, and fuzz reports are the same with
and without reuse."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import KERNELS, ROOT

AVG_POOL = ROOT / "contracts" / "aten" / "avg_pool2d.toml"


def _load(meta: str, op: str = "aten::avg_pool2d", contract=AVG_POOL):
    from shapecheck.kernel import sources
    from shapecheck.kernel.load import load_target

    return load_target(op, str(contract), sources.from_options(meta, None))


def _case(contract, *parts):
    return next(c for c in contract.cases() if all(p in c.id for p in parts))


def _seen(run):
    """What a check reads of a run: each output's sizes, strides and dtype (or the value), and the guards."""
    import torch

    outs = [(tuple(o.shape), o.stride(), o.dtype) if isinstance(o, torch.Tensor) else repr(o) for o in run.outputs]
    return outs, [(str(g.expr), g.origin, g.fallback, g.assertion) for g in run.guards], \
        type(run.error).__name__ if run.error else None


BRANCHY = f"{KERNELS / 'pooling_kernels.py'}:avg_pool2d_branchy"


def test_an_example_inside_the_guards_reuses_the_run_and_one_across_a_guard_runs_again():
    from shapecheck.trace.fake_run import fake_run
    from shapecheck.trace.reuse import TraceReuse

    contract, kernel = _load(BRANCHY)
    # ceil mode, kernel 2, stride 2, padding 1: the last window is dropped where the size is odd
    case = _case(contract, "ceil_mode=true", "kernel=2", "stride=2", "padding=1", "memory_format=contiguous")
    reuse = TraceReuse()
    first = fake_run(kernel, case, {"N": 2, "C": 3, "H": 9, "W": 9}, reuse=reuse)
    assert first.error is None and reuse.stored == 1 and reuse.hits == 0
    same = {"N": 2, "C": 5, "H": 11, "W": 13}  # odd sizes: the branch taken again
    again = fake_run(kernel, case, same, reuse=reuse)
    assert reuse.hits == 1
    assert _seen(again) == _seen(fake_run(kernel, case, same))
    assert [tuple(o.shape) for o in again.outputs] == [(2, 5, 6, 7)]
    other = {"N": 2, "C": 5, "H": 10, "W": 11}  # an even H: not
    fresh = fake_run(kernel, case, other, reuse=reuse)
    assert reuse.hits == 1 and reuse.stored == 2
    assert _seen(fresh) == _seen(fake_run(kernel, case, other))


def test_a_dim_at_zero_is_its_own_trace():
    from shapecheck.trace.fake_run import fake_run
    from shapecheck.trace.reuse import TraceReuse

    contract, kernel = _load(BRANCHY)
    case = _case(contract, "ceil_mode=false", "kernel=2", "stride=1", "padding=0", "memory_format=contiguous")
    reuse = TraceReuse()
    fake_run(kernel, case, {"N": 3, "C": 3, "H": 4, "W": 4}, reuse=reuse)
    zero = fake_run(kernel, case, {"N": 0, "C": 3, "H": 4, "W": 4}, reuse=reuse)
    assert reuse.hits == 0 and reuse.stored == 2
    assert [tuple(o.shape) for o in zero.outputs] == [(0, 3, 3, 3)]


def test_a_run_that_makes_a_size_the_data_decides_is_never_kept():
    import importlib

    from shapecheck.trace.fake_run import fake_run
    from shapecheck.trace.reuse import TraceReuse

    importlib.import_module("tests.kernels.filter_ops")
    contract, kernel = _load(None, "sc_filter::keep_positive_fixed", KERNELS / "filter_ops_fixed.toml")
    case = next(iter(contract.cases()))
    reuse = TraceReuse()
    point = {d.name: 3 for d in case.dims}
    for _ in range(2):
        run = fake_run(kernel, case, point, reuse=reuse)
        assert run.error is None
    assert reuse.stored == 0 and reuse.hits == 0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 4), st.integers(1, 12), st.integers(1, 12)),
                min_size=1, max_size=6),
       st.sampled_from(["avg_pool2d_branchy", "avg_pool2d_sym_min", "avg_pool2d_static"]),
       st.booleans(), st.booleans())
@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_reused_run_is_what_a_fresh_run_gives(points, fn, ceil, channels_last):
    from shapecheck.logic import expr as E
    from shapecheck.trace.fake_run import fake_run
    from shapecheck.trace.reuse import TraceReuse

    contract, kernel = _load(f"{KERNELS / 'pooling_kernels.py'}:{fn}")
    case = _case(contract, f"ceil_mode={str(ceil).lower()}", "kernel=2", "stride=2", "padding=1",
                 f"memory_format={'channels_last' if channels_last else 'contiguous'}")
    reuse = TraceReuse()
    for n, c, h, w in points:
        dims = {"N": n, "C": c, "H": h, "W": w}
        if E.evaluate(case.domain, dims) is not True:
            continue
        for export_view in (False, True):
            assert _seen(fake_run(kernel, case, dims, reuse=reuse, export_view=export_view)) == \
                _seen(fake_run(kernel, case, dims, export_view=export_view)), (dims, export_view)


@pytest.mark.slow
@pytest.mark.parametrize("meta", [None, f"{KERNELS / 'sdpa_kernels.py'}:branch_with_guard_or_false",
                                  f"{KERNELS / 'sdpa_kernels.py'}:rows_by_sym_ite",
                                  f"{KERNELS / 'fuzz_mutants.py'}:branches_on_query_length"])
def test_fuzz_reports_are_the_same_with_and_without_reuse(meta, monkeypatch):
    from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op
    from shapecheck.trace import reuse
    from tests.conftest import SDPA_MPS

    options = FuzzOptions(examples=40, seed=7, verify_examples=False,
                          cases=("rank=4,mask=bool,is_causal=false,dtype=float32", "rank=3,mask=none"))
    reports = []
    for enabled in (False, True):
        monkeypatch.setattr(reuse, "ENABLED", enabled)
        r = fuzz_op(SDPA_MPS, meta=meta, options=options).to_json()
        reports.append({k: v for k, v in r.items() if k not in ("seconds", "timings", "examples_per_second")})
    assert reports[0] == reports[1]
    assert reports[0]["examples"] >= (40 if reports[0]["verdict"] == "pass" else 1)
    assert (reports[0]["verdict"] == "pass") == (meta is None)


def test_a_range_the_fake_narrows_without_a_guard_keeps_the_run_from_a_size_outside_it():
    import importlib

    from shapecheck.trace.fake_run import fake_run
    from shapecheck.trace.reuse import TraceReuse

    importlib.import_module("tests.kernels.reuse_kernels")
    contract, kernel = _load(None, "screuse::rows", KERNELS / "reuse_kernels.toml")
    case = next(iter(contract.cases()))
    reuse = TraceReuse()
    assert fake_run(kernel, case, {"N": 5}, reuse=reuse).error is None and reuse.stored == 1
    outside = fake_run(kernel, case, {"N": 10}, reuse=reuse)
    assert outside.error is not None and reuse.hits == 0  # as a fresh run: torch's range check raises
    assert _seen(fake_run(kernel, case, {"N": 3}, reuse=reuse)) == _seen(fake_run(kernel, case, {"N": 3}))
    assert reuse.hits == 1


def test_a_size_made_by_float_arithmetic_is_never_reused():
    import importlib

    from shapecheck.trace.fake_run import fake_run
    from shapecheck.trace.reuse import TraceReuse

    importlib.import_module("tests.kernels.reuse_kernels")
    contract, kernel = _load(None, "screuse::scaled", KERNELS / "reuse_scaled.toml")
    case = next(iter(contract.cases()))
    reuse = TraceReuse()
    fake_run(kernel, case, {"N": 2}, reuse=reuse)
    at31 = fake_run(kernel, case, {"N": 31}, reuse=reuse)
    assert [tuple(o.shape) for o in at31.outputs] == [(92,)] == [(int(31 * 0.3 * 10),)]
    assert reuse.stored == 0 and reuse.hits == 0


def test_floats_in_a_formula_are_seen():
    import sympy
    from torch.utils._sympy.functions import ToFloat, TruncToInt

    from shapecheck._torch.translate import has_floats

    n = sympy.Symbol("N", integer=True)
    assert has_floats(TruncToInt(3.0 * ToFloat(n))) and has_floats(sympy.Float(0.5) * n)
    assert not has_floats(2 * n + 1) and not has_floats(sympy.Max(n, 1)) and not has_floats(7)
