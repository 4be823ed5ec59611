"""A meta kernel for aten::_scaled_dot_product_attention_math_for_mps that crashes its process (SIGSEGV, as a
C++ kernel's bug does) on the causal cases and is right on the others: a crash must cost only its own cases."""

import ctypes

from tests.kernels.sdpa_kernels import fixed


def segfaults_when_causal(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *,
                          scale=None, enable_gqa=False):
    if is_causal:
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    return fixed(query, key, value, attn_mask, dropout_p, is_causal, dropout_mask, scale=scale, enable_gqa=enable_gqa)


def segfaults_when_short(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, *,
                         scale=None, enable_gqa=False):
    """Crashes only where the query is at most 8 long: the crash comes while one region of the case is traced."""
    if query.size(-2) <= 8:
        ctypes.string_at(0)
    return fixed(query, key, value, attn_mask, dropout_p, is_causal, dropout_mask, scale=scale, enable_gqa=enable_gqa)
