"""The library's own tests: shapecheck's pytest entry draws examples from each contract and checks the fake
kernel's outputs against it (``shapecheck.fuzz_test``); ``fuzz_given`` adds a check of our own on the real
CPU kernel.

``decode_attention``'s fake returns the right shape at every size, but it branches on the query length. The
fuzzer runs a fake as torch.export does (backed sizes at each example), so it sees the guard that branch
installs, as ``shapecheck gate`` (or ``verify``) proves it (SC001): its test is an expected failure until the
fake is fixed (``decode_attention_fixed`` is the fix).
"""

import pytest
import sc_custom_ops  # noqa: F401 - registers the ops
import torch
from hypothesis import settings

import shapecheck
from shapecheck.runtime.fuzz_report import GuardFailure

FEW = settings(max_examples=10, deadline=None)

test_decode_attention_fake = pytest.mark.xfail(
    raises=GuardFailure, strict=True, reason="the fake branches on the query length (L <= 8): torch.export "
    "specialises L (SC001)")(FEW(shapecheck.fuzz_test("sc_custom_ops::decode_attention")))
test_decode_attention_fixed_fake = FEW(shapecheck.fuzz_test("sc_custom_ops::decode_attention_fixed"))
test_fused_moe_fake = FEW(shapecheck.fuzz_test("sc_custom_ops::fused_moe"))


@FEW
@shapecheck.fuzz_given("sc_custom_ops::decode_attention_fixed", max_elements=4096)
def test_the_cpu_kernel_agrees_with_the_fake(example):
    args = example.arguments("cpu")
    real = torch.ops.sc_custom_ops.decode_attention_fixed(**args)
    fake = torch.ops.sc_custom_ops.decode_attention_fixed(**{k: v.to("meta") if isinstance(v, torch.Tensor) else v
                                                             for k, v in args.items()})
    assert real.shape == fake.shape and real.dtype == fake.dtype
