"""CPU port of the chunked MPSGraph path: ``sdpa_general_mps`` for fp16/bf16 with L > 3068 (current main).

Source: ``aten/src/ATen/native/mps/operations/Attention.mm`` @ 00a5f92 (no .metal file). The op allocates a
4-D out, calls itself on query rows [start, start + 3068) with the *unsliced* mask, copies each chunk's
output 0 into out, and returns ``(out, at::empty({0}))``. Quirks reproduced by reading that code:

- output 0 is **not** reshaped back: a 3-D query yields (1, H, L, Ev);
- a >4-D query fails: each chunk returns a reshaped-back (>4-D) tensor that ``copy_`` cannot write into the
  4-D slice (``mps_copy_``: "Destination ... doesn't match the broadcast shape");
- any mask fails: the full (B, H, L, S) mask is added to a (B, H, chunk, S) score tensor;
- causal is applied per chunk, top-left aligned to the chunk's first row, so chunk c's row i sees keys
  j <= i rather than j <= 3068*c + i.
"""

from __future__ import annotations

import torch
from torch import Tensor

from metal_ref._common import RuntimeCheckError, prepare
from metal_ref.general import expand_kv_heads, sdpa_general

CHUNK_ROWS = 3068
"""``kChunkSize``: query rows per MPSGraph call."""

CHUNKED_DTYPES = (torch.float16, torch.bfloat16)


def forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    *,
    macos15_epsilon: bool = False,
) -> tuple[Tensor, Tensor]:
    """Both outputs of the chunked branch: (out (B, H, L, Ev) in the query dtype, ``torch.empty(0)``).

    Output 1 is a 1-D empty tensor with default options (default dtype, normally float32; on MPS it is even
    a CPU tensor). Raises RuntimeCheckError where the real op fails (see the module docstring).
    """
    prep = prepare(query, key, value, attn_mask, scale)
    if is_causal and prep.mask is not None:
        raise RuntimeCheckError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"
        )
    if prep.mask is not None:
        raise RuntimeCheckError(
            f"chunked MPSGraph path: the unsliced mask {tuple(prep.mask.shape)} cannot be added to a "
            f"{CHUNK_ROWS}-row chunk of scores (by reading Attention.mm: mask is not sliced per chunk)"
        )
    if query.dim() > 4:
        raise RuntimeCheckError(
            f"chunked MPSGraph path: each chunk's output is reshaped back to {query.dim()}-D and copy_ into "
            "the 4-D output slice fails (Destination doesn't match the broadcast shape)"
        )
    k, v = expand_kv_heads(prep, "current")
    n_b, n_h, n_l, _ = prep.q.shape
    out = torch.empty(n_b, n_h, n_l, v.shape[-1], dtype=prep.dtype)
    for start in range(0, n_l, CHUNK_ROWS):
        end = min(start + CHUNK_ROWS, n_l)
        chunk_out, _ = sdpa_general(
            prep.q[:, :, start:end],
            k,
            v,
            None,
            is_causal=is_causal,
            scale=prep.scale,
            macos15_epsilon=macos15_epsilon,
        )
        out[:, :, start:end] = chunk_out
    return out, torch.empty(0)
