"""Against the real op on Apple MPS: output 0 of the reference vs ``_scaled_dot_product_attention_math_for_mps``."""

import pytest
import torch

import metal_ref

pytestmark = pytest.mark.skipif(
    not torch.backends.mps.is_available(), reason="needs Apple MPS (torch.backends.mps.is_available() is False)"
)

TOL = {
    torch.float32: {"atol": 1e-4, "rtol": 1e-4},
    torch.float16: {"atol": 2e-3, "rtol": 1e-2},
    torch.bfloat16: {"atol": 1e-2, "rtol": 2e-2},
}

CASES = [
    # (query shape, key/value shape, mask kind, causal)
    ((1, 2, 1, 64), (1, 2, 1023, 64), None, False),
    ((1, 2, 8, 128), (1, 2, 1024, 128), None, False),
    ((1, 2, 8, 96), (1, 2, 4096, 96), "bool", False),
    ((2, 4, 64), (2, 300, 64), None, False),
    ((2, 1, 2, 4, 64), (2, 1, 2, 300, 64), "bool", False),
    ((1, 2, 9, 64), (1, 2, 200, 64), None, True),
    ((1, 2, 40, 128), (1, 2, 100, 128), "bool", False),
    ((1, 4, 3, 64), (1, 2, 2000, 64), None, False),
]


def real_op(q, k, v, mask, causal):
    dev = torch.device("mps")
    out = torch.ops.aten._scaled_dot_product_attention_math_for_mps(
        q.to(dev), k.to(dev), v.to(dev), None if mask is None else mask.to(dev), 0.0, causal, None
    )
    return out[0].cpu()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("q_shape", "kv_shape", "mask_kind", "causal"), CASES)
def test_output0_matches_the_mps_op(dtype, q_shape, kv_shape, mask_kind, causal):
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(q_shape, generator=gen).to(dtype)
    k = torch.randn(kv_shape, generator=gen).to(dtype)
    v = torch.randn(kv_shape, generator=gen).to(dtype)
    mask = None
    if mask_kind == "bool":
        mask = torch.rand(q_shape[-2], kv_shape[-2], generator=gen) > 0.3
        mask[:, 0] = True
    real = real_op(q, k, v, mask, causal)
    ref, _ = metal_ref.run(q, k, v, mask, is_causal=causal, era="current")
    assert real.shape == ref.shape and real.dtype == ref.dtype
    torch.testing.assert_close(real, ref, **TOL[dtype])
