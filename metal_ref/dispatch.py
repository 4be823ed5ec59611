"""Path selection and entry point of ``aten._scaled_dot_product_attention_math_for_mps``, per era.

Source: ``_scaled_dot_product_attention_math_mps`` in ``aten/src/ATen/native/mps/operations/Attention.mm``:
"2026-03" is the dispatch the #176843 meta mirrors (about April snapshot @ 3acef2a), "current" is main
@ 00a5f92 (vector with head dim 256, dtype masks and causal; prefill; MPP; chunked MPSGraph).
"""

from __future__ import annotations

import torch
from torch import Tensor

from metal_ref import general, general_chunked, prefill, vector_1pass, vector_2pass
from metal_ref._common import RuntimeNotImplementedError, check_dtypes

PATHS = ("general", "vector_1pass", "vector_2pass", "general_chunked", "prefill", "mpp")
"""Every runtime path ``select_path`` can return and ``run(path=...)`` accepts."""

ERAS = ("2026-03", "current")

VECTOR_HEAD_DIMS = {"2026-03": (64, 96, 128), "current": (64, 96, 128, 256)}
PREFILL_HEAD_DIMS = (32, 64, 72, 80, 96, 128, 256)
MPP_HEAD_DIMS = (64, 96, 128, 256)
MAX_VECTOR_ROWS = 8
"""Decode kernels serve at most 8 query rows; prefill/MPP need more."""

TWO_PASS_MIN_KEYS = 1024
GQA_TWO_PASS_MIN_KEYS = 4096
_HALF_DTYPES = (torch.float16, torch.bfloat16)


def _check_era(era: str) -> None:
    if era not in ERAS:
        raise ValueError(f"era={era!r}; expected one of {ERAS}")


