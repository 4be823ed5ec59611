"""metal_ref.math_reference: the float64 oracle against torch's own attention and by hand."""

import pytest
import torch
import torch.nn.functional as F

import metal_ref


def make_qkv(q_shape, kv_shape, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(s, generator=gen, dtype=torch.float64) for s in (q_shape, kv_shape, kv_shape))


@pytest.mark.parametrize("causal", [False, True])
def test_agrees_with_torch_sdpa_in_float64(causal):
    q, k, v = make_qkv((2, 3, 5, 16), (2, 3, 7, 16))
    ref = metal_ref.math_reference(q, k, v, is_causal=causal, scale=0.3)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=0.3)
    torch.testing.assert_close(ref, expected, atol=1e-12, rtol=1e-12)


def test_bool_and_additive_masks_and_gqa():
    q, k, v = make_qkv((1, 4, 5, 16), (1, 2, 7, 16))
    m = torch.rand(5, 7, generator=torch.Generator().manual_seed(1)) > 0.3
    m[:, 0] = True
    k4, v4 = k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1)
    torch.testing.assert_close(
        metal_ref.math_reference(q, k, v, m), F.scaled_dot_product_attention(q, k4, v4, attn_mask=m)
    )
    add = torch.randn(5, 7, dtype=torch.float64)
    torch.testing.assert_close(
        metal_ref.math_reference(q, k, v, add), F.scaled_dot_product_attention(q, k4, v4, attn_mask=add)
    )


def test_value_head_dim_and_leading_dims():
    q, k, _ = make_qkv((2, 2, 2, 3, 8), (2, 2, 2, 4, 8))
    v = torch.randn(2, 2, 2, 4, 5, dtype=torch.float64)
    out = metal_ref.math_reference(q, k, v)
    assert out.shape == (2, 2, 2, 3, 5) and out.dtype == torch.float64
    probs = torch.softmax(q @ k.transpose(-1, -2) / 8**0.5, dim=-1)
    torch.testing.assert_close(out, probs @ v)


def test_fully_masked_rows_and_empty_keys():
    q, k, v = make_qkv((1, 1, 3, 8), (1, 1, 4, 8))
    m = torch.ones(3, 4, dtype=torch.bool)
    m[1] = False
    assert torch.isnan(metal_ref.math_reference(q, k, v, m)[0, 0, 1]).all()
    zero = metal_ref.math_reference(q, k, v, m, fully_masked="zero")
    assert (zero[0, 0, 1] == 0).all() and torch.isfinite(zero).all()
    empty = metal_ref.math_reference(q, k[:, :, :0], v[:, :, :0], fully_masked="zero")
    assert empty.shape == (1, 1, 3, 8) and (empty == 0).all()
    with pytest.raises(ValueError, match="fully_masked"):
        metal_ref.math_reference(q, k, v, fully_masked="ignore")
