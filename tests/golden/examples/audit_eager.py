"""A custom-op library for ``shapecheck audit --import``'s comparison of the fake with the eager kernel: one op per
rule (SC038-SC044), each with an eager kernel and a fake that disagree in that one way. Every op takes
``(Tensor x, Tensor y)``; ``y`` is not used. Both kernels of each refuse an ``x`` of rank 0 or 1 alike (``_has_dim``:
the audit's 0-d and rank-down variants), so that each op disagrees in its one way only."""

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_true
from torch.library import custom_op


def _op(name, eager, fake):
    """Define ``auditeg::NAME(Tensor x, Tensor y) -> Tensor`` with its eager kernel and its fake."""

    @custom_op(f"auditeg::{name}", mutates_args=())
    def real(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return eager(x, y)

    real.register_fake(fake)
    return real


def eager_shape(x, y):  # SC038: the fake rounds the row length up to a multiple of 4, the kernel does not
    _has_dim(x)
    return x.new_empty((x.shape[0], (x.shape[1] + 3) // 4 * 4))


def eager_dtype(x, y):  # SC039: the kernel returns int32 positions, the fake int64
    _has_dim(x)
    return x.new_empty(x.shape, dtype=torch.int64)


def eager_strides(x, y):  # SC040: the kernel returns a transposed buffer, the fake a contiguous one
    _has_dim(x)
    return x.new_empty(x.shape)


def fake_accepts(x, y):  # SC041: the kernel refuses rows longer than 4, the fake does not check
    _has_dim(x)
    return torch.empty_like(x)


def fake_rejects(x, y):  # SC042: the fake refuses a single row, which the kernel takes
    _has_dim(x)
    torch._check(x.shape[0] != 1, lambda: "fake_rejects: one row is not supported")
    return torch.empty_like(x)


def eager_formula(x, y):  # SC043: export's formula is 2 * rows; the kernel (and the fake at size 1) give 1 row
    _has_dim(x)
    n = x.shape[0]
    return x.new_empty((1 if statically_known_true(n == 1) else 2 * n,))


def _has_dim(x):
    torch._check(x.dim() > 1, lambda: "auditeg: x must have two dimensions or more")


EAGER = {
    "eager_shape": lambda x, y: torch.zeros_like(x),
    "eager_dtype": lambda x, y: torch.zeros(x.shape, dtype=torch.int32),
    "eager_strides": lambda x, y: torch.zeros(tuple(reversed(x.shape)), dtype=x.dtype).permute(*reversed(range(x.dim()))),
    "fake_accepts": lambda x, y: _at_most_4(x),
    "fake_rejects": lambda x, y: torch.zeros_like(x),
    "eager_formula": lambda x, y: torch.zeros((1 if x.shape[0] == 1 else 2 * x.shape[0],), dtype=x.dtype),
}


def _at_most_4(x):
    if x.shape[1] > 4:
        raise RuntimeError("fake_accepts: rows longer than 4 are not supported")
    return torch.zeros_like(x)


def _eager(kernel):
    def checked(x, y):
        _has_dim(x)
        return kernel(x, y)

    return checked


for _name, _kernel in EAGER.items():
    _op(_name, _eager(_kernel), globals()[_name])


# SC044: the kernel returns a view of x (its schema says so, ``Tensor(a) x -> Tensor(a)``), the fake a new tensor.
# custom_op forbids an eager kernel that returns an input's view, so this op is defined on a torch.library.Library.
_LIB = torch.library.Library("auditeg", "FRAGMENT")
_LIB.define("eager_alias(Tensor(a) x, Tensor y) -> Tensor(a)")
_LIB.impl("eager_alias", _eager(lambda x, y: x.view(x.shape)), "CompositeExplicitAutograd")


@torch.library.register_fake("auditeg::eager_alias", lib=_LIB)
def eager_alias(x, y):
    _has_dim(x)
    return torch.empty_like(x)
