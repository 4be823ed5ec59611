"""metal_ref.general (MPSGraph path): accuracy, (out, attn), causal band, masks, eras."""

import pytest
import torch

import metal_ref
from metal_ref import general

TOL = {
    torch.float32: {"atol": 1e-5, "rtol": 1e-5},
    torch.float16: {"atol": 2e-3, "rtol": 1e-2},
    torch.bfloat16: {"atol": 1e-2, "rtol": 2e-2},
}


def make_qkv(q_shape, kv_shape, dtype=torch.float32, ev=None, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(q_shape, generator=gen).to(dtype)
    k = torch.randn(kv_shape, generator=gen).to(dtype)
    v = torch.randn((*kv_shape[:-1], ev or kv_shape[-1]), generator=gen).to(dtype)
    return q, k, v


def assert_matches_reference(out, ref, dtype):
    torch.testing.assert_close(out.double(), ref, **TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("n_l", "n_s", "e"), [(1, 1, 64), (9, 1024, 64), (9, 33, 96), (20, 8, 128)])
def test_out0_matches_math_reference(dtype, n_l, n_s, e):
    q, k, v = make_qkv((1, 2, n_l, e), (1, 2, n_s, e), dtype)
    out0, out1 = general.forward(q, k, v)
    assert out0.shape == q.shape and out0.dtype == dtype
    assert out1.shape == (1, 2, n_l, n_s) and out1.dtype == dtype
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v), dtype)


@pytest.mark.parametrize(
    ("q_shape", "kv_shape"),
    [((2, 5, 32), (2, 7, 32)), ((1, 2, 5, 32), (1, 2, 7, 32)), ((2, 3, 2, 5, 32), (2, 3, 2, 7, 32))],
)
def test_value_head_dim_and_rank_are_kept(q_shape, kv_shape):
    q, k, v = make_qkv(q_shape, kv_shape, ev=24)
    out0, out1 = general.forward(q, k, v)
    assert out0.shape == (*q_shape[:-1], 24)
    assert out1.shape == (*q_shape[:-1], kv_shape[-2])
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v), torch.float32)


def test_attn_output_is_the_softmax():
    q, k, v = make_qkv((1, 2, 9, 64), (1, 2, 30, 64))
    _, out1 = general.forward(q, k, v, scale=0.2)
    probs = torch.softmax((q.double() @ k.double().transpose(-1, -2)) * 0.2, dim=-1)
    torch.testing.assert_close(out1.double(), probs, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(out1.sum(-1), torch.ones(1, 2, 9))


@pytest.mark.parametrize(("n_l", "n_s"), [(9, 9), (12, 5), (5, 40)])
def test_causal_band_is_top_left_aligned(n_l, n_s):
    q, k, v = make_qkv((1, 2, n_l, 64), (1, 2, n_s, 64))
    out0, out1 = general.forward(q, k, v, is_causal=True)
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, is_causal=True), torch.float32)
    torch.testing.assert_close(out0[:, :, 0], v[:, :, 0])
    above = ~torch.ones(n_l, n_s, dtype=torch.bool).tril()
    assert (out1[..., above] == 0).all()


def test_fully_masked_row_is_zero_in_out0_and_nan_in_attn():
    q, k, v = make_qkv((1, 2, 9, 64), (1, 2, 16, 64))
    mask = torch.zeros(9, 16)
    mask[3] = float("-inf")
    out0, out1 = general.forward(q, k, v, mask)
    assert (out0[:, :, 3] == 0).all()
    assert torch.isnan(out1[:, :, 3]).all()
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, mask, fully_masked="zero"), torch.float32)


def test_bool_mask_is_added_as_one_and_zero():
    q, k, v = make_qkv((1, 2, 9, 64), (1, 2, 16, 64))
    mask = torch.rand(9, 16, generator=torch.Generator().manual_seed(4)) > 0.5
    out0, _ = general.forward(q, k, v, mask)
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, mask.float()), torch.float32)


def test_additive_mask_of_other_dtype_is_cast_and_added():
    q, k, v = make_qkv((1, 2, 9, 64), (1, 2, 16, 64), torch.float16)
    mask = torch.randn(1, 1, 9, 16, generator=torch.Generator().manual_seed(5))
    out0, _ = general.forward(q, k, v, mask)
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, mask), torch.float16)


def test_causal_with_mask_raises_now_and_ignored_the_mask_in_march():
    q, k, v = make_qkv((1, 2, 9, 64), (1, 2, 16, 64))
    mask = torch.zeros(9, 16, dtype=torch.bool)
    with pytest.raises(metal_ref.RuntimeCheckError, match="attn_mask should not be set"):
        general.forward(q, k, v, mask, is_causal=True, era="current")
    march, _ = general.forward(q, k, v, mask, is_causal=True, era="2026-03")
    causal_only, _ = general.forward(q, k, v, is_causal=True, era="2026-03")
    assert torch.equal(march, causal_only)


def test_gqa_repeats_kv_now_and_broadcasts_only_one_head_in_march():
    q, k, v = make_qkv((1, 4, 9, 64), (1, 2, 16, 64))
    out0, _ = general.forward(q, k, v, era="current")
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v), torch.float32)
    with pytest.raises(metal_ref.RuntimeCheckError, match="does not broadcast"):
        general.forward(q, k, v, era="2026-03")
    one_head, _ = general.forward(q, k[:, :1], v[:, :1], era="2026-03")
    assert_matches_reference(one_head, metal_ref.math_reference(q, k[:, :1], v[:, :1]), torch.float32)


def test_macos15_epsilon_only_shifts_fp32_scores_negligibly():
    q, k, v = make_qkv((1, 2, 9, 64), (1, 2, 16, 64))
    plain, _ = general.forward(q, k, v)
    shifted, _ = general.forward(q, k, v, macos15_epsilon=True)
    torch.testing.assert_close(plain, shifted, atol=1e-7, rtol=1e-7)
    zero_q = torch.zeros_like(q)
    _, probs = general.forward(zero_q, k, v, macos15_epsilon=True)
    torch.testing.assert_close(probs, torch.full_like(probs, 1 / 16))


def test_unknown_era_is_rejected():
    q, k, v = make_qkv((1, 1, 2, 64), (1, 1, 3, 64))
    with pytest.raises(ValueError, match="era="):
        general.forward(q, k, v, era="2025")
