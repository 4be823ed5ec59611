"""Hand-written meta kernels for aten::_scaled_dot_product_attention_math_for_mps: a guard-free reference,
the March-2026 regression, and mutants, one defect each. Every function has the op's signature."""

import torch


def _ensure_4d(x):
    if x.dim() == 3:
        return x.unsqueeze(0), True
    if x.dim() > 4:
        batch = 1
        for i in range(x.dim() - 3):
            batch *= x.shape[i]
        return x.view(batch, x.size(-3), x.size(-2), x.size(-1)), True
    return x, False


def _restore(t, query, unsqueezed):
    if not unsqueezed:
        return t
    if query.dim() == 3:
        return t.squeeze(0)
    return t.view(list(query.shape[:-3]) + list(t.shape[1:4]))


def _shapes(query, value):
    q_, unsqueezed = _ensure_4d(query)
    v_, _ = _ensure_4d(value)
    batch, heads, seq, _ = q_.shape
    _, _, kv_seq, ev = v_.shape
    return q_, unsqueezed, batch, heads, seq, kv_seq, ev


def fixed(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *, scale=None,
          enable_gqa=False):
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    out = q_.new_empty((b, h, lq, ev))
    attn = q_.new_empty((b, h, lq, s))
    return _restore(out, query, unsq), _restore(attn, query, unsq)


def regressed(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *, scale=None):
    """The meta kernel after #176843 (eccc7be), reconstructed from the facts sheet, section 1.2."""
    q_, unsqueezed = _ensure_4d(query)
    k_, _ = _ensure_4d(key)
    v_, _ = _ensure_4d(value)
    batch_size, num_head, q_size, head_size = q_.shape
    _, k_size, max_seq_length, _ = k_.shape
    value_head_size = v_.size(-1)
    mask_ = attn_mask

    def sdpa_general_mps():
        out = q_.new_empty((batch_size, num_head, q_size, value_head_size))
        attn = q_.new_empty((batch_size, num_head, q_size, max_seq_length))
        return _restore(out, query, unsqueezed), _restore(attn, query, unsqueezed)

    def sdpa_vector_fast_mps():
        out = q_.new_empty(q_.shape)
        if unsqueezed:
            out = out.view_as(query)
        attn = q_.new_empty((batch_size, num_head, q_size, max_seq_length))
        return out, _restore(attn, query, unsqueezed)

    def sdpa_vector_2pass_mps():
        out = q_.new_empty(q_.shape)
        intermediate = q_.new_empty((batch_size, num_head, q_size, 32, head_size))
        return out, intermediate

    query_seq_len = q_.size(2)
    sdpa_vector_supported_head_dim = head_size == value_head_size and head_size in (64, 96, 128)
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


# ---- output-0 mistakes (no guard; the shapes are wrong) -------------------------------------------------

def out_uses_query_head_dim(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None,
                            *, scale=None, enable_gqa=False):
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    return _restore(q_.new_empty(q_.shape), query, unsq), _restore(q_.new_empty((b, h, lq, s)), query, unsq)


def out_rank_not_restored(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None,
                          *, scale=None, enable_gqa=False):
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    return q_.new_empty((b, h, lq, ev)), q_.new_empty((b, h, lq, s))


def out_padded_length(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None,
                      *, scale=None, enable_gqa=False):
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    padded = (lq + 31) // 32 * 32
    return _restore(q_.new_empty((b, h, padded, ev)), query, unsq), q_.new_empty((b, h, lq, s))


def out_min_length(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None,
                   *, scale=None, enable_gqa=False):
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    return _restore(q_.new_empty((b, h, torch.sym_min(lq, s), ev)), query, unsq), q_.new_empty((b, h, lq, s))


# ---- guards, specialisations and asserts on dynamic dims ------------------------------------------------

def _guarded(cond_fn):
    def kernel(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *,
               scale=None, enable_gqa=False):
        q_, unsq, b, h, lq, s, ev = _shapes(query, value)
        e = q_.size(-1)
        if cond_fn(b=b, h=h, lq=lq, s=s, e=e, ev=ev):
            out = q_.new_empty((b, h, lq, ev))
        else:
            out = q_.new_empty((b, h, lq, ev))
        return _restore(out, query, unsq), _restore(q_.new_empty((b, h, lq, s)), query, unsq)

    return kernel


guard_on_S = _guarded(lambda s, **_: s >= 1024)
guard_on_E = _guarded(lambda e, **_: e == 64)
guard_on_BH = _guarded(lambda b, h, **_: b * h > 4)
guard_L_mod_8 = _guarded(lambda lq, **_: lq % 8 == 0)
guard_L_eq_1 = _guarded(lambda lq, **_: lq == 1)


def specialize_int_L(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *,
                     scale=None, enable_gqa=False):
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    n = int(lq)
    return _restore(q_.new_empty((b, h, n, ev)), query, unsq), _restore(q_.new_empty((b, h, lq, s)), query, unsq)


def check_L_le_4096(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *,
                    scale=None, enable_gqa=False):
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    torch._check(lq <= 4096, lambda: "query too long")
    return _restore(q_.new_empty((b, h, lq, ev)), query, unsq), _restore(q_.new_empty((b, h, lq, s)), query, unsq)


# ---- guard-free rewrites that must pass ------------------------------------------------------------------

