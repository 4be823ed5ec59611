"""Custom ops whose fake is wrong where the audit once did not look, each with a correct twin:

- ``gather_cols``: its index must be 1-D ("Index is supposed to be a vector") and it picks columns (dim 1) of a
  2-D ``src``; the bad fake returns the index's shape in int64 on every valid call;
- ``nonzero_rows``: a data-dependent count whose bad fake says it is at least 2 (torch.export asserts that range at
  run time, and the eager kernel gives 0 or 1 rows on sparse inputs);
- ``matmul_mixed``: the eager kernel refuses mixed dtypes; the bad fake lacks that check;
- ``modulate``: an adaptive norm's modulation, bf16 activations beside float32 scale and shift; the eager kernel
  promotes to float32, the bad fake keeps x's dtype (comfy-kitchen's adaln, hunt 29);
- ``pad4``: a 4-D-only fake (it refuses the 2-D call the eager kernel takes) whose output is contiguous where the
  eager kernel keeps a channels-last input's layout;
- ``sum_axes``/``permute_axes``: ``SymInt[]`` lists of axes and a permutation (litert-torch's ``tfl::squeeze``,
  ``tfl::transpose``, hunt 31), constants every caller passes: no specialization on them, and a permutation found;
- ``few_args``: a schema of five arguments (two optional positional, one keyword-only) and no eager kernel; the bad
  fake is written with two parameters (xformers' fake of six arguments taking three, hunt 31): every call that
  passes another raises TypeError under FakeTensorMode;
- ``concat``: a list of tensors (cat's ``Tensor[]``, hunt 32): the bad fake makes a contiguous output of the first
  tensor's dtype, where the eager kernel keeps the tensors' channels-last layout and promotes mixed dtypes;
- ``view_as_shape``: the eager kernel views x as ``shape`` (it refuses a non-contiguous x of another shape); the bad
  fake reshapes, which takes any layout (litert-torch's ``tfl::reshape``, hunt 31);
- ``upsample``: a 4-D input resized to ``output_size`` (the search gives it ones); the bad fake's output is
  contiguous where the eager kernel keeps a channels-last input's layout, which only an output past 1 x 1 shows
  (upsample_nearest2d's, hunt 32);
- ``qmm``: a quantized matmul that takes an int8 weight beside float activations (optimum-quanto's qbytes_mm, hunt
  31) and accumulates int8 by int8 in int32; one bad fake gives an int8 weight's product int8, the other two int8
  inputs' (it keeps a's dtype): no float dtype shows either;
- ``cast``: a keyword-only ``dtype`` that defaults to None, and no eager kernel; the bad fake demands it
  (executorch's ``embedding_2bit.dtype`` fakes, hunt 36): every call that leaves it out raises TypeError under
  FakeTensorMode, and the search gives it to reach the shape logic;
- ``pack``: an int ``bits`` whose value 5 takes a branch of its own in the eager kernel (a 5-bit format keeps one
  column; modelopt's ``num_bits == 8 and exponent_bits == 4``, hunt 36); the bad fake lacks that branch, which only
  the value the kernels compare ``bits`` with reaches;
- ``rows_mm``: a matmul whose int8 path demands as many rows in b as in a (optimum-quanto's int8 ``qbytes_mm``,
  hunt 40); the bad fake lacks the check, which only a point with every dim apart shows in a variant compared at a
  few points (at the example's sizes, all 3, the rows agree);
- ``magic_only``: the eager kernel refuses every input but one of 4097 elements, which no search finds: never a
  pass; ``magic_guarded`` too, with a fake that branches on a size (a finding a baseline may accept: still never a
  pass, hunt 40's deepspeed ``all_to_all``, whose eager kernel ran past its time limit);
- ``dies_on_int8``: an eager kernel that kills its process on an int8 input (amd-quark, hunt 41): the int8 variant
  is not compared, and a note says so;
- ``routed_rows``: rows routed by integer offsets; made up as zeros they route none, so the eager kernel returns on
  a 3-D x the fake refuses, and raises with other offsets: the finding says so (transformers, hunt 41);
- ``named_mode``: a str argument compared with "zeta" only in a callee, past the kernel's first 8 words: tried by
  its name (amd-quark, hunt 41);
- ``table_rows``: an eager kernel that takes integer data of zeros alone: a clean comparison says so.
"""

