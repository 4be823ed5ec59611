"""Kernels whose size checks need exact arithmetic: float true division of sizes inside a round-up helper (as
torch's ``_scaled_grouped_mm`` meta writes ``round_up(K / 128, 4)``), and a modulo by a product of dims that
follows from the contract's ``requires`` (pixel-shuffle style). Contract: size_helpers.toml."""

import torch


def round_up(x, y):
    return ((x + y - 1) // y) * y


def scales_round_up(x, scale):
    """scale holds one row per 128 columns of x, padded to a multiple of 4 rows."""
    torch._check(scale.size(0) == round_up(x.size(1) / 128, 4))
    return x.new_empty((x.size(0), x.size(1)))


def scales_round_up_wrong(x, scale):
    """Checks blocks of 64 columns: false wherever the contract's 128-column blocks differ."""
    torch._check(scale.size(0) == round_up(x.size(1) / 64, 4))
    return x.new_empty((x.size(0), x.size(1)))
