"""Fakes for fuzz's reuse of a backed-size run (``trace/reuse.py``). ``rows`` narrows a size without a guard:
``torch._constrain_as_size`` narrows the symbol's value range and installs no guard, so a run at N = 5 says nothing
of N = 10 by its guards alone (there the fake raises). ``scaled`` makes a size by float arithmetic."""

import torch
from torch.library import custom_op


@custom_op("screuse::rows", mutates_args=())
def rows(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@rows.register_fake
def _(x):
    torch._constrain_as_size(x.shape[0], min=0, max=8)
    return x.new_empty(x.shape)


@custom_op("screuse::scaled", mutates_args=())
def scaled(x: torch.Tensor) -> torch.Tensor:
    return x.new_empty(int(x.shape[0] * 0.3 * 10))


@scaled.register_fake
def _(x):
    # float arithmetic on a size: torch folds it to TruncToInt(3.0 * ToFloat(N)), which sympy evaluates to 93 at
    # N = 31 where Python's floats give 92 (hunt 45)
    return x.new_empty(torch.sym_int(torch.sym_float(x.shape[0]) * 0.3 * 10))
