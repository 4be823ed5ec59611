"""The library's own tests: shapecheck's pytest entry draws examples from each contract and checks the fake
kernel's outputs against it (``shapecheck.fuzz_test``); ``fuzz_given`` adds a check of our own on the real
CPU kernel.

Fuzzing checks sample sizes, so it passes ``decode_attention`` too: its fake returns the right shape at every
size, and only ``shapecheck gate`` (or ``verify``) sees the branch on the query length that breaks
``torch.export`` (SC001).
"""

import sc_custom_ops  # noqa: F401 - registers the ops
import torch
from hypothesis import settings

import shapecheck

FEW = settings(max_examples=10, deadline=None)

test_decode_attention_fake = FEW(shapecheck.fuzz_test("sc_custom_ops::decode_attention"))
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
