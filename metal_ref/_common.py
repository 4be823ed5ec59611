"""Shared pieces of the Metal ports: the runtime's input normalisation and the float64 oracle.

Input normalisation mirrors ``_scaled_dot_product_attention_math_mps`` in
``aten/src/ATen/native/mps/operations/Attention.mm`` (``ensure_4d``, mask expansion,
``sdp::calculate_scale`` and the reshape-back of the outputs). ``math_reference`` is the plain
float64 softmax(QK^T*scale + mask)V every port is tested against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

SUPPORTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
"""The dtypes the Metal kernels are instantiated for (float, half, bfloat); MPS has no float64."""

_NEG_INF = float("-inf")


class RuntimeCheckError(ValueError, RuntimeError):
    """The real op fails here too (a TORCH_CHECK, or a view/copy that cannot succeed).

    A ValueError for callers of this package and a RuntimeError like the one torch raises.
    """


class RuntimeNotImplementedError(RuntimeCheckError, NotImplementedError):
    """The real op refuses the input with TORCH_CHECK_NOT_IMPLEMENTED: a runtime check (a NotImplementedError
    as torch raises it). Other NotImplementedErrors of this package mark inputs it does not model."""


@dataclass(frozen=True)
class Prepared:
    """The op's inputs after ``ensure_4d`` and mask expansion, as every path sees them."""

    q: Tensor
    """Query, (B, Hq, L, E)."""
    k: Tensor
    """Key, (B, Hk, S, E)."""
    v: Tensor
    """Value, (B, Hk, S, Ev)."""
    mask: Tensor | None
    """Mask expanded to (B, Hq, L, S) (stride 0 on broadcast dims), or None."""
    query_shape: torch.Size
    """The caller's query shape, used to reshape outputs back."""
    unsqueezed: bool
    """True when ``ensure_4d`` changed the query's rank (3-D or >4-D query)."""
    scale: float
    """Softmax scale rounded to float32, as the kernels receive it."""

    @property
    def dtype(self) -> torch.dtype:
        return self.q.dtype

    @property
    def gqa_factor(self) -> int:
        """Query heads per KV head (``kv_head = head // gqa_factor`` in every kernel)."""
        return self.q.shape[1] // self.k.shape[1]


def fp32_scale(scale: float | None, head_dim: int) -> float:
    """``sdp::calculate_scale``: 1/sqrt(E) unless given, then rounded to float32 like the kernel argument."""
    value = 1.0 / math.sqrt(head_dim) if scale is None else float(scale)
    return torch.tensor(value, dtype=torch.float32).item()


def ensure_4d(x: Tensor, name: str) -> tuple[Tensor, bool]:
    """3-D -> unsqueeze(0); >4-D -> view(prod(prefix), H, L, D) (a ``view``, so it can fail, cf. #147443)."""
    if x.dim() == 3:
        return x.unsqueeze(0), True
    if x.dim() > 4:
        try:
            return x.view(math.prod(x.shape[:-3]), *x.shape[-3:]), True
        except RuntimeError as err:
            raise RuntimeCheckError(
                f"{name} of shape {tuple(x.shape)} and strides {x.stride()} cannot be viewed as 4-D; "
                "the runtime's ensure_4d uses view() and fails the same way (cf. pytorch#147443)"
            ) from err
    return x, False


def check_dtypes(query: Tensor, key: Tensor, value: Tensor) -> None:
    """Reject dtypes no Metal kernel or MPS tensor supports, with the runtime's wording where it has one."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if not t.dtype.is_floating_point:
            raise TypeError(f"scaled_dot_product_attention for MPS does not support dtype {t.dtype} ({name})")
        if t.dtype not in SUPPORTED_DTYPES:
            raise TypeError(
                f"{name}.dtype={t.dtype}: MPS and its attention kernels support only float32, float16 and bfloat16"
            )
    if not (query.dtype == key.dtype == value.dtype):
        raise TypeError(
            f"query, key and value must share one dtype (the kernels have a single T); got "
            f"query.dtype={query.dtype}, key.dtype={key.dtype}, value.dtype={value.dtype}"
        )


def prepare(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None, scale: float | None
) -> Prepared:
    """Validate the inputs and apply the runtime's ``ensure_4d`` and mask expansion."""
    check_dtypes(query, key, value)
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.dim() < 3:
            raise ValueError(f"{name} must have at least 3 dims (H, L, D); got shape {tuple(t.shape)}")
    q, unsqueezed = ensure_4d(query, "query")
    k, _ = ensure_4d(key, "key")
    v, _ = ensure_4d(value, "value")
    (b, hq, _, e), (bk, hk, s, ek), (bv, hv, sv, _) = q.shape, k.shape, v.shape
    if not (b == bk == bv):
        raise ValueError(f"batch sizes differ after ensure_4d: query {b}, key {bk}, value {bv}")
    if ek != e:
        raise ValueError(f"key head dim {ek} != query head dim E={e}")
    if sv != s or hv != hk:
        raise ValueError(f"key (Hk={hk}, S={s}) and value (H={hv}, S={sv}) disagree")
    if hk == 0 or hq % hk != 0:
        raise RuntimeCheckError(f"For GQA, the query heads Hq={hq} must be divisible by the key heads Hk={hk}")
    mask = None
    if attn_mask is not None:
        if not isinstance(attn_mask, Tensor):
            raise TypeError(f"attn_mask must be a torch.Tensor or None, got {type(attn_mask).__name__}")
        target = (*query.shape[:-1], s)
        try:
            expanded = attn_mask.expand(target)
        except RuntimeError as err:
            raise ValueError(
                f"attn_mask of shape {tuple(attn_mask.shape)} cannot be expanded to {target}"
            ) from err
        mask, _ = ensure_4d(expanded, "attn_mask")
    return Prepared(q, k, v, mask, query.shape, unsqueezed, fp32_scale(scale, e))


