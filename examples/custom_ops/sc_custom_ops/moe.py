"""A fused-MoE-style op, registered with ``torch.library.define`` and ``register_fake``: its output's hidden
dim is padded to a multiple of 128, as fused kernels pad for their tiles."""

import torch

HIDDEN_ALIGN = 128

torch.library.define(
    "sc_custom_ops::fused_moe",
    "(Tensor hidden_states, Tensor w1, Tensor w2, Tensor topk_weights, Tensor topk_ids) -> Tensor")


def round_up(x, multiple):
    return (x + multiple - 1) // multiple * multiple


@torch.library.impl("sc_custom_ops::fused_moe", "CPU")
def fused_moe_cpu(hidden_states, w1, w2, topk_weights, topk_ids):
    tokens, hidden = hidden_states.shape
    out = hidden_states.new_zeros((tokens, round_up(hidden, HIDDEN_ALIGN)))
    for slot in range(topk_ids.size(1)):
        gate_up = torch.einsum("th,tih->ti", hidden_states, w1[topk_ids[:, slot]])
        gate, up = gate_up.chunk(2, dim=-1)
        down = torch.einsum("ti,thi->th", torch.nn.functional.silu(gate) * up, w2[topk_ids[:, slot]])
        out[:, :hidden] += topk_weights[:, slot, None] * down
    return out


@torch.library.register_fake("sc_custom_ops::fused_moe")
def fused_moe_fake(hidden_states, w1, w2, topk_weights, topk_ids):
    return hidden_states.new_empty((hidden_states.size(0), round_up(w2.size(1), HIDDEN_ALIGN)))
