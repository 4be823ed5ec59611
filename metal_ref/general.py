"""CPU port of the MPSGraph path ``sdpa_general_mps`` (no .metal file: an MPSGraph built in Attention.mm).

Source: ``aten/src/ATen/native/mps/operations/Attention.mm`` (about April 2026 @ 3acef2a; main @ 00a5f92).
Graph: Q K^T in the input dtype (+1e-20 for fp32 on macOS >= 15) -> cast to fp32 -> * scale (fp32) ->
causal band with -1e20 (top-left aligned) or + mask cast to fp32 -> fp32 softmax with all -inf rows zeroed ->
probabilities x V -> cast to the input dtype. Returns (out, attn), attn being the softmax before the zeroing.
"""

from __future__ import annotations

import torch
from torch import Tensor

from metal_ref._common import Prepared, RuntimeCheckError, prepare, reshape_back

CAUSAL_FILL = -1e20
"""Value the graph selects for scores outside the causal band (not -inf, so those rows are never zeroed)."""

MACOS15_EPSILON = 1e-20
"""Added to fp32 Q K^T on macOS >= 15 so MPSGraph does not pick its leaking fused SDPA."""

ERAS = ("2026-03", "current")


def sdpa_general(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None,
    *,
    is_causal: bool,
    scale: float,
    macos15_epsilon: bool = False,
) -> tuple[Tensor, Tensor]:
    """The graph on 4-D tensors whose K/V heads equal (or broadcast to) the query heads.

    - ``mask``: (B, H, L, S), any dtype; cast to fp32 and **added**, so a bool mask adds 1/0 rather than
      masking (by reading the graph; untested on hardware). Ignored when ``is_causal`` (March behaviour).
    - ``macos15_epsilon``: model the +1e-20 added to fp32 Q K^T on macOS >= 15 (off by default: it only
      changes scores that are exactly 0 before scaling).
    Returns out (B, H, L, Ev) and attn (B, H, L, S), both in the query dtype.
    """
    dtype = q.dtype
    scores = torch.matmul(q, k.transpose(-1, -2))
    if macos15_epsilon and scores.dtype == torch.float32:
        scores = scores + MACOS15_EPSILON
    scores = scores.float() * scale
    n_l, n_s = scores.shape[-2:]
    if is_causal:
        band = torch.ones(n_l, n_s, dtype=torch.bool).tril()
        scores = scores.masked_fill(~band, CAUSAL_FILL)
    elif mask is not None:
        scores = scores + mask.float()
    all_neg_inf = (scores == float("-inf")).all(dim=-1, keepdim=True)
    probs = torch.softmax(scores, dim=-1)
    corrected = probs.masked_fill(all_neg_inf, 0.0)
    out = torch.matmul(corrected, v.float())
    return out.to(dtype), probs.to(dtype)


def expand_kv_heads(prep: Prepared, era: str) -> tuple[Tensor, Tensor]:
    """K/V with the query's head count, as the graph's matmuls need.

    Current main repeat_interleaves K/V inside ``sdpa_general_mps``. In March the call site did that, so a
    direct op call with Hk < Hq relied on MPSGraph batch broadcasting, which works only for Hk == 1
    (by reading; raises RuntimeCheckError otherwise).
    """
    hq, hk = prep.q.shape[1], prep.k.shape[1]
    if hk == hq:
        return prep.k, prep.v
    if era == "2026-03" and hk != 1:
        raise RuntimeCheckError(
            f"March-era MPSGraph path: Q K^T with Hq={hq} and Hk={hk} heads does not broadcast (the call site, "
            "not the op, repeated K/V for GQA then); pass enable_gqa=True to model the call site"
        )
    return prep.k.repeat_interleave(hq // hk, dim=1), prep.v.repeat_interleave(hq // hk, dim=1)


def forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    *,
    era: str = "current",
    macos15_epsilon: bool = False,
) -> tuple[Tensor, Tensor]:
    """Both outputs of ``sdpa_general_mps``: (out, attn), each reshaped back to the query's rank.

    - Output 0: (..., H, L, Ev) in the query dtype; fully masked (all -inf) rows give 0.
    - Output 1: softmax probabilities (..., H, L, S) before the all-masked-row zeroing (NaN rows there),
      cast to the query dtype.
    - ``era``: "current" raises on causal + mask (TORCH_CHECK added after March); "2026-03" silently ignores
      the mask when causal.
    """
    if era not in ERAS:
        raise ValueError(f"era={era!r}; expected one of {ERAS}")
    prep = prepare(query, key, value, attn_mask, scale)
    if era == "current" and is_causal and prep.mask is not None:
        raise RuntimeCheckError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"
        )
    k, v = expand_kv_heads(prep, era)
    out, attn = sdpa_general(
        prep.q, k, v, prep.mask, is_causal=is_causal, scale=prep.scale, macos15_epsilon=macos15_epsilon
    )
    return reshape_back(out, prep), reshape_back(attn, prep)
