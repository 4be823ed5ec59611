"""CPU port of the two-pass decode kernels ``sdpa_vector_2pass_1<T, D, V>`` and ``sdpa_vector_2pass_2<T, D>``.

Kernel source: ``aten/src/ATen/native/mps/kernels/Attention.metal`` (March 2026, e.g. @ 0eb0aa5), later
``kernels/DecodeAttention.h``; host: ``sdpa_vector_2pass_mps`` in ``operations/Attention.mm``.
Pass 1: one threadgroup per (batch*head, query row, block b < 32) with 8 simdgroups; simdgroup g of block b
runs the same fp32 online softmax as the 1-pass kernel over keys 8b + g + 256t, then the block combines
its 8 states (padding lanes at -1e9) and stores the unnormalised partial output rounded to T plus fp32
sums/maxs. Pass 2 reduces the 32 blocks and divides by ``(L == 0 ? 1e-6 : L)``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from metal_ref._common import (
    Prepared,
    RuntimeCheckError,
    prepare,
    ungroup_heads,
    view_as_query,
)
from metal_ref.vector_1pass import SUM_GUARD, decode_scores, pad_keys, segment_stats, simdgroup_partials

BLOCKS = 32
"""Pass-1 blocks per (batch*head, query row); also the partials' 4th dim."""

SIMDGROUPS = 8
"""BN of pass 1: simdgroups per block, block b simdgroup g owns keys 8b + g + 256t."""

LANE_PAD_MAX = -1e9
"""Max score the 24 padding lanes (>= BN) feed into the block's ``simd_max``: it floors every block max."""


def sdpa_vector_2pass_1(
    prep: Prepared, *, is_causal: bool = False, sequential: bool = False, mask_addressing: str = "correct"
) -> tuple[Tensor, Tensor, Tensor]:
    """Pass 1 for all (batch, head, query row, block).

    Returns ``(partials, sums, maxs)``:
    - partials (B, H, L, 32, Ev) in the input dtype: block b's sum over its keys of exp(s - M_b) v, unnormalised
      and rounded to T;
    - sums (B, H, L, 32) fp32: sum exp(s - M_b); maxs (B, H, L, 32) fp32: M_b = max(max_g m_g, -1e9).
    A block that used no key has M_b = -1e9, sum 0 and partial 0.

    ``sequential`` replays each simdgroup's online softmax and the block's in-order sum over its 8 rescaled
    outputs; the default computes the same quantities segment-wise, the partial as one matmul per block over
    exp(s - m_g) exp(m_g - M_b) v (fp32 rounding order differs).
    """
    scores = decode_scores(prep, is_causal=is_causal, mask_addressing=mask_addressing)
    values = prep.v.float()
    n_keys = BLOCKS * SIMDGROUPS
    if sequential:
        m, l_sum, o = simdgroup_partials(scores, values, n_keys)
    else:
        m, l_sum, p = segment_stats(scores, n_keys)
    lead = m.shape[:-1]
    m = m.reshape(*lead, BLOCKS, SIMDGROUPS)
    l_sum = l_sum.reshape(*lead, BLOCKS, SIMDGROUPS)
    block_max = m.amax(dim=-1).clamp(min=LANE_PAD_MAX)
    factor = torch.exp(m - block_max.unsqueeze(-1))
    sums = (l_sum * factor).sum(dim=-1)
    if sequential:
        # Simdgroup 0 adds the 8 rescaled outputs in simdgroup order.
        weighted = o.reshape(*lead, BLOCKS, SIMDGROUPS, o.shape[-1]) * factor.unsqueeze(-1)
        partial = weighted[..., 0, :]
        for g in range(1, SIMDGROUPS):
            partial = partial + weighted[..., g, :]
    else:
        n_b, n_hk, n_g, n_l, steps, _ = p.shape
        n_e = values.shape[-1]
        # Key 256t + 8b + g -> (t, b, g); gather each block's keys into one matrix.
        weights = p.view(n_b, n_hk, n_g, n_l, steps, BLOCKS, SIMDGROUPS) * factor.unsqueeze(-3)
        weights = weights.permute(0, 1, 5, 2, 3, 4, 6).reshape(n_b, n_hk, BLOCKS, n_g * n_l, steps * SIMDGROUPS)
        v_blocks = pad_keys(values, steps * n_keys, -2).view(n_b, n_hk, steps, BLOCKS, SIMDGROUPS, n_e)
        v_blocks = v_blocks.transpose(2, 3).reshape(n_b, n_hk, BLOCKS, steps * SIMDGROUPS, n_e)
        partial = torch.matmul(weights, v_blocks).view(n_b, n_hk, BLOCKS, n_g, n_l, n_e).permute(0, 1, 3, 4, 2, 5)
    return (
        ungroup_heads(partial).to(prep.dtype),
        ungroup_heads(sums),
        ungroup_heads(block_max),
    )


def sdpa_vector_2pass_2(partials: Tensor, sums: Tensor, maxs: Tensor) -> Tensor:
    """Pass 2: combine the 32 blocks of (B, H, L, 32, Ev) partials into out (B, H, L, Ev) in their dtype.

    M = max_b M_b; f_b = exp(M_b - M); out = sum_b float(P_b) f_b / (L == 0 ? 1e-6 : L) with
    L = sum_b sums_b f_b. A fully masked row has every M_b = -1e9, so f = 1, L = 0 and the output is 0.
    """
    new_max = maxs.amax(dim=-1, keepdim=True)
    factor = torch.exp(maxs - new_max)
    total = (sums * factor).sum(dim=-1, keepdim=True)
    safe = torch.where(total == 0, torch.full_like(total, SUM_GUARD), total)
    out = torch.matmul(factor.unsqueeze(-2), partials.float()).squeeze(-2) / safe
    return out.to(partials.dtype)


def forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    *,
    sequential: bool = False,
    mask_addressing: str = "correct",
) -> tuple[Tensor, Tensor]:
    """Both outputs of ``sdpa_vector_2pass_mps``.

    - Output 0: (B, H, L, E) in the query dtype, ``view_as(query)`` when the query was 3-D or >4-D.
    - Output 1: the pass-1 partials (B', H, L, 32, E) in the query dtype, never reshaped back (B' = 1 for a
      3-D query, the flattened batch for >4-D).
    - ``sequential``: see ``sdpa_vector_2pass_1``; ``mask_addressing``: see ``vector_1pass.read_kernel_mask``
      (March 2-pass: "folded-batch").
    """
    prep = prepare(query, key, value, attn_mask, scale)
    if not (prep.q.shape[-1] == prep.k.shape[-1] == prep.v.shape[-1]):
        raise RuntimeCheckError(
            "sdpa_vector_2pass_mps expects query, key, and value to have the same head dimension; got "
            f"E={prep.q.shape[-1]}, Ev={prep.v.shape[-1]}"
        )
    partials, sums, maxs = sdpa_vector_2pass_1(
        prep, is_causal=is_causal, sequential=sequential, mask_addressing=mask_addressing
    )
    out = sdpa_vector_2pass_2(partials, sums, maxs)
    return view_as_query(out, prep), partials