import torch
from torch.library import custom_op


@custom_op("reach::gather_cols_bad", mutates_args=())
def gather_cols_bad(src: torch.Tensor, picks: torch.Tensor) -> torch.Tensor:
    torch._check(src.dim() == 2, lambda: "src must be a matrix")
    return torch.index_select(src, 1, picks)


@gather_cols_bad.register_fake
def _(src, picks):
    return torch.empty(picks.shape, dtype=torch.int64)  # neither the shape nor the dtype of the columns


@custom_op("reach::gather_cols_ok", mutates_args=())
def gather_cols_ok(src: torch.Tensor, picks: torch.Tensor) -> torch.Tensor:
    torch._check(src.dim() == 2, lambda: "src must be a matrix")
    return torch.index_select(src, 1, picks)


@gather_cols_ok.register_fake
def _(src, picks):
    torch._check(src.dim() == 2 and picks.dim() == 1)
    return src.new_empty((src.shape[0], picks.shape[0]))


@custom_op("reach::nonzero_rows_bad", mutates_args=())
def nonzero_rows_bad(x: torch.Tensor) -> torch.Tensor:
    return torch.nonzero(x.reshape(-1) > 0.5).reshape(-1)


@nonzero_rows_bad.register_fake
def _(x):
    n = torch.library.get_ctx().new_dynamic_size(min=2)
    return x.new_empty((n,), dtype=torch.int64)


@custom_op("reach::nonzero_rows_ok", mutates_args=())
def nonzero_rows_ok(x: torch.Tensor) -> torch.Tensor:
    return torch.nonzero(x.reshape(-1) > 0.5).reshape(-1)


@nonzero_rows_ok.register_fake
def _(x):
    n = torch.library.get_ctx().new_dynamic_size()
    return x.new_empty((n,), dtype=torch.int64)


