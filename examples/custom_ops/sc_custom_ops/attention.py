"""Decode attention, written as vLLM-style libraries write it: ``torch.library.custom_op`` for the real kernel
and ``register_fake`` for the shapes.

``decode_attention``'s fake copies the runtime's kernel choice (short queries over long caches take a
split-KV kernel) into the fake: the bug class of PyTorch #177603. Every branch returns the same shape, but
the branch itself makes ``torch.export`` specialise the query length. ``decode_attention_fixed`` is the
same op with a path-independent fake.
"""

import torch

SPLIT_KV_MAX_QUERY = 8  # the runtime's heuristic: at most this many query tokens use the split-KV kernel


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    weights = torch.softmax((q @ k.transpose(-2, -1)) * scale, dim=-1)
    return weights @ v


@torch.library.custom_op("sc_custom_ops::decode_attention", mutates_args=())
def decode_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    return _attention(q, k, v, scale)


@decode_attention.register_fake
def _(q, k, v, scale):
    if q.size(2) <= SPLIT_KV_MAX_QUERY:  # copied from the runtime's dispatch: the split-KV decode kernel
        return q.new_empty((q.size(0), q.size(1), q.size(2), v.size(-1)))
    return q.new_empty((q.size(0), q.size(1), q.size(2), v.size(-1)))


@torch.library.custom_op("sc_custom_ops::decode_attention_fixed", mutates_args=())
def decode_attention_fixed(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    return _attention(q, k, v, scale)


@decode_attention_fixed.register_fake
def _(q, k, v, scale):
    return q.new_empty((q.size(0), q.size(1), q.size(2), v.size(-1)))
