"""metal_ref.vector_1pass: accuracy, both outputs, the NaN quirk and the March mask addressing."""

import math

import pytest
import torch

import metal_ref
from metal_ref import vector_1pass

TOL = {
    torch.float32: {"atol": 1e-5, "rtol": 1e-5},
    torch.float16: {"atol": 2e-3, "rtol": 1e-2},
    torch.bfloat16: {"atol": 1e-2, "rtol": 2e-2},
}


def make_qkv(q_shape, kv_shape, dtype=torch.float32, ev=None, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(q_shape, generator=gen).to(dtype)
    k = torch.randn(kv_shape, generator=gen).to(dtype)
    v_shape = kv_shape if ev is None else (*kv_shape[:-1], ev)
    v = torch.randn(v_shape, generator=gen).to(dtype)
    return q, k, v


def assert_matches_reference(out, ref, dtype):
    torch.testing.assert_close(out.double(), ref, **TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("n_l", "n_s", "e"), [(1, 1, 64), (1, 1023, 64), (8, 1023, 96), (8, 8, 128), (5, 37, 64)])
def test_out0_matches_math_reference(dtype, n_l, n_s, e):
    q, k, v = make_qkv((1, 2, n_l, e), (1, 2, n_s, e), dtype)
    out0, _ = vector_1pass.forward(q, k, v)
    assert out0.dtype == dtype and out0.shape == q.shape
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v), dtype)


def test_sequential_replay_agrees_with_segmentwise():
    q, k, v = make_qkv((1, 2, 8, 64), (1, 2, 1000, 64))
    fast, _ = vector_1pass.forward(q, k, v)
    exact, _ = vector_1pass.forward(q, k, v, sequential=True)
    torch.testing.assert_close(fast, exact, atol=1e-6, rtol=1e-6)


def test_explicit_scale_is_used():
    q, k, v = make_qkv((1, 2, 3, 64), (1, 2, 50, 64))
    out0, _ = vector_1pass.forward(q, k, v, scale=0.3)
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, scale=0.3), torch.float32)


@pytest.mark.parametrize(
    ("q_shape", "kv_shape"),
    [((2, 4, 64), (2, 40, 64)), ((1, 2, 4, 64), (1, 2, 40, 64)), ((2, 3, 2, 4, 64), (2, 3, 2, 40, 64))],
)
def test_both_outputs_keep_the_runtime_shapes(q_shape, kv_shape):
    q, k, v = make_qkv(q_shape, kv_shape)
    out0, out1 = vector_1pass.forward(q, k, v)
    assert out0.shape == q.shape
    assert out1.shape == (*q_shape[:-1], kv_shape[-2])
    assert out1.dtype == q.dtype and out1.data_ptr() != out0.data_ptr()
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v), torch.float32)


def test_gqa_reads_kv_head_h_div_g():
    q, k, v = make_qkv((1, 4, 3, 64), (1, 2, 70, 64))
    out0, _ = vector_1pass.forward(q, k, v)
    ref = metal_ref.math_reference(q, k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1))
    assert_matches_reference(out0, ref, torch.float32)


def test_bool_mask_skips_false_keys_and_fully_masked_row_is_nan():
    q, k, v = make_qkv((1, 2, 4, 64), (1, 2, 100, 64))
    mask = torch.rand(1, 2, 4, 100, generator=torch.Generator().manual_seed(1)) > 0.3
    mask[..., 0] = True
    mask[0, 1, 2] = False
    out0, _ = vector_1pass.forward(q, k, v, mask)
    assert torch.isnan(out0[0, 1, 2]).all()
    live = ~torch.isnan(out0).any(-1)
    assert live.sum() == 7
    ref = metal_ref.math_reference(q, k, v, mask)
    assert_matches_reference(out0[live], ref[live], torch.float32)


def test_broadcast_mask_is_expanded_like_the_runtime():
    q, k, v = make_qkv((2, 2, 3, 64), (2, 2, 60, 64))
    mask = torch.arange(60) % 3 != 0
    out0, _ = vector_1pass.forward(q, k, v, mask)
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, mask), torch.float32)


