"""SC015 (shapecheck fuzz op): output 0 has the contract's shape, but the meta kernel allocates it as a
transposed view (its last two dims swapped in memory), where the runtime returns a contiguous tensor."""


def kernel(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *, scale=None,
           enable_gqa=False):
    rows, cols = query.size(-2), value.size(-1)
    out = query.new_empty(tuple(query.shape[:-2]) + (cols, rows)).transpose(-1, -2)
    attn = query.new_empty(tuple(query.shape[:-1]) + (key.size(-2),))
    return out, attn