def _dims(query: Tensor, key: Tensor, value: Tensor) -> tuple[int, int, int, int, int, int]:
    """(Hq, Hk, L, S, E, Ev) as the runtime reads them after ensure_4d."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.dim() < 3:
            raise ValueError(f"{name} must have at least 3 dims (H, L, D); got shape {tuple(t.shape)}")
    return query.shape[-3], key.shape[-3], query.shape[-2], key.shape[-2], query.shape[-1], value.shape[-1]


def select_path(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    is_causal: bool = False,
    era: str = "2026-03",
    has_mpp: bool = False,
    *,
    disable_prefill: bool = False,
) -> str:
    """The runtime path for these inputs in ``era``; one of ``PATHS``.

    - "2026-03": vector iff L <= 8, L <= S, mask None or bool, E == Ev in {64, 96, 128} and not causal;
      2-pass iff S >= 1024 or (Hk < Hq and S >= 4096), else 1-pass; otherwise "general".
    - "current": vector also for head dim 256 and masks of the query dtype, and causal unless combined with a
      mask. Otherwise "mpp" (``has_mpp``, fp16/bf16, E == Ev in {64, 96, 128, 256}, L > 8, S > 0, mask
      None/bool/query dtype), else "prefill" (f32/f16/bf16, same mask rule, E == Ev in {32, 64, 72, 80, 96,
      128, 256}, L > 8, S > 0; ``disable_prefill`` models PYTORCH_MPS_DISABLE_PREFILL_ATTENTION=1, which
      also disables MPP), else "general_chunked" for fp16/bf16 with L > 3068, else "general".
    """
    _check_era(era)
    check_dtypes(query, key, value)
    hq, hk, n_l, n_s, e, ev = _dims(query, key, value)
    mask_dtype = None if attn_mask is None else attn_mask.dtype
    has_mask = attn_mask is not None
    dtype = query.dtype
    if era == "2026-03":
        mask_ok = mask_dtype in (None, torch.bool)
        vector = n_l <= MAX_VECTOR_ROWS and n_l <= n_s and mask_ok and e == ev and e in VECTOR_HEAD_DIMS[era]
        fast = vector and not is_causal
    else:
        mask_ok = mask_dtype in (None, torch.bool, dtype)
        vector = n_l <= MAX_VECTOR_ROWS and n_l <= n_s and mask_ok and e == ev and e in VECTOR_HEAD_DIMS[era]
        fast = vector and not (is_causal and has_mask)
    if fast:
        if n_s >= TWO_PASS_MIN_KEYS or (hk < hq and n_s >= GQA_TWO_PASS_MIN_KEYS):
            return "vector_2pass"
        return "vector_1pass"
    if era == "2026-03":
        return "general"
    long_q = n_l > MAX_VECTOR_ROWS and n_s > 0
    if (
        has_mpp
        and not disable_prefill
        and dtype in _HALF_DTYPES
        and e == ev
        and e in MPP_HEAD_DIMS
        and long_q
        and mask_ok
    ):
        return "mpp"
    if not disable_prefill and e == ev and e in PREFILL_HEAD_DIMS and long_q and mask_ok:
        return "prefill"
    if dtype in _HALF_DTYPES and n_l > general_chunked.CHUNK_ROWS:
        return "general_chunked"
    return "general"


def run(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
    path: str | None = None,
    era: str = "2026-03",
    has_mpp: bool = False,
    *,
    sequential: bool = False,
    march_mask_bug: bool = False,
    macos15_epsilon: bool = False,
    disable_prefill: bool = False,
) -> tuple[Tensor, Tensor]:
    """Both outputs of the op for a direct call, computed by the port of the path the runtime would take.

    - ``path``: force one of ``PATHS`` instead of ``select_path``.
    - ``dropout_p``: "current" raises NotImplementedError unless 0; "2026-03" ignores it (the op did not
      check it; F.sdpa only called the op with dropout 0).
    - ``enable_gqa``: with "2026-03" models the call site's repeat_interleave of K/V (so the kernels see
      Hk == Hq). Without it, a March 1-pass call with Hk < Hq read past K/V (gqa_factor passed as literal 1)
      and raises NotImplementedError here. "current" always handles Hk | Hq natively.
    - ``sequential``: replay the decode kernels' per-key online softmax (see
      ``vector_1pass.simdgroup_partials``).
    - ``march_mask_bug``: with "2026-03", read bool masks with the March kernels' addressing (1-pass: swapped
      strides + batch folded into bh; 2-pass: batch folded), see ``vector_1pass.read_kernel_mask``.
    - ``macos15_epsilon``: model the +1e-20 the MPSGraph path adds to fp32 Q K^T on macOS >= 15.
    - ``disable_prefill``: PYTORCH_MPS_DISABLE_PREFILL_ATTENTION=1 (current era).
    """
    _check_era(era)
    check_dtypes(query, key, value)
    if path is not None and path not in PATHS:
        raise ValueError(f"path={path!r}; expected one of {PATHS}")
    if era == "current" and dropout_p != 0.0:
        raise RuntimeNotImplementedError("scaled_dot_product_attention for MPS does not support dropout.")
    hq, hk = query.shape[-3] if query.dim() >= 3 else None, key.shape[-3] if key.dim() >= 3 else None
    if era == "2026-03" and enable_gqa and hq is not None and hk is not None and hk != hq:
        if hk == 0 or hq % hk:
            raise ValueError(f"For GQA, q_heads ({hq}) must be divisible by k_heads ({hk})")
        key = key.repeat_interleave(hq // hk, dim=-3)
        value = value.repeat_interleave(hq // hk, dim=-3)
        hk = hq
    if path is None:
        path = select_path(
            query, key, value, attn_mask, is_causal, era, has_mpp, disable_prefill=disable_prefill
        )
    common = {"attn_mask": attn_mask, "is_causal": is_causal, "scale": scale}
    if path in ("vector_1pass", "vector_2pass"):
        if era == "2026-03":
            if is_causal:
                raise ValueError("the March decode kernels have no causal variant (is_causal goes to 'general')")
            if attn_mask is not None and attn_mask.dtype != torch.bool:
                raise ValueError("the March decode kernels read the mask as bool; pass a bool mask")
        if path == "vector_1pass":
            if era == "2026-03" and hk is not None and hk != hq:
                raise NotImplementedError(
                    "March 1-pass with Hk < Hq: the host passed gqa_factor=1, so the kernel read past K/V "
                    "(undefined); use enable_gqa=True to model the call site's repeat_interleave"
                )
            addressing = "march-1pass" if (era == "2026-03" and march_mask_bug) else "correct"
            return vector_1pass.forward(
                query, key, value, **common, sequential=sequential, mask_addressing=addressing
            )
        addressing = "folded-batch" if (era == "2026-03" and march_mask_bug) else "correct"
        return vector_2pass.forward(query, key, value, **common, sequential=sequential, mask_addressing=addressing)
    if path == "general":
        return general.forward(query, key, value, **common, era=era, macos15_epsilon=macos15_epsilon)
    if path == "general_chunked":
        return general_chunked.forward(query, key, value, **common, macos15_epsilon=macos15_epsilon)
    return prefill.forward(query, key, value, **common, mpp=path == "mpp")
