"""CPU port of the tiled prefill kernel ``prefill_attention<T, BQ, BK, BD, WM, WN, HAS_MASK, DO_CAUSAL, MaskType>``.

Kernel source: ``aten/src/ATen/native/mps/kernels/PrefillAttention.h`` (@ 9a6dec2, included from
Attention.metal; a Steel/MLX-style flash attention); host: ``sdpa_prefill_mps`` in Attention.mm @ 00a5f92.
Q is pre-scaled **in T** by scale*log2(e); per K tile of BK keys the fp32 scores are masked (-inf), then an
online softmax in base 2 updates (max, sum, O) with ``exp2``; at the end O / sum is cast to T. MPP
(``prefill_attention_mpp_*``, Metal Performance Primitives) is approximated by this kernel with its
(64, 32) blocks; its matmul2d internals are not modelled. The earlier ``steel_attention`` text (@ 0eb0aa5)
lacked the final "sum = 1 when max is -inf" fix, so a fully masked row was 0/0 = NaN there; this port
follows the later text (0).
"""

from __future__ import annotations

import torch
from torch import Tensor

from metal_ref._common import (
    Prepared,
    RuntimeCheckError,
    group_heads,
    prepare,
    ungroup_heads,
    view_as_query,
)

FRAG = 8
"""Side of the 8x8 simdgroup-matrix fragments the tiles are made of."""

LOG2E = 1.44269504089
"""The kernel's float literal for 1/ln(2): scores live in base 2 so it can use exp2."""

MPP_BLOCKS = (64, 32)
"""(BQ, BK) of the MPP variant for every supported head dim."""

_NEG_INF = float("-inf")


def block_shape(head_dim: int, *, mpp: bool = False) -> tuple[int, int]:
    """(BQ, BK) as ``prefill_block_shape_for_head_dim``: 256 -> (16, 8); 128 -> (32, 16); others -> (32, 32)."""
    if mpp:
        return MPP_BLOCKS
    if head_dim == 256:
        return (16, 8)
    if head_dim == 128:
        return (32, 16)
    return (32, 32)


