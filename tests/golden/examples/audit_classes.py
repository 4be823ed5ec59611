"""A custom-op library for ``shapecheck audit --import``: one op per audit class, each with a fake kernel
written for it. ``auditex::relation`` demands equal inner sizes (a relation, not a finding); every other op's
kernel has one finding of its class."""

import torch
from torch.library import custom_op


def _op(name, fake):
    """Define ``auditex::NAME(Tensor x, Tensor y) -> Tensor`` with the fake kernel ``fake``."""

    @custom_op(f"auditex::{name}", mutates_args=())
    def real(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return fake(x, y).zero_()

    real.register_fake(fake)
    return real


def relation(x, y):
    if x.shape[1] != y.shape[0]:  # the op rejects unequal inner sizes: an inferred requires
        raise RuntimeError("inner sizes differ")
    return x.new_empty((x.shape[0], y.shape[1]))


def constant_comparison(x, y):
    if x.shape[0] <= 8:  # the seed's L <= 8: a runtime choice copied into shape inference
        return x.new_empty(x.shape)
    return x.new_empty(x.shape)


def zero_one(x, y):
    if x.shape[0] == 1:
        return x.new_empty((1, x.shape[1]))
    return x.new_empty(x.shape)


def specialization(x, y):
    n = int(x.shape[0])  # the size's concrete value
    return x.new_empty((n, x.shape[1]))


def modulo(x, y):
    if x.shape[0] % 8 == 0:  # an alignment test
        return x.new_empty(x.shape)
    return x.new_empty(x.shape)


def data_dependent(x, y):
    n = torch.nonzero(x).shape[0]  # a size made from the tensor's data
    if n > 2:
        return x.new_empty(x.shape)
    return x.new_empty(x.shape)


def undischargeable(x, y):
    a = x.shape[0]
    if 2 * (a // 2) - 2 < a:  # true for every size, which torch's own reasoning cannot tell
        return x.new_empty(x.shape)
    return x.new_empty((0,))


def kernel_error(x, y):
    cache = {x.shape[1]: "seen"}  # a size as a dict key: a SymInt is not hashable
    return x.new_empty((x.shape[0], len(cache)))


def dim_branch(x, y):
    if x.shape[0] <= y.shape[0]:  # both sides are inputs the op accepts
        return x.new_empty(x.shape)
    return y.new_empty(y.shape)


for _name, _fake in list(globals().items()):
    if callable(_fake) and not _name.startswith("_") and _fake.__module__ == __name__:
        _op(_name, _fake)