def test_causal_is_top_left_aligned():
    q, k, v = make_qkv((1, 2, 6, 64), (1, 2, 20, 64))
    out0, _ = vector_1pass.forward(q, k, v, is_causal=True)
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, is_causal=True), torch.float32)
    torch.testing.assert_close(out0[:, :, 0], v[:, :, 0])


def test_causal_takes_precedence_over_a_mask_like_the_kernel():
    q, k, v = make_qkv((1, 2, 4, 64), (1, 2, 20, 64))
    mask = torch.zeros(4, 20, dtype=torch.bool)
    causal_only, _ = vector_1pass.forward(q, k, v, is_causal=True)
    both, _ = vector_1pass.forward(q, k, v, mask, is_causal=True)
    torch.testing.assert_close(both, causal_only, atol=0, rtol=0)


def test_mask_of_query_dtype_is_additive():
    q, k, v = make_qkv((1, 2, 4, 64), (1, 2, 50, 64), torch.float16)
    mask = torch.randn(4, 50, generator=torch.Generator().manual_seed(3)).to(torch.float16)
    mask[:, ::7] = float("-inf")
    out0, _ = vector_1pass.forward(q, k, v, mask)
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, mask), torch.float16)


def test_head_dim_mismatch_is_rejected_like_the_torch_check():
    q, k, v = make_qkv((1, 2, 4, 64), (1, 2, 50, 64), ev=32)
    with pytest.raises(metal_ref.RuntimeCheckError, match="same head dimension"):
        vector_1pass.forward(q, k, v)


def test_march_mask_bug_reads_swapped_strides():
    # (1, 1, L, S) contiguous bool mask, L == S: the March kernel reads storage[key*S] = mask[key, 0] for
    # every query row (head stride zeroed, kv stride taken as head, q stride taken as kv).
    n = 4
    q, k, v = make_qkv((1, 1, n, 64), (1, 1, n, 64))
    mask = torch.tensor([[True, False, False, True], [False, True, True, True], [True, True, False, True],
                         [True, False, True, False]])
    out0, _ = vector_1pass.forward(q, k, v, mask.view(1, 1, n, n), mask_addressing="march-1pass")
    misread = mask[:, 0].view(1, n).expand(n, n)
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, misread), torch.float32)
    correct, _ = vector_1pass.forward(q, k, v, mask.view(1, 1, n, n))
    assert not torch.allclose(out0, correct)


def test_march_mask_bug_out_of_bounds_read_is_refused():
    q, k, v = make_qkv((1, 1, 2, 64), (1, 1, 8, 64))
    mask = torch.ones(1, 1, 2, 8, dtype=torch.bool)
    with pytest.raises(ValueError, match="out of bounds"):
        vector_1pass.forward(q, k, v, mask, mask_addressing="march-1pass")


def test_folded_batch_addressing_uses_batch_zero_mask_for_head_broadcast():
    # Mask (B, 1, 1, S) broadcast over heads: head stride 0, so bh*0 reads batch 0's row for every batch.
    q, k, v = make_qkv((2, 2, 1, 64), (2, 2, 16, 64))
    mask = torch.ones(2, 1, 1, 16, dtype=torch.bool)
    mask[1, 0, 0, 8:] = False
    read = vector_1pass.read_kernel_mask(mask.expand(2, 2, 1, 16), 2, "folded-batch")
    assert read.all()
    correct = vector_1pass.read_kernel_mask(mask.expand(2, 2, 1, 16), 2, "correct")
    assert not correct[1].all()


def test_default_scale_is_fp32_rounded_inverse_sqrt():
    q, k, v = make_qkv((1, 1, 1, 96), (1, 1, 5, 96))
    out0, _ = vector_1pass.forward(q, k, v)
    ref = metal_ref.math_reference(q, k, v, scale=1 / math.sqrt(96))
    assert_matches_reference(out0, ref, torch.float32)
