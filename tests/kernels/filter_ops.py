"""Custom ops whose output size only the data decides (a filter that keeps the positive rows), registered with
torch.library as their authors write them; verified through the dispatcher with ``--import``. The runtime
keeps 0 to N rows. Contracts: ``filter_ops.toml``, ``filter_ops_fixed.toml`` and ``filter_ops_short.toml``."""

import torch


@torch.library.custom_op("sc_filter::keep_positive", mutates_args=())
def keep_positive(x: torch.Tensor) -> torch.Tensor:
    return x[x[:, 0] > 0]


@keep_positive.register_fake
def _(x):
    # the deprecated API: its size has a minimum of 2, so an exported program fails when 0 or 1 rows remain
    n = torch.library.get_ctx().create_unbacked_symint()
    return x.new_empty((n, x.shape[1]))


@torch.library.custom_op("sc_filter::keep_positive_fixed", mutates_args=())
def keep_positive_fixed(x: torch.Tensor) -> torch.Tensor:
    return x[x[:, 0] > 0]


@keep_positive_fixed.register_fake
def _(x):
    n = torch.library.get_ctx().new_dynamic_size()
    torch._check(n <= x.shape[0])
    return x.new_empty((n, x.shape[1]))


@torch.library.custom_op("sc_filter::keep_positive_short", mutates_args=())
def keep_positive_short(x: torch.Tensor) -> torch.Tensor:
    return x[x[:, 0] > 0]


@keep_positive_short.register_fake
def _(x):
    # one row short: when every row is kept (n = N) the exported program's assert fails
    n = torch.library.get_ctx().new_dynamic_size()
    torch._check(n < x.shape[0])
    return x.new_empty((n, x.shape[1]))


@torch.library.custom_op("sc_filter::keep_positive_empty", mutates_args=())
def keep_positive_empty(x: torch.Tensor) -> torch.Tensor:
    return x[x[:, 0] > 0]


@keep_positive_empty.register_fake
def _(x):
    # no rows, none kept: a size of 0 where the runtime's range [0, N] is that one value (nonzero's fake does this)
    from torch.fx.experimental.symbolic_shapes import guard_or_false

    if guard_or_false(x.shape[0] == 0):
        return x.new_empty((0, x.shape[1]))
    n = torch.library.get_ctx().new_dynamic_size()
    torch._check(n <= x.shape[0])
    return x.new_empty((n, x.shape[1]))


@torch.library.custom_op("sc_filter::keep_positive_one_row", mutates_args=())
def keep_positive_one_row(x: torch.Tensor) -> torch.Tensor:
    return x[x[:, 0] > 0]


@keep_positive_one_row.register_fake
def _(x):
    # wrong: one row may be kept or not, and the fake says none is
    from torch.fx.experimental.symbolic_shapes import guard_or_false

    if guard_or_false(x.shape[0] <= 1):
        return x.new_empty((0, x.shape[1]))
    n = torch.library.get_ctx().new_dynamic_size()
    torch._check(n <= x.shape[0])
    return x.new_empty((n, x.shape[1]))
