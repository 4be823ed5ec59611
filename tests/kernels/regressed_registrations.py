# A file in the style of torch/_meta_registrations.py, as a PR would change it. Only the function
# registered for the op under test may run: the rest registers an op torch lacks and fails on import.
import torch
from torch._meta_registrations import register_meta

aten = torch.ops.aten

raise RuntimeError("importing this file must not happen")


@register_meta([aten._op_the_installed_torch_does_not_have])
def meta__op_the_installed_torch_does_not_have(x):
    return x


@register_meta([aten._scaled_dot_product_attention_math_for_mps])
def meta__scaled_dot_product_attention_math_for_mps(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, scale=None
):
    def ensure_4d(x):
        if x.dim() == 3:
            return x.unsqueeze(0), True
        elif x.dim() > 4:
            batch_size = 1
            for i in range(x.dim() - 3):
                batch_size *= x.shape[i]
            return x.view(batch_size, x.size(-3), x.size(-2), x.size(-1)), True
        else:
            return x, False

    q_, unsqueezed = ensure_4d(query)
    k_, _ = ensure_4d(key)
    v_, _ = ensure_4d(value)
    batch_size, num_head, q_size, head_size = q_.shape
    _, k_size, max_seq_length, _ = k_.shape
    value_head_size = v_.size(-1)

    def sdpa_general_mps():
        out = q_.new_empty((batch_size, num_head, q_size, value_head_size))
        attn = q_.new_empty((batch_size, num_head, q_size, max_seq_length))
        if unsqueezed:
            if query.dim() == 3:
                out = out.squeeze(0)
                attn = attn.squeeze(0)
            else:
                out = out.view(list(query.shape[:-3]) + list(out.shape[1:4]))
                attn = attn.view(list(query.shape[:-3]) + list(attn.shape[1:4]))
        return out, attn

    def sdpa_vector_fast_mps():
        out = q_.new_empty(q_.shape)
        if unsqueezed:
            out = out.view_as(query)
        attn = q_.new_empty((batch_size, num_head, q_size, max_seq_length))
        return out, attn

    def sdpa_vector_2pass_mps():
        return q_.new_empty(q_.shape), q_.new_empty((batch_size, num_head, q_size, 32, head_size))

    query_seq_len = q_.size(2)
    sdpa_vector_supported_head_dim = head_size == value_head_size and head_size in (64, 96, 128)
    mask_ = attn_mask
    supports_sdpa_vector = (
        (query_seq_len <= 8)
        and (query_seq_len <= k_.size(2))
        and ((mask_ is None) or (mask_.dtype == torch.bool))
        and sdpa_vector_supported_head_dim
    )
    supports_fast_sdpa = (not is_causal) and supports_sdpa_vector
    if not supports_fast_sdpa:
        return sdpa_general_mps()
    elif (max_seq_length >= 1024) or (k_size < q_size and max_seq_length >= 4096):
        return sdpa_vector_2pass_mps()
    else:
        return sdpa_vector_fast_mps()
