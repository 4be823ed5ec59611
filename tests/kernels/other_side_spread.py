"""Kernels wrong only on the other side of their own ``guard_or_false``, where the two points verify ran there
showed nothing (hunt 61):

- ``sdpa_heads_swapped``: ``(B, L, H, Ev)`` where ``H == 1``; the SDPA-MPS contract ties Hk to H
  (``H % Hk == 0``), so no point of that side has every other dim at 2 or more, and only the least one (L = 1,
  where the swap is invisible) was tried;
- ``conv_spatial_swapped``: Ho and Wo swapped where ``Ci == 1``; both points tried set H and W alike.
"""

from torch.fx.experimental.symbolic_shapes import guard_or_false


def sdpa_heads_swapped(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *,
                       scale=None, enable_gqa=False):
    B, H, L, _ = query.shape
    Ev = value.shape[-1]
    S = key.shape[-2]
    if guard_or_false(H == 1):
        out = query.new_empty((B, L, H, Ev))
    else:
        out = query.new_empty((B, H, L, Ev))
    return out, query.new_empty((B, H, L, S))


def conv_spatial_swapped(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    N, Ci, H, W = input.shape
    Co, _, k, _ = weight.shape
    s, p = stride[0], padding[0]
    Ho = (H + 2 * p - k) // s + 1
    Wo = (W + 2 * p - k) // s + 1
    if guard_or_false(Ci == 1):
        Ho, Wo = Wo, Ho
    return input.new_empty((N, Co, Ho, Wo))


def sdpa_key_dim_for_value_dim(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None,
                               *, scale=None, enable_gqa=False):
    """A rank-3 kernel whose output 0 takes the key's E where the value's Ev belongs: wrong wherever E != Ev, in
    both eras of the path; the current era's finding was blamed on torch's layout answers at the unsqueezes."""
    q_, k_, v_ = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
    b, h, seq, _ = q_.shape
    s = v_.shape[2]
    out = q_.new_empty((b, h, seq, k_.size(-1)))
    attn = q_.new_empty((b, h, seq, s))
    return out.squeeze(0), attn.squeeze(0)
