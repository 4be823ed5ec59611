"""metal_ref.prefill: tiled base-2 online softmax, block shapes, aliasing, masks."""

import math

import pytest
import torch

import metal_ref
from metal_ref import prefill
from metal_ref._common import prepare

TOL = {
    torch.float32: {"atol": 1e-5, "rtol": 1e-5},
    torch.float16: {"atol": 2e-3, "rtol": 1e-2},
    torch.bfloat16: {"atol": 1e-2, "rtol": 2e-2},
}


def make_qkv(q_shape, kv_shape, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(s, generator=gen).to(dtype) for s in (q_shape, kv_shape, kv_shape))


def assert_matches_reference(out, ref, dtype):
    torch.testing.assert_close(out.double(), ref, **TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("n_l", "n_s", "e"), [(9, 1, 64), (9, 33, 128), (40, 100, 256), (33, 64, 80)])
def test_out0_matches_math_reference(dtype, n_l, n_s, e):
    q, k, v = make_qkv((1, 2, n_l, e), (1, 2, n_s, e), dtype)
    out0, _ = prefill.forward(q, k, v)
    assert out0.shape == q.shape and out0.dtype == dtype
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v), dtype)


@pytest.mark.parametrize("q_shape", [(2, 9, 64), (1, 2, 9, 64), (2, 1, 2, 9, 64)])
def test_second_output_is_the_first(q_shape):
    q, k, v = make_qkv(q_shape, (*q_shape[:-2], 20, 64))
    out0, out1 = prefill.forward(q, k, v)
    assert out1 is out0
    assert out0.shape == q.shape


def test_block_shapes_follow_the_head_dim():
    assert prefill.block_shape(256) == (16, 8)
    assert prefill.block_shape(128) == (32, 16)
    assert prefill.block_shape(64) == prefill.block_shape(72) == prefill.block_shape(32) == (32, 32)
    assert prefill.block_shape(128, mpp=True) == (64, 32)


def test_key_tiling_does_not_change_the_math():
    q, k, v = make_qkv((1, 2, 12, 64), (1, 2, 70, 64))
    prep = prepare(q, k, v, None, None)
    outs = [prefill.prefill_attention(prep, block_k=bk) for bk in (8, 16, 32, 128)]
    for out in outs[1:]:
        torch.testing.assert_close(out, outs[0], atol=1e-6, rtol=1e-5)


def test_causal_gqa_and_bool_mask():
    q, k, v = make_qkv((1, 4, 20, 64), (1, 2, 50, 64))
    mask = torch.rand(20, 50, generator=torch.Generator().manual_seed(6)) > 0.4
    mask[:, 0] = True
    out0, _ = prefill.forward(q, k, v, mask, is_causal=True)
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, mask, is_causal=True), torch.float32)


def test_fully_masked_row_gives_zero():
    q, k, v = make_qkv((1, 2, 10, 64), (1, 2, 40, 64))
    mask = torch.ones(10, 40, dtype=torch.bool)
    mask[4] = False
    out0, _ = prefill.forward(q, k, v, mask)
    assert (out0[:, :, 4] == 0).all()
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, mask, fully_masked="zero"), torch.float32)


def test_additive_mask_acts_in_base_two():
    # Scores are pre-scaled by log2(e); the mask is added unscaled, i.e. it weighs mask * ln 2.
    q, k, v = make_qkv((1, 2, 10, 64), (1, 2, 40, 64))
    mask = 3 * torch.randn(10, 40, generator=torch.Generator().manual_seed(7))
    out0, _ = prefill.forward(q, k, v, mask)
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, mask * math.log(2)), torch.float32)
    naive = metal_ref.math_reference(q, k, v, mask)
    assert (out0.double() - naive).abs().max() > 1e-2


def test_query_prescale_in_input_dtype_matches_base_two_form():
    q, k, v = make_qkv((1, 1, 9, 64), (1, 1, 9, 64), torch.float16)
    out0, _ = prefill.forward(q, k, v)
    scale_t = torch.tensor(0.125 * prefill.LOG2E, dtype=torch.float32).to(torch.float16)
    q_t = q * scale_t
    ref = metal_ref.math_reference(q_t, k, v, scale=math.log(2))
    assert_matches_reference(out0, ref, torch.float16)


def test_host_checks_are_reproduced():
    q, k, v = make_qkv((1, 2, 9, 64), (1, 2, 12, 64), torch.float16)
    with pytest.raises(metal_ref.RuntimeCheckError, match="must match query dtype"):
        prefill.forward(q, k, v, torch.zeros(9, 12))
    with pytest.raises(metal_ref.RuntimeCheckError, match="E == Ev"):
        prefill.forward(q, k, v[..., :32])


def test_tile_row_sum_uses_the_shuffle_order():
    tile = torch.randn(3, 32, generator=torch.Generator().manual_seed(8)) * 1e4
    expected = []
    for row in tile.tolist():
        f32 = [torch.tensor(x, dtype=torch.float32) for x in row]
        total = torch.tensor(0.0)
        for j in range(0, 32, 8):
            c = f32[j : j + 8]
            total = total + (((c[0] + c[1]) + (c[2] + c[3])) + ((c[4] + c[5]) + (c[6] + c[7])))
        expected.append(total)
    assert torch.equal(prefill._tile_row_sum(tile), torch.stack(expected))
