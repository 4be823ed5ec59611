"""Custom ops for the eager-reference tests: a CPU kernel that computes in (B, S, H, D) and returns the
(B, H, S, D) view of it (``.transpose(1, 2)``, as attention kernels do), with a fake that returns a contiguous
tensor (wrong strides wherever H > 1 and S > 1) and a fixed twin whose fake returns the same permuted view."""

import torch


def _heads_first(q: torch.Tensor) -> torch.Tensor:
    b, h, s, d = q.shape
    out = q.new_empty((b, s, h, d))
    out.copy_(q.transpose(1, 2))
    return out.transpose(1, 2)


@torch.library.custom_op("sc_eager::heads_first", mutates_args=(), device_types="cpu")
def heads_first(q: torch.Tensor) -> torch.Tensor:
    return _heads_first(q)


@heads_first.register_fake
def _(q):
    return q.new_empty(q.shape)  # contiguous: the real kernel returns a transposed view


@torch.library.custom_op("sc_eager::heads_first_fixed", mutates_args=(), device_types="cpu")
def heads_first_fixed(q: torch.Tensor) -> torch.Tensor:
    return _heads_first(q)


@heads_first_fixed.register_fake
def _(q):
    b, h, s, d = q.shape
    return q.new_empty((b, s, h, d)).transpose(1, 2)


CONTRACT = """schema = 1
op = "sc_eager::{name}"

[dims]
B = {{ min = 1 }}
H = {{ min = 1 }}
S = {{ min = 1 }}
D = {{ min = 1 }}

[[args]]
name = "q"
kind = "tensor"
dtype = "float32"
shape = "(B, H, S, D)"

[[paths]]
id = "any"
when = "true"
outputs = ["(B, H, S, D)"]
"""
