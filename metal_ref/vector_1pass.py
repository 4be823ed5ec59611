"""CPU port of the one-pass decode kernel ``sdpa_vector<T, D, V>`` (host: ``sdpa_vector_fast_mps``).

Kernel source: ``aten/src/ATen/native/mps/kernels/Attention.metal`` (March 2026, e.g. @ 0eb0aa5), later
moved to ``kernels/DecodeAttention.h`` (@ 1bbfd9e: same body plus an ``is_causal`` template parameter;
masks of the query dtype came with #183458).
One threadgroup per (batch*head, query row) with BN = 32 simdgroups x 32 lanes; simdgroup g runs an fp32
online softmax over keys g, g+32, g+64, ...; the 32 partial states are then combined with max/sum and the
result divided by ``(L == 0 ? 1e-6 : L)``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from metal_ref._common import (
    Prepared,
    RuntimeCheckError,
    group_heads,
    kernel_scores,
    prepare,
    reshape_back,
    ungroup_heads,
    view_as_query,
)

SIMDGROUPS = 32
"""BN of ``sdpa_vector``: simdgroup g owns keys g + 32*t."""

SUM_GUARD = 1e-6
"""Divisor used when the combined exp-sum is exactly 0 (``sum_exp_score == 0 ? 1e-6f : sum``)."""

MASK_ADDRESSING = ("correct", "march-1pass", "folded-batch")
"""How a vector kernel locates mask[b, h, q, key]; see ``read_kernel_mask``."""

_NEG_INF = float("-inf")


def read_kernel_mask(mask: Tensor, n_heads: int, addressing: str = "correct") -> Tensor:
    """The (B, H, L, S) mask values a decode kernel actually reads.

    - ``"correct"``: mask[b, h, q, key] (current main: uint4 mask strides incl. batch, #184180).
    - ``"march-1pass"``: March 1-pass bug (fixed by #182285). The host sends strides (kv, q, head), each 0
      when that dim has size 1; the kernel reads them as (head, kv, q) and folds the batch into bh, so it
      reads ``storage[bh*kv_stride + key*q_stride + q*head_stride]``.
    - ``"folded-batch"``: March 2-pass (and 1-pass between #182285 and #184180): right order, but the batch
      is folded into bh: ``storage[bh*head_stride + key*kv_stride + q*q_stride]``.

    Raises ValueError when the buggy addressing reads outside the mask's storage (undefined on the GPU).
    """
    if addressing not in MASK_ADDRESSING:
        raise ValueError(f"mask addressing={addressing!r}; expected one of {MASK_ADDRESSING}")
    if addressing == "correct":
        return mask
    n_b, n_h, n_l, n_s = mask.shape
    if n_h != n_heads:
        raise ValueError(f"mask has {n_h} heads after expansion, query has {n_heads}")
    head_st, q_st, kv_st = (mask.stride(i) if mask.shape[i] > 1 else 0 for i in (1, 2, 3))
    bh = torch.arange(n_b * n_h).view(n_b, n_h, 1, 1)
    qi = torch.arange(n_l).view(1, 1, n_l, 1)
    key = torch.arange(n_s).view(1, 1, 1, n_s)
    if addressing == "march-1pass":
        offsets = bh * kv_st + key * q_st + qi * head_st
    else:
        offsets = bh * head_st + key * kv_st + qi * q_st
    offsets = offsets + mask.storage_offset()
    storage = mask.untyped_storage()
    flat = torch.empty(0, dtype=mask.dtype).set_(storage, 0, (storage.nbytes() // mask.element_size(),), (1,))
    if offsets.numel() and int(offsets.max()) >= flat.numel():
        raise ValueError(
            f"mask addressing {addressing!r} reads element {int(offsets.max())} of a mask storage holding "
            f"{flat.numel()}: out of bounds on the GPU (undefined), not modelled"
        )
    return flat[offsets]


def decode_scores(prep: Prepared, *, is_causal: bool = False, mask_addressing: str = "correct") -> Tensor:
    """fp32 scores (B, Hk, G, L, S) with -inf for every key the kernel skips.

    Causal (current main only): key i is used iff i <= query row (top-left aligned); it takes precedence over
    a mask, as in the kernel (``if (is_causal) ... else if (has_mask)``). A bool mask skips False keys. A mask
    of the query dtype (current main, #183458) is modelled as additive in fp32 (by analogy with MLX; the
    kernel text was not read), with -inf entries acting as skipped keys.
    """
    scores = kernel_scores(prep)
    n_l, n_s = scores.shape[-2:]
    if is_causal:
        allowed = torch.arange(n_s).view(1, n_s) <= torch.arange(n_l).view(n_l, 1)
        return scores.masked_fill(~allowed, _NEG_INF)
    if prep.mask is None:
        return scores
    mask = group_heads(read_kernel_mask(prep.mask, prep.q.shape[1], mask_addressing), prep.gqa_factor)
    if mask.dtype == torch.bool:
        return scores.masked_fill(~mask, _NEG_INF)
    return scores + mask.float()


def pad_keys(t: Tensor, n_keys: int, dim: int, value: float = 0.0) -> Tensor:
    """``t`` padded along ``dim`` (a key axis) to ``n_keys`` entries; ``t`` itself when no padding is needed."""
    missing = n_keys - t.shape[dim]
    if missing == 0:
        return t
    pad = [0, 0] * (t.dim() - 1 - dim % t.dim()) + [0, missing]
    return torch.nn.functional.pad(t, pad, value=value)


def segment_stats(scores: Tensor, n_groups: int) -> tuple[Tensor, Tensor, Tensor]:
    """Per-group softmax statistics, segment-wise: key i belongs to group i % n_groups.

    ``scores`` (..., S) fp32 with -inf for skipped keys. Returns ``m`` (..., n_groups) = the group max (what
    the kernel's running max ends at), ``l`` (..., n_groups) = sum exp(s - m_g) and ``p`` (..., T, n_groups)
    = exp(s - m_g) per key (0 for skipped or padding keys), T = ceil(S / n_groups). Equal to the kernel's
    sequential state up to fp32 summation order.
    """
    steps = -(-scores.shape[-1] // n_groups)
    s_pad = pad_keys(scores, steps * n_groups, -1, _NEG_INF).unflatten(-1, (steps, n_groups))
    if steps == 0:
        m = scores.new_full((*scores.shape[:-1], n_groups), _NEG_INF)
        return m, torch.zeros_like(m), s_pad
    m = s_pad.amax(dim=-2)
    p = s_pad - m.unsqueeze(-2)
    p.exp_()
    p.masked_fill_(s_pad == _NEG_INF, 0.0)
    return m, p.sum(dim=-2), p


def simdgroup_partials(scores: Tensor, values: Tensor, n_groups: int) -> tuple[Tensor, Tensor, Tensor]:
    """Each simdgroup's online-softmax state after its key loop, replayed in the kernel's order.

    Per step (one tensor op per ``n_groups`` keys) the kernel's update ``m' = max(m, s); f = exp(m - m');
    e = exp(s - m'); l = l*f + e; o = o*f + e*v``, skipping keys with score -inf.
    - ``scores``: (B, Hk, G, L, S) fp32; key i belongs to group i % n_groups.
    - ``values``: (B, Hk, S, E) fp32.
    Returns m, l (B, Hk, G, L, n_groups) and o (B, Hk, G, L, n_groups, E); a group that saw no key keeps the
    initial state (-inf, 0, 0).
    """
    n_b, n_hk, n_g, n_l, n_s = scores.shape
    n_e = values.shape[-1]
    steps = -(-n_s // n_groups)
    s_pad = pad_keys(scores, steps * n_groups, -1, _NEG_INF).unflatten(-1, (steps, n_groups))
    v_pad = pad_keys(values, steps * n_groups, -2).view(n_b, n_hk, steps, n_groups, n_e)
    m = scores.new_full((n_b, n_hk, n_g, n_l, n_groups), _NEG_INF)
    l_sum = torch.zeros_like(m)
    o = scores.new_zeros((n_b, n_hk, n_g, n_l, n_groups, n_e))
    for t in range(steps):
        s_t = s_pad[..., t, :]
        used = s_t != _NEG_INF
        new_m = torch.maximum(m, s_t)
        factor = torch.exp(m - new_m)
        e = torch.exp(s_t - new_m)
        l_sum = torch.where(used, l_sum * factor + e, l_sum)
        v_t = v_pad[:, :, t].view(n_b, n_hk, 1, 1, n_groups, n_e)
        o = torch.where(used.unsqueeze(-1), o * factor.unsqueeze(-1) + e.unsqueeze(-1) * v_t, o)
        m = new_m
    return m, l_sum, o


def _safe_divisor(total: Tensor) -> Tensor:
    return torch.where(total == 0, torch.full_like(total, SUM_GUARD), total)


def sdpa_vector(
    prep: Prepared, *, is_causal: bool = False, sequential: bool = False, mask_addressing: str = "correct"
) -> Tensor:
    """The kernel body for all (batch, head, query row): returns out (B, H, L, E) in the input dtype.

    Combine: M = simd_max(m_g); f_g = exp(m_g - M) (NaN when M = -inf, so a fully masked row is NaN);
    L = simd_sum(l_g f_g); out = simd_sum(o_g f_g) / (L == 0 ? 1e-6 : L).
    - ``sequential``: build (m_g, l_g, o_g) with ``simdgroup_partials`` (kernel order) and combine them.
    - default: (m_g, l_g) from ``segment_stats`` and the numerator as one matmul
      sum_key exp(s - m_g) f_g v (the same sum with f_g applied per key; different fp32 rounding order).
    """
    scores = decode_scores(prep, is_causal=is_causal, mask_addressing=mask_addressing)
    values = prep.v.float()
    if sequential:
        m, l_sum, o = simdgroup_partials(scores, values, SIMDGROUPS)
        new_max = m.amax(dim=-1, keepdim=True)
        factor = torch.exp(m - new_max)
        total = (l_sum * factor).sum(dim=-1, keepdim=True)
        out = torch.matmul(factor.unsqueeze(-2), o).squeeze(-2) / _safe_divisor(total)
        return ungroup_heads(out).to(prep.dtype)
    n_b, n_hk, n_g, n_l, n_s = scores.shape
    m, l_sum, p = segment_stats(scores, SIMDGROUPS)
    new_max = m.amax(dim=-1, keepdim=True)
    factor = torch.exp(m - new_max)
    total = (l_sum * factor).sum(dim=-1, keepdim=True)
    weights = (p * factor.unsqueeze(-2)).flatten(-2)[..., :n_s]
    numerator = torch.matmul(weights.reshape(n_b, n_hk, n_g * n_l, n_s), values)
    out = numerator.view(n_b, n_hk, n_g, n_l, -1) / _safe_divisor(total)
    return ungroup_heads(out).to(prep.dtype)


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
    """Both outputs of ``sdpa_vector_fast_mps``.

    - Output 0: (B, H, L, E) in the query dtype, ``view_as(query)`` when the query was 3-D or >4-D.
    - Output 1: ``torch.empty`` of shape (B, H, L, S) reshaped back like the MPSGraph attn. The kernel never
      writes it: its contents are garbage (uninitialised memory on MPS too).
    - ``sequential``: replay the per-key online softmax in kernel order (see ``sdpa_vector``).
    - ``mask_addressing``: see ``read_kernel_mask``.
    """
    prep = prepare(query, key, value, attn_mask, scale)
    if not (prep.q.shape[-1] == prep.k.shape[-1] == prep.v.shape[-1]):
        raise RuntimeCheckError(
            "sdpa_vector_fast_mps expects query, key, and value to have the same head dimension; got "
            f"E={prep.q.shape[-1]}, Ev={prep.v.shape[-1]}"
        )
    out = sdpa_vector(prep, is_causal=is_causal, sequential=sequential, mask_addressing=mask_addressing)
    n_b, n_h, n_l, _ = prep.q.shape
    attn = torch.empty(n_b, n_h, n_l, prep.k.shape[2], dtype=prep.dtype)
    return view_as_query(out, prep), reshape_back(attn, prep)
