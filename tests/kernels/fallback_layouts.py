"""A guard_or_false on a stride that decides the output's layout (hunt 30), checked against
``fallback_layouts.toml`` (aten::upsample_nearest2d, 2x, the input contiguous or channels_last, the output in the
input's format as the eager kernel makes it).

A contiguous input with H == W == 1 has ``stride(1) == 1`` too: ``unit_stride_or_false`` returns channels_last
there, where the eager kernel's output is contiguous. The unbacked trace takes guard_or_false's fallback (False)
and never sees it; FakeTensorMode on concrete sizes does. ``unit_stride_known_true`` is the same branch through
``statically_known_true``. The installed torch's kernel passes the contract."""

from torch.fx.experimental.symbolic_shapes import guard_or_false, statically_known_true


def unit_stride_or_false(x, output_size, scales_h=None, scales_w=None):
    n, c = x.shape[0], x.shape[1]
    h, w = output_size
    if guard_or_false(x.stride(1) == 1):
        return x.new_empty((n, h, w, c)).permute(0, 3, 1, 2)
    return x.new_empty((n, c, h, w))


def unit_stride_known_true(x, output_size, scales_h=None, scales_w=None):
    n, c = x.shape[0], x.shape[1]
    h, w = output_size
    if statically_known_true(x.stride(1) == 1):
        return x.new_empty((n, h, w, c)).permute(0, 3, 1, 2)
    return x.new_empty((n, c, h, w))

