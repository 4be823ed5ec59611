"""A meta kernel of aten._scaled_dot_product_attention_math_for_mps in an older signature (no attn_mask,
dropout_p, is_causal, dropout_mask or scale): a contract's cases that pass those arguments cannot be run with it
(every case is skipped, hunt 57)."""

import torch
from torch._meta_registrations import register_meta

aten = torch.ops.aten


@register_meta([aten._scaled_dot_product_attention_math_for_mps])
def meta_sdpa_mps_old(query, key, value):
    out = query.new_empty(query.shape[:-1] + value.shape[-1:])
    return out, query.new_empty(query.shape[:-1] + key.shape[-2:-1])
