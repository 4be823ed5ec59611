"""A custom op whose eager CPU kernel crashes its process (SIGSEGV, as a C++ kernel's bug does) on one size,
and whose fake is right: ``ref check`` and ``fuzz op`` must lose only that input (tests/unit/test_isolation.py)."""

import ctypes

import torch


@torch.library.custom_op("sc_crash::doubled", mutates_args=(), device_types="cpu")
def doubled(x: torch.Tensor) -> torch.Tensor:
    if x.shape[1] == 2:
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    return x * 2


@doubled.register_fake
def _(x):
    return torch.empty_like(x)


CONTRACT = """schema = 1
op = "sc_crash::doubled"

[dims]
N = { min = 1, max = 64 }
W = { min = 1, max = 64 }

[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(N, W)"

[[paths]]
id = "any"
when = "true"
outputs = ["(N, W)"]
"""
