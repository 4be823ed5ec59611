"""fuzz runs torch.export's record of the outputs too (``_extract_tensor_metadata``: contiguity in each memory
format, which with backed sizes guards an output size against 1). pdist's output ``N * (N - 1) // 2`` is guarded
``>= 2`` there; the exported program keeps the guard and refuses N = 2, which eager takes. verify reported it
(SC022) and fuzz passed (hunt 47)."""

from __future__ import annotations

import pytest

from tests.conftest import KERNELS


@pytest.mark.slow  # a fuzz run
def test_fuzz_reports_the_guard_torch_exports_record_of_the_output_installs():
    from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op

    r = fuzz_op("aten::_pdist_forward", contract=str(KERNELS / "pdist.toml"),
                options=FuzzOptions(examples=60, seed=1, cases=("p=2",), verify_examples=False))
    assert r.verdict == "fail", r.notes
    (f,) = r.failures
    assert f.code.value == "SC022" and "record of the op's output" in f.message and "N * (N - 1) // 2" in f.got


def test_the_record_is_run_where_every_output_size_is_2_or_more():
    from shapecheck.kernel import sources
    from shapecheck.kernel.load import load_target
    from shapecheck.trace.fake_run import fake_run

    contract, kernel = load_target("aten::_pdist_forward", str(KERNELS / "pdist.toml"), sources.from_options(None, None))
    case = next(c for c in contract.cases() if c.id == "p=2")
    recorded = fake_run(kernel, case, {"N": 4, "M": 3}, record_outputs=True)
    assert any(g.origin.startswith("torch.export's record") for g in recorded.guards)
    assert not any(g.origin.startswith("torch.export's record") for g in fake_run(kernel, case, {"N": 4, "M": 3}).guards)
    # an output size of 1 (N = 2): the record would pin it to 1, and is left out
    assert not any(g.origin.startswith("torch.export's record")
                   for g in fake_run(kernel, case, {"N": 2, "M": 3}, record_outputs=True).guards)


def test_a_run_that_left_the_record_out_is_not_reused_where_the_record_is_made():
    """A run at N = 2 (output size 1: no record) met every guard at N = 4 and stood for it, so no example after
    it saw the record's guard; a recorded run stands only where the record is made too."""
    from shapecheck.kernel import sources
    from shapecheck.kernel.load import load_target
    from shapecheck.trace.fake_run import fake_run
    from shapecheck.trace.reuse import TraceReuse

    contract, kernel = load_target("aten::_pdist_forward", str(KERNELS / "pdist.toml"), sources.from_options(None, None))
    case = next(c for c in contract.cases() if c.id == "p=2")
    reuse = TraceReuse()

    def record_guards(run):
        return [str(g.expr) for g in run.guards if g.origin.startswith("torch.export's record")]

    first = fake_run(kernel, case, {"N": 2, "M": 3}, record_outputs=True, reuse=reuse)
    assert first.recorded is False and not record_guards(first)
    later = fake_run(kernel, case, {"N": 4, "M": 3}, record_outputs=True, reuse=reuse)
    assert later.recorded is True and record_guards(later), later.guards
    assert record_guards(later) == record_guards(fake_run(kernel, case, {"N": 4, "M": 3}, record_outputs=True))
    # and a recorded run stands for a later example where the record is made as well
    hits = reuse.hits
    again = fake_run(kernel, case, {"N": 5, "M": 7}, record_outputs=True, reuse=reuse)
    assert reuse.hits == hits + 1 and again.recorded is True and record_guards(again) == record_guards(later)
