"""Fake kernels for docs/examples/nvfp4_quantize.toml: an NVFP4 quantiser (two float4 values per byte, one
float8_e4m3fn scale per 16 values, the scales padded to 128 x 4 tiles as the swizzled layout needs)."""

import torch


def _round_up(x, n):
    return (x + n - 1) // n * n


def quantize(x):
    m, k = x.shape
    packed = x.new_empty((m, k // 2), dtype=torch.float4_e2m1fn_x2)
    scales = x.new_empty((_round_up(m, 128), _round_up(k // 16, 4)), dtype=torch.float8_e4m3fn)
    return packed, scales


def quantize_uint8(x):  # SC017: the packed values as bytes, not float4_e2m1fn_x2
    m, k = x.shape
    packed = x.new_empty((m, k // 2), dtype=torch.uint8)
    scales = x.new_empty((_round_up(m, 128), _round_up(k // 16, 4)), dtype=torch.float8_e4m3fn)
    return packed, scales


def quantize_unpadded(x):  # SC002: the scales without the padding to 128 x 4 tiles
    m, k = x.shape
    packed = x.new_empty((m, k // 2), dtype=torch.float4_e2m1fn_x2)
    return packed, x.new_empty((m, k // 16), dtype=torch.float8_e4m3fn)
