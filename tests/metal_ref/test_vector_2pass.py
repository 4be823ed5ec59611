"""metal_ref.vector_2pass: accuracy, the 5-D partials, pass-2 self-consistency and the 0 quirk."""

import pytest
import torch

import metal_ref
from metal_ref import vector_2pass
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
@pytest.mark.parametrize(("n_l", "n_s", "e"), [(1, 1024, 64), (8, 1024, 128), (8, 4096, 64), (3, 1500, 96), (1, 5, 64)])
def test_out0_matches_math_reference(dtype, n_l, n_s, e):
    q, k, v = make_qkv((1, 2, n_l, e), (1, 2, n_s, e), dtype)
    out0, out1 = vector_2pass.forward(q, k, v)
    assert out0.dtype == dtype and out0.shape == q.shape
    assert out1.shape == (1, 2, n_l, 32, e) and out1.dtype == dtype
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v), dtype)


@pytest.mark.parametrize(
    ("q_shape", "kv_shape", "partials_shape"),
    [
        ((2, 4, 64), (2, 1024, 64), (1, 2, 4, 32, 64)),
        ((2, 2, 4, 64), (2, 2, 1024, 64), (2, 2, 4, 32, 64)),
        ((2, 3, 2, 4, 64), (2, 3, 2, 1024, 64), (6, 2, 4, 32, 64)),
    ],
)
def test_out0_takes_query_shape_but_partials_stay_5d(q_shape, kv_shape, partials_shape):
    q, k, v = make_qkv(q_shape, kv_shape)
    out0, out1 = vector_2pass.forward(q, k, v)
    assert out0.shape == q.shape
    assert out1.shape == partials_shape
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v), torch.float32)


def test_pass2_on_the_returned_partials_reproduces_out0():
    q, k, v = make_qkv((1, 2, 4, 64), (1, 2, 2000, 64), torch.float16)
    prep = prepare(q, k, v, None, None)
    partials, sums, maxs = vector_2pass.sdpa_vector_2pass_1(prep)
    out0, out1 = vector_2pass.forward(q, k, v)
    assert torch.equal(out1, partials)
    assert torch.equal(vector_2pass.sdpa_vector_2pass_2(partials, sums, maxs), out0)
    # Pass 2 written out: rescale each block to the global max, sum, divide by the rescaled exp-sum.
    factor = torch.exp(maxs - maxs.amax(-1, keepdim=True))
    manual = (partials.float() * factor.unsqueeze(-1)).sum(-2) / (sums * factor).sum(-1, keepdim=True)
    torch.testing.assert_close(manual.to(torch.float16), out0, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_partials_are_rounded_to_the_input_dtype(dtype):
    # Scores are fp32 from the (exactly upcast) inputs, so running in fp32 gives the unrounded partials.
    q, k, v = make_qkv((1, 2, 3, 64), (1, 2, 1200, 64), dtype)
    low = vector_2pass.sdpa_vector_2pass_1(prepare(q, k, v, None, None))
    high = vector_2pass.sdpa_vector_2pass_1(prepare(q.float(), k.float(), v.float(), None, None))
    assert low[0].dtype == dtype and high[0].dtype == torch.float32
    assert torch.equal(low[0], high[0].to(dtype))
    assert not torch.equal(low[0].float(), high[0])
    assert low[1].dtype == low[2].dtype == torch.float32
    assert torch.equal(low[1], high[1]) and torch.equal(low[2], high[2])


def test_empty_blocks_keep_the_floored_max():
    # S = 100: block b owns keys 8b..8b+7 (< 256), so blocks 13..31 see no key.
    q, k, v = make_qkv((1, 1, 2, 64), (1, 1, 100, 64))
    partials, sums, maxs = vector_2pass.sdpa_vector_2pass_1(prepare(q, k, v, None, None))
    assert (maxs[..., 13:] == vector_2pass.LANE_PAD_MAX).all()
    assert (sums[..., 13:] == 0).all() and (partials[..., 13:, :] == 0).all()
    assert (sums[..., :13] > 0).all()


def test_fully_masked_row_gives_zero():
    q, k, v = make_qkv((1, 2, 4, 64), (1, 2, 1024, 64))
    mask = torch.ones(1, 2, 4, 1024, dtype=torch.bool)
    mask[0, 0, 1] = False
    out0, _ = vector_2pass.forward(q, k, v, mask)
    assert (out0[0, 0, 1] == 0).all()
    ref = metal_ref.math_reference(q, k, v, mask, fully_masked="zero")
    assert_matches_reference(out0, ref, torch.float32)


def test_bool_mask_and_gqa():
    q, k, v = make_qkv((1, 4, 2, 64), (1, 2, 4096, 64))
    mask = torch.rand(1, 4, 2, 4096, generator=torch.Generator().manual_seed(2)) > 0.5
    out0, _ = vector_2pass.forward(q, k, v, mask)
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, mask), torch.float32)


def test_causal_uses_keys_up_to_the_row():
    q, k, v = make_qkv((1, 2, 8, 64), (1, 2, 1024, 64))
    out0, _ = vector_2pass.forward(q, k, v, is_causal=True)
    assert_matches_reference(out0, metal_ref.math_reference(q, k, v, is_causal=True), torch.float32)


def test_sequential_replay_agrees_with_segmentwise():
    q, k, v = make_qkv((1, 2, 4, 64), (1, 2, 1300, 64))
    prep = prepare(q, k, v, None, None)
    fast = vector_2pass.sdpa_vector_2pass_1(prep)
    exact = vector_2pass.sdpa_vector_2pass_1(prep, sequential=True)
    torch.testing.assert_close(fast[0], exact[0], atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(fast[1], exact[1], atol=1e-6, rtol=1e-5)
    assert torch.equal(fast[2], exact[2])