@custom_op("reach::matmul_mixed_bad", mutates_args=())
def matmul_mixed_bad(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    torch._check(a.dtype == b.dtype, lambda: f"a and b must have one dtype, got {a.dtype} and {b.dtype}")
    return torch.mm(a, b)


@matmul_mixed_bad.register_fake
def _(a, b):
    torch._check(a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[0])
    return a.new_empty((a.shape[0], b.shape[1]))


@custom_op("reach::matmul_mixed_ok", mutates_args=())
def matmul_mixed_ok(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    torch._check(a.dtype == b.dtype, lambda: f"a and b must have one dtype, got {a.dtype} and {b.dtype}")
    return torch.mm(a, b)


@matmul_mixed_ok.register_fake
def _(a, b):
    torch._check(a.dtype == b.dtype, lambda: f"a and b must have one dtype, got {a.dtype} and {b.dtype}")
    torch._check(a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[0])
    return a.new_empty((a.shape[0], b.shape[1]))


def _modulate_shapes(x, scale, shift):
    torch._check(x.shape == scale.shape and x.shape == shift.shape, lambda: "x, scale and shift must have one shape")


def _backend(*tensors):  # as comfy-kitchen's registry: no kernel for float64, so the float64 variant is not compared
    if any(t.dtype == torch.float64 for t in tensors):
        raise NotImplementedError("No backend can handle modulate: dtype torch.float64 not in {bfloat16, float16, "
                                  "float32}")


def _modulate(x, scale, shift):
    _modulate_shapes(x, scale, shift)
    _backend(x, scale, shift)
    return x * (1 + scale) + shift


def _bad_modulate_fake(x, scale, shift):
    _modulate_shapes(x, scale, shift)
    return torch.empty_like(x)  # x's dtype, where the eager kernel promotes


def _modulate_fake(x, scale, shift):
    _modulate_shapes(x, scale, shift)
    return x * (1 + scale) + shift


def _modulate_op(name, fake):
    def kernel(x: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
        return _modulate(x, scale, shift)

    op = custom_op(f"reach::{name}", kernel, mutates_args=())
    op.register_fake(fake)
    return op


modulate_bad = _modulate_op("modulate_bad", _bad_modulate_fake)
modulate_ok = _modulate_op("modulate_ok", _modulate_fake)


def _dropped(x, squeeze_dims):  # x without the listed axes (the fake and the eager kernel alike)
    axes = [d % x.dim() for d in squeeze_dims]
    return [s for i, s in enumerate(x.shape) if i not in axes]


@custom_op("reach::sum_axes", mutates_args=())
def sum_axes(x: torch.Tensor, squeeze_dims: list[int]) -> torch.Tensor:
    return x.new_zeros(_dropped(x, squeeze_dims))


@sum_axes.register_fake
def _(x, squeeze_dims):
    return x.new_empty(_dropped(x, squeeze_dims))


def _permuted(x, perm):
    torch._check(sorted(perm) == list(range(x.dim())), lambda: "perm must permute the dims of x")
    return [x.shape[p] for p in perm]


@custom_op("reach::permute_axes", mutates_args=())
def permute_axes(x: torch.Tensor, perm: list[int]) -> torch.Tensor:
    return x.new_zeros(_permuted(x, perm))


@permute_axes.register_fake
def _(x, perm):
    return x.new_empty(_permuted(x, perm))


def _packed(x, bits):
    return x.new_empty((x.shape[0], 1) if bits == 5 else x.shape)


@custom_op("reach::pack_bad", mutates_args=())
def pack_bad(x: torch.Tensor, bits: int) -> torch.Tensor:
    return torch.zeros(_packed(x, bits).shape, dtype=x.dtype)


@pack_bad.register_fake
def _(x, bits):
    return x.new_empty(x.shape)


@custom_op("reach::pack_ok", mutates_args=())
def pack_ok(x: torch.Tensor, bits: int) -> torch.Tensor:
    return torch.zeros(_packed(x, bits).shape, dtype=x.dtype)


@pack_ok.register_fake
def _(x, bits):
    return _packed(x, bits)


def _magic(x):
    torch._check(x.numel() == 4097, lambda: "this kernel takes one input size only")
    return x.clone()


def _rows_mm(a, b):
    torch._check(a.dim() == 2 and b.dim() == 2, lambda: "rows_mm takes matrices")
    if a.dtype == torch.int8:
        torch._check(a.shape[0] == b.shape[0], lambda: "the int8 path takes as many rows in b as in a")
        return torch.zeros(a.shape[0], b.shape[0], dtype=torch.int32)
    return a @ b.t()


@custom_op("reach::rows_mm_bad", mutates_args=())
def rows_mm_bad(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _rows_mm(a, b)


@rows_mm_bad.register_fake
def _(a, b):
    torch._check(a.dim() == 2 and b.dim() == 2, lambda: "rows_mm takes matrices")
    torch._check(a.shape[1] == b.shape[1])
    return a.new_empty((a.shape[0], b.shape[0]), dtype=torch.int32 if a.dtype == torch.int8 else a.dtype)


@custom_op("reach::magic_only", mutates_args=())
def magic_only(x: torch.Tensor) -> torch.Tensor:
    return _magic(x)


@magic_only.register_fake
def _(x):
    return torch.empty_like(x)


@custom_op("reach::magic_guarded", mutates_args=())
def magic_guarded(x: torch.Tensor) -> torch.Tensor:
    return _magic(x)


@magic_guarded.register_fake
def _(x):
    if x.shape[0] == 5:
        return x.new_empty(x.shape)
    return torch.empty_like(x)


@custom_op("reach::pad4_bad", mutates_args=())
def pad4_bad(x: torch.Tensor) -> torch.Tensor:
    return torch.constant_pad_nd(x, [1, 1, 1, 1], 0.0)  # keeps a channels-last input's memory format


@pad4_bad.register_fake
def _(x):
    n, c, h, w = x.shape  # 4-D only: refuses the 2-D call the eager kernel takes (its own finding)
    return x.new_empty((n, c, h + 2, w + 2))  # contiguous whatever the input's layout


@custom_op("reach::pad4_ok", mutates_args=())
def pad4_ok(x: torch.Tensor) -> torch.Tensor:
    return torch.constant_pad_nd(x, [1, 1, 1, 1], 0.0)


@pad4_ok.register_fake
def _(x):
    n, c, h, w = x.shape
    fmt = torch._prims_common.suggest_memory_format(x)
    return torch.empty((n, c, h + 2, w + 2), dtype=x.dtype, memory_format=fmt)


_LIB = torch.library.Library("reach", "FRAGMENT")
_FEW = "(Tensor q, Tensor k, Tensor? bias=None, float p=0.0, *, float? scale=None) -> Tensor"
_LIB.define("few_args_bad" + _FEW)
_LIB.define("few_args_ok" + _FEW)


@torch.library.register_fake("reach::few_args_bad", lib=_LIB)
def few_args_bad(q, k):
    return torch.empty_like(q)


@torch.library.register_fake("reach::few_args_ok", lib=_LIB)
def few_args_ok(q, k, bias=None, p=0.0, *, scale=None):
    return torch.empty_like(q)


_LIB.define("cast_bad(Tensor x, *, ScalarType? dtype=None) -> Tensor")
_LIB.define("cast_ok(Tensor x, *, ScalarType? dtype=None) -> Tensor")


@torch.library.register_fake("reach::cast_bad", lib=_LIB)
def cast_bad(x, *, dtype):
    return torch.empty_like(x, dtype=dtype)


@torch.library.register_fake("reach::cast_ok", lib=_LIB)
def cast_ok(x, *, dtype=None):
    return torch.empty_like(x, dtype=dtype)


@custom_op("reach::concat_bad", mutates_args=())
def concat_bad(xs: list[torch.Tensor], dim: int) -> torch.Tensor:
    return torch.cat(xs, dim)


@concat_bad.register_fake
def _(xs, dim):
    shape = list(xs[0].shape)
    shape[dim] = sum(x.shape[dim] for x in xs)
    return torch.empty(shape, dtype=xs[0].dtype)  # contiguous, and no type promotion


@custom_op("reach::concat_ok", mutates_args=())
def concat_ok(xs: list[torch.Tensor], dim: int) -> torch.Tensor:
    return torch.cat(xs, dim)


@concat_ok.register_fake
def _(xs, dim):
    return torch.cat(xs, dim)


@custom_op("reach::view_as_shape_bad", mutates_args=())
def view_as_shape_bad(x: torch.Tensor, shape: list[int]) -> torch.Tensor:
    return x.view(shape).clone()


@view_as_shape_bad.register_fake
def _(x, shape):
    return x.reshape(shape).clone()


@custom_op("reach::view_as_shape_ok", mutates_args=())
def view_as_shape_ok(x: torch.Tensor, shape: list[int]) -> torch.Tensor:
    return x.view(shape).clone()


@view_as_shape_ok.register_fake
def _(x, shape):
    return x.view(shape).clone()


@custom_op("reach::upsample_bad", mutates_args=())
def upsample_bad(x: torch.Tensor, output_size: list[int]) -> torch.Tensor:
    return torch.ops.aten.upsample_nearest2d.default(x, output_size)


@upsample_bad.register_fake
def _(x, output_size):
    n, c, _, _ = x.shape
    return x.new_empty((n, c, output_size[0], output_size[1]))


@custom_op("reach::upsample_ok", mutates_args=())
def upsample_ok(x: torch.Tensor, output_size: list[int]) -> torch.Tensor:
    return torch.ops.aten.upsample_nearest2d.default(x, output_size)


@upsample_ok.register_fake
def _(x, output_size):
    return torch.ops.aten.upsample_nearest2d.default(x, output_size)


def _qmm(a, b):
    if a.dtype == torch.int8 and b.dtype == torch.int8:
        return torch.mm(a.to(torch.int32), b.to(torch.int32))
    torch._check(b.dtype in (torch.int8, a.dtype), lambda: "b must be int8 or of a's dtype")
    return torch.mm(a, b.to(a.dtype))


@custom_op("reach::qmm_bad", mutates_args=())
def qmm_bad(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _qmm(a, b)


@qmm_bad.register_fake
def _(a, b):  # int8 by int8 right; an int8 b beside float a gives int8
    if a.dtype == torch.int8 and b.dtype == torch.int8:
        return torch.empty((a.shape[0], b.shape[1]), dtype=torch.int32)
    torch._check(b.dtype in (torch.int8, a.dtype), lambda: "b must be int8 or of a's dtype")
    return torch.empty((a.shape[0], b.shape[1]), dtype=b.dtype)


@custom_op("reach::qmm8_bad", mutates_args=())
def qmm8_bad(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _qmm(a, b)


@qmm8_bad.register_fake
def _(a, b):  # an int8 b beside float a right; int8 by int8 gives int8
    torch._check(b.dtype in (torch.int8, a.dtype), lambda: "b must be int8 or of a's dtype")
    return torch.mm(a, b.to(a.dtype))


@custom_op("reach::qmm_ok", mutates_args=())
def qmm_ok(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _qmm(a, b)


@qmm_ok.register_fake
def _(a, b):
    if a.dtype == torch.int8 and b.dtype == torch.int8:
        return torch.mm(a.to(torch.int32), b.to(torch.int32))
    torch._check(b.dtype in (torch.int8, a.dtype), lambda: "b must be int8 or of a's dtype")
    return torch.mm(a, b.to(a.dtype))


@custom_op("reach::dies_on_int8", mutates_args=())
def dies_on_int8(x: torch.Tensor) -> torch.Tensor:
    """An eager kernel that kills its process on int8 (amd-quark's ``fake_quantize_to_low_precision_fp``
    corrupts the heap there, hunt 41)."""
    if x.dtype == torch.int8:
        import os

        os.abort()
    return x * 2


@dies_on_int8.register_fake
def _(x):
    return torch.empty_like(x)


@custom_op("reach::routed_rows", mutates_args=())
def routed_rows(x: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    """Rows routed by ``offs`` (transformers' grouped_mm, hunt 41): offsets of zeros route none, so the matrix
    product that refuses a 3-D x never runs."""
    if offs.is_floating_point() or offs.dim() != 1:
        raise ValueError("offs must be a vector of integers")
    n = int(offs.sum())
    if n:
        torch.mm(x[:n], x[:n].T)
    return x.sum(-1)


@routed_rows.register_fake
def _(x, offs):
    torch._check(not offs.is_floating_point() and offs.dim() == 1, lambda: "offs must be a vector of integers")
    torch._check(x.dim() == 2, lambda: "x must be 2D")
    return x.sum(-1)


def _zeta_only(x, mode):  # two calls deep, past the kernel's first 8 words
    if mode != "zeta":
        raise ValueError("unsupported mode")
    return x * 2


@custom_op("reach::named_mode", mutates_args=())
def named_mode(x: torch.Tensor, mode: str) -> torch.Tensor:
    """Its str argument is compared with "zeta" in a callee (amd-quark's ``quant_dtype == "mx"``, hunt 41)."""
    return _zeta_only(x, mode)


@named_mode.register_fake
def _(x, mode):
    labels = ("alpha", "beta", "gamma", "delta", "epsilon", "eta", "theta", "iota", "kappa")  # noqa: F841 - words
    return _zeta_only(torch.empty_like(x), mode)


@custom_op("reach::table_rows", mutates_args=())
def table_rows(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """Rows of a one-row table picked by ``idx``: only indices of 0 are valid, so made-up zeros are the one data it
    takes (transformers' grouped_mm_fallback_backward, whose offsets of zeros route nothing, hunt 41)."""
    if idx.is_floating_point() or idx.dim() != 1:
        raise ValueError("idx must be a vector of integers")
    return x.new_zeros((1, x.shape[1]))[idx]


@table_rows.register_fake
def _(x, idx):
    torch._check(not idx.is_floating_point() and idx.dim() == 1, lambda: "idx must be a vector of integers")
    return x.new_empty((idx.shape[0], x.shape[1]))