def _tile_row_sum(p: Tensor) -> Tensor:
    """Row sum of a (..., BK) tile in the kernel's order.

    ``row_reduce<SumOp>``: per 8-column fragment ((c0+c1)+(c2+c3)) + ((c4+c5)+(c6+c7)) via the lane shuffles,
    then the fragments are added one after another onto 0.
    """
    lead, width = p.shape[:-1], p.shape[-1]
    frag = p.reshape(*lead, width // FRAG, 4, 2).sum(-1).reshape(*lead, width // FRAG, 2, 2).sum(-1).sum(-1)
    total = frag[..., 0]
    for j in range(1, frag.shape[-1]):
        total = total + frag[..., j]
    return total


def prefill_attention(prep: Prepared, *, is_causal: bool = False, block_k: int = 32) -> Tensor:
    """The kernel for all (Q block, head, batch): returns out (B, H, L, E) in the input dtype.

    Query rows are independent, so BQ only matters for the causal tile skipping (``kb_lim``), which is
    numerically a no-op (a fully masked tile rescales by exp2(0) = 1 and adds 0) and is not modelled.
    Masks: causal -> -inf above the diagonal (top-left aligned); bool -> -inf where False; a mask of the
    query dtype is **added to the base-2 scores** without the log2(e) factor, i.e. it acts as mask*ln(2) in
    natural units (by reading the kernel: only Q is pre-scaled). Fully masked rows give 0 (sum forced to 1).
    """
    if block_k % FRAG:
        raise ValueError(f"block_k={block_k} must be a multiple of {FRAG}")
    dtype = prep.dtype
    # TransformScale<T>: scale*log2e rounded to T, then q*scale in T (exact product, one rounding to T).
    scale_t = (torch.tensor(prep.scale, dtype=torch.float32) * torch.tensor(LOG2E, dtype=torch.float32)).to(dtype)
    q_scaled = (prep.q.float() * scale_t.float()).to(dtype).float()
    qg = group_heads(q_scaled, prep.gqa_factor)
    n_b, n_hk, n_g, n_l, n_e = qg.shape
    k, v = prep.k.float(), prep.v.float()
    n_s = k.shape[2]
    scores = torch.matmul(qg.reshape(n_b, n_hk, n_g * n_l, n_e), k.transpose(-1, -2))
    scores = scores.view(n_b, n_hk, n_g, n_l, n_s)
    if is_causal:
        allowed = torch.arange(n_s).view(1, n_s) <= torch.arange(n_l).view(n_l, 1)
        scores = scores.masked_fill(~allowed, _NEG_INF)
    if prep.mask is not None:
        mask = group_heads(prep.mask, prep.gqa_factor)
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(~mask, _NEG_INF)
        else:
            scores = scores + mask.float()
    n_tiles = -(-n_s // block_k)
    pad = n_tiles * block_k - n_s
    scores = torch.nn.functional.pad(scores, (0, pad), value=_NEG_INF).reshape(n_b, n_hk, n_g * n_l, -1)
    v = torch.nn.functional.pad(v, (0, 0, 0, pad))

    row_max = scores.new_full(scores.shape[:-1], _NEG_INF)
    row_sum = torch.zeros_like(row_max)
    out = scores.new_zeros((*scores.shape[:-1], v.shape[-1]))
    for kb in range(n_tiles):
        tile = scores[..., kb * block_k : (kb + 1) * block_k]
        new_max = torch.maximum(row_max, tile.amax(dim=-1))
        dead = new_max == _NEG_INF
        p = torch.exp2(tile - new_max.unsqueeze(-1)).masked_fill_(dead.unsqueeze(-1), 0.0)
        factor = torch.exp2(row_max - new_max).masked_fill_(dead, 1.0)
        row_max = new_max
        row_sum = row_sum * factor + _tile_row_sum(p)
        out = out * factor.unsqueeze(-1)
        for ik in range(block_k // FRAG):
            keys = slice(kb * block_k + ik * FRAG, kb * block_k + (ik + 1) * FRAG)
            out = out + torch.matmul(p[..., ik * FRAG : (ik + 1) * FRAG], v[:, :, keys])
    row_sum = row_sum.masked_fill(row_max == _NEG_INF, 1.0)
    out = out / row_sum.unsqueeze(-1)
    return ungroup_heads(out.view(n_b, n_hk, n_g, n_l, -1)).to(dtype)


def forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    *,
    mpp: bool = False,
    blocks: tuple[int, int] | None = None,
) -> tuple[Tensor, Tensor]:
    """Both outputs of ``sdpa_prefill_mps``: ``(out, out)``, the **same** tensor object twice.

    - out: (B, H, L, E) in the query dtype, ``view_as(query)`` for 3-D / >4-D queries.
    - ``mpp``: use the MPP block shape (64, 32); ``blocks``: force (BQ, BK).
    Raises RuntimeCheckError for the host's checks (E == Ev; a non-bool mask must have the query dtype).
    """
    prep = prepare(query, key, value, attn_mask, scale)
    if not (prep.q.shape[-1] == prep.k.shape[-1] == prep.v.shape[-1]):
        raise RuntimeCheckError(
            f"prefill attention needs E == Ev; got E={prep.q.shape[-1]}, Ev={prep.v.shape[-1]}"
        )
    if prep.mask is not None and prep.mask.dtype not in (torch.bool, prep.dtype):
        raise RuntimeCheckError(
            f"sdpa prefill:float mask dtype must match query dtype (mask {prep.mask.dtype}, query {prep.dtype})"
        )
    _, block_k = blocks if blocks is not None else block_shape(prep.q.shape[-1], mpp=mpp)
    out = view_as_query(prefill_attention(prep, is_causal=is_causal, block_k=block_k), prep)
    return out, out
