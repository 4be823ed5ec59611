"""Meta kernels for the output-table rules (SC017-SC019), each with its fixed twin, for an attention-like op
``sc_outputs::attn(q) -> (out, lse, debug)`` whose runtime allocates ``out`` as (B, L, H, E) and returns it
transposed to (B, H, L, E); ``lse`` is float32 for half and float32 inputs and float64 for float64; ``debug``
is None. Contract: ``output_kernels.toml``."""

import torch


def _lse(q):
    dtype = torch.float64 if q.dtype == torch.float64 else torch.float32
    return q.new_empty(q.shape[:-1], dtype=dtype)


def fixed(q):
    b, h, seq, e = q.shape
    return q.new_empty((b, seq, h, e)).transpose(1, 2), _lse(q), None


def contiguous_out(q):
    return q.new_empty(q.shape), _lse(q), None


def lse_always_float32(q):
    b, h, seq, e = q.shape
    return q.new_empty((b, seq, h, e)).transpose(1, 2), q.new_empty(q.shape[:-1], dtype=torch.float32), None


def debug_tensor(q):
    b, h, seq, e = q.shape
    return q.new_empty((b, seq, h, e)).transpose(1, 2), _lse(q), q.new_empty((0,))