def reshape_back(t: Tensor, prep: Prepared) -> Tensor:
    """The runtime's reshape-back: 3-D query -> squeeze(0); >4-D -> view(prefix + last three dims)."""
    if not prep.unsqueezed:
        return t
    if len(prep.query_shape) == 3:
        return t.squeeze(0)
    return t.view(*prep.query_shape[:-3], *t.shape[1:4])


def view_as_query(t: Tensor, prep: Prepared) -> Tensor:
    """``out.view_as(orig_query)`` as the kernel paths do (valid because they require E == Ev)."""
    return t.view(prep.query_shape) if prep.unsqueezed else t


def group_heads(t: Tensor, gqa: int) -> Tensor:
    """(B, Hq, ...) -> (B, Hk, G, ...): query head h is (kv head h // G, member h % G)."""
    return t.reshape(t.shape[0], t.shape[1] // gqa, gqa, *t.shape[2:])


def ungroup_heads(t: Tensor) -> Tensor:
    """(B, Hk, G, ...) -> (B, Hq, ...)."""
    return t.reshape(t.shape[0], t.shape[1] * t.shape[2], *t.shape[3:])


def kernel_scores(prep: Prepared) -> Tensor:
    """Decode-kernel scores ``(scale * float(q)) . float(k)`` in fp32, grouped as (B, Hk, G, L, S).

    The kernels scale q in fp32 before the dot product; the lane-wise partial dots and the
    ``simd_sum`` tree are replaced by one fp32 matmul (same precision, different summation order).
    """
    qf = group_heads(prep.q.float() * prep.scale, prep.gqa_factor)
    b, hk, g, n_l, e = qf.shape
    kf = prep.k.float()
    scores = torch.matmul(qf.reshape(b, hk, g * n_l, e), kf.transpose(-1, -2))
    return scores.view(b, hk, g, n_l, kf.shape[2])


def math_reference(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    *,
    fully_masked: str = "nan",
) -> Tensor:
    """Exact attention in float64: softmax(Q K^T * scale + mask) V.

    - ``query`` (..., Hq, L, E), ``key`` (..., Hk, S, E), ``value`` (..., Hk, S, Ev); Hk must divide Hq
      (GQA: query head h reads KV head h // (Hq // Hk)). Leading dims broadcast.
    - ``attn_mask``: bool (False = masked, i.e. -inf) or additive float, broadcastable to (..., L, S).
    - ``is_causal``: top-left aligned (key j allowed for query i iff j <= i), masked with -inf.
    - ``scale``: 1/sqrt(E) unless given (used unrounded, in float64).
    - ``fully_masked``: result for a row whose scores are all -inf: "nan" (0/0, the default) or "zero".

    Returns float64 of shape query.shape[:-1] + (Ev,).
    """
    if fully_masked not in ("nan", "zero"):
        raise ValueError(f"fully_masked={fully_masked!r}; expected 'nan' or 'zero'")
    q, k, v = query.double(), key.double(), value.double()
    hq, hk = q.shape[-3], k.shape[-3]
    if hk != hq:
        if hk == 0 or hq % hk:
            raise ValueError(f"Hq={hq} is not a multiple of Hk={hk}")
        k = k.repeat_interleave(hq // hk, dim=-3)
        v = v.repeat_interleave(hq // hk, dim=-3)
    sc = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    scores = torch.matmul(q, k.transpose(-1, -2)) * sc
    n_l, n_s = scores.shape[-2:]
    if is_causal:
        allowed = torch.ones(n_l, n_s, dtype=torch.bool).tril()
        scores = scores.masked_fill(~allowed, _NEG_INF)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, _NEG_INF)
        else:
            scores = scores + attn_mask.double()
    if n_s == 0:
        fill = float("nan") if fully_masked == "nan" else 0.0
        return torch.full((*scores.shape[:-1], v.shape[-1]), fill, dtype=torch.float64)
    row_max = scores.amax(dim=-1, keepdim=True)
    dead = row_max == _NEG_INF
    weights = torch.exp(scores - torch.where(dead, 0.0, row_max))
    denom = weights.sum(dim=-1, keepdim=True)
    probs = weights / denom
    if fully_masked == "zero":
        probs = probs.masked_fill(dead, 0.0)
    return torch.matmul(probs, v)
