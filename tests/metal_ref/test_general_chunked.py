"""metal_ref.general_chunked: 3068-row chunks, the empty second output and the by-reading quirks."""

import pytest
import torch

import metal_ref
from metal_ref import general_chunked

N_L = general_chunked.CHUNK_ROWS + 5


def make_qkv(q_shape, kv_shape, dtype=torch.float16, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(s, generator=gen).to(dtype) for s in (q_shape, kv_shape, kv_shape))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_out0_matches_math_reference_and_out1_is_empty(dtype):
    q, k, v = make_qkv((1, 1, N_L, 24), (1, 1, 16, 24), dtype)
    out0, out1 = general_chunked.forward(q, k, v)
    assert out0.shape == q.shape and out0.dtype == dtype
    assert out1.shape == (0,) and out1.dim() == 1 and out1.dtype == torch.get_default_dtype()
    tol = {"atol": 2e-3, "rtol": 1e-2} if dtype == torch.float16 else {"atol": 1e-2, "rtol": 2e-2}
    torch.testing.assert_close(out0.double(), metal_ref.math_reference(q, k, v), **tol)


def test_chunks_compute_the_same_rows_as_one_graph():
    q, k, v = make_qkv((1, 1, N_L, 24), (1, 1, 16, 24))
    chunked, _ = general_chunked.forward(q, k, v)
    whole, _ = metal_ref.general.forward(q, k, v)
    assert torch.equal(chunked, whole)


def test_3d_query_output_is_not_reshaped_back():
    q, k, v = make_qkv((1, N_L, 24), (1, 16, 24))
    out0, _ = general_chunked.forward(q, k, v)
    assert out0.shape == (1, 1, N_L, 24)


def test_5d_query_fails_in_copy():
    q, k, v = make_qkv((1, 1, 1, N_L, 24), (1, 1, 1, 16, 24))
    with pytest.raises(metal_ref.RuntimeCheckError, match="copy_"):
        general_chunked.forward(q, k, v)


def test_mask_fails_because_it_is_not_sliced():
    q, k, v = make_qkv((1, 1, N_L, 24), (1, 1, 16, 24))
    with pytest.raises(metal_ref.RuntimeCheckError, match="unsliced mask"):
        general_chunked.forward(q, k, v, torch.zeros(16, dtype=torch.float16))


@pytest.mark.slow
def test_causal_band_restarts_in_every_chunk():
    q, k, v = make_qkv((1, 1, N_L, 24), (1, 1, N_L, 24))
    out0, _ = general_chunked.forward(q, k, v, is_causal=True)
    first_of_chunk_2 = general_chunked.CHUNK_ROWS
    torch.testing.assert_close(out0[0, 0, first_of_chunk_2], v[0, 0, 0])
    torch.testing.assert_close(out0[0, 0, 0], v[0, 0, 0])
