"""Meta kernels for aten::_scaled_dot_product_attention_math_for_mps that fuzzing and verify tell apart.
Every function has the op's signature."""


def _out0(query, value):
    return query.new_empty(tuple(query.shape[:-1]) + (value.size(-1),))


def output0_uses_key_length(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None,
                            *, scale=None, enable_gqa=False):
    """Output 0 ends in S (the key length) instead of Ev: wrong exactly when S != Ev."""
    out = query.new_empty(tuple(query.shape[:-1]) + (key.size(-2),))
    attn = query.new_empty(tuple(query.shape[:-1]) + (key.size(-2),))
    return out, attn


def branches_on_query_length(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None,
                             *, scale=None, enable_gqa=False):
    """Copies the runtime's decode-kernel row limit (L <= 8) into the meta kernel, as #176843 did, but keeps
    output 0 right on both sides: only the unspecified output 1 differs. Its branch is a guard on L under
    torch.export: verify proves it (L = 9) and the fuzzer, running it as export does, sees it."""
    out = _out0(query, value)
    if query.size(-2) <= 8:
        attn = query.new_empty(tuple(query.shape[:-1]) + (key.size(-2),))
    else:
        attn = query.new_empty((0,))
    return out, attn