def uses_sym_max(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *,
                 scale=None, enable_gqa=False):
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    rows = torch.sym_max(lq, 1)  # equals lq on the domain (L >= 1), without a guard
    return _restore(q_.new_empty((b, h, rows, ev)), query, unsq), _restore(q_.new_empty((b, h, lq, s)), query, unsq)


def static_rank_and_dtype_branches(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                   dropout_mask=None, *, scale=None, enable_gqa=False):
    if query.dim() == 3:  # rank is static per case: not a guard on a size
        b, h, lq, _ = 1, query.size(0), query.size(1), query.size(2)
    else:
        q4, _ = _ensure_4d(query)
        b, h, lq, _ = q4.shape
    dtype = torch.float32 if query.dtype == torch.float16 else query.dtype
    dtype = query.dtype if attn_mask is None or attn_mask.dtype != torch.bool else dtype
    ev, s = value.size(-1), value.size(-2)
    out = query.new_empty((b, h, lq, ev), dtype=query.dtype)
    attn = query.new_empty((b, h, lq, s), dtype=dtype)
    if query.dim() == 3:
        return out.squeeze(0), attn.squeeze(0)
    return out.view(list(query.shape[:-1]) + [ev]), attn.view(list(query.shape[:-1]) + [s])


def branch_changes_shape(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *,
                         scale=None, enable_gqa=False):
    """A branch that really changes output 0: right for L <= 8 only."""
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    rows = lq if lq <= 8 else 8
    return _restore(q_.new_empty((b, h, rows, ev)), query, unsq), _restore(q_.new_empty((b, h, lq, s)), query, unsq)


def guard_on_true_division(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None,
                           *, scale=None, enable_gqa=False):
    """A guard on a float expression, outside the contract language: z3 never sees it, but torch's expression
    differs between L=1 and L=8, which proves the branch."""
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    if lq / 3 > 2.5:
        pass
    return _restore(q_.new_empty((b, h, lq, ev)), query, unsq), _restore(q_.new_empty((b, h, lq, s)), query, unsq)


def constant_float_guard(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None,
                         *, scale=None, enable_gqa=False):
    """A float guard that holds for every size, but neither torch's ranges nor z3 can show it: inconclusive."""
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    if (lq / 3) * 3 > 0.1 * lq:  # 0.1 is no exact quotient of small integers (0.5 would translate as 1/2)
        pass
    return _restore(q_.new_empty((b, h, lq, ev)), query, unsq), _restore(q_.new_empty((b, h, lq, s)), query, unsq)


def branch_with_guard_or_false(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                               dropout_mask=None, *, scale=None, enable_gqa=False):
    """guard_or_false never raises on unbacked sizes (torch assumes False and goes on), but with example
    sizes, as torch.export traces, it installs a guard: the seed's bug in torch's 'unbacked-safe' idiom."""
    from torch.fx.experimental.symbolic_shapes import guard_or_false

    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    rows = 8 if guard_or_false(lq > 8) else lq
    return _restore(q_.new_empty((b, h, rows, ev)), query, unsq), _restore(q_.new_empty((b, h, lq, s)), query, unsq)


def settled_guard_or_true(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *,
                          scale=None, enable_gqa=False):
    """guard_or_* on facts the domain decides (a product of sizes >= 1, a size == 0): no branch on a dim."""
    from torch.fx.experimental.symbolic_shapes import guard_or_false, guard_or_true

    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    if not guard_or_true(lq * s >= 1) or guard_or_false(lq == 0):
        raise RuntimeError("empty attention")
    return _restore(q_.new_empty((b, h, lq, ev)), query, unsq), _restore(q_.new_empty((b, h, lq, s)), query, unsq)


def rows_by_sym_ite(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *,
                    scale=None, enable_gqa=False):
    """Guard-free (torch.sym_ite never guards) but wrong: output 0 has S rows once L > 8."""
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    rows = torch.sym_ite(lq <= 8, lq, s)
    return _restore(q_.new_empty((b, h, rows, ev)), query, unsq), _restore(q_.new_empty((b, h, lq, s)), query, unsq)


def attn_cols_by_sym_ite(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *,
                         scale=None, enable_gqa=False):
    """Guard-free and right: torch.sym_ite picks output 1's width per path (unspecified by the contract)."""
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    cols = torch.sym_ite(lq <= 8, s, lq)
    return _restore(q_.new_empty((b, h, lq, ev)), query, unsq), _restore(q_.new_empty((b, h, lq, cols)), query, unsq)


def assert_on_a_float(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *,
                      scale=None, enable_gqa=False):
    """A runtime assert outside the contract language that narrows L (L / 3 < 100 means L <= 299)."""
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    torch._check(lq / 3 < 100)
    return _restore(q_.new_empty((b, h, lq, ev)), query, unsq), _restore(q_.new_empty((b, h, lq, s)), query, unsq)


def rows_from_a_float(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *,
                      scale=None, enable_gqa=False):
    """Output 0 computed through floats (int(1.1 * L)): outside the contract language (1.1 is no exact quotient
    of small integers; 1.5 would translate as 3/2), and wrong from L = 10."""
    q_, unsq, b, h, lq, s, ev = _shapes(query, value)
    rows = torch.sym_int(torch.sym_float(lq) * 1.1)
    return _restore(q_.new_empty((b, h, rows, ev)), query, unsq), _restore(q_.new_empty((b, h, lq, s)), query, unsq)
