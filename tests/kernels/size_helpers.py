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


def unshuffle_channels(x, ph, pw):
    """Pixel-shuffle style: the channels split into blocks of PH * PW, a relation the contract states."""
    c, r, s = x.size(1), ph.size(0), pw.size(0)
    torch._check(c % (r * s) == 0)
    return x.new_empty((x.size(0), c // (r * s), x.size(2) * r, x.size(3) * s))


def unshuffle_channels_wrong(x, ph, pw):
    """Checks blocks of PH * PH: false wherever PH != PW."""
    c, r = x.size(1), ph.size(0)
    torch._check(c % (r * r) == 0)
    return x.new_empty((x.size(0), c // (r * pw.size(0)), x.size(2) * r, x.size(3) * pw.size(0)))
