"""torch.library fakes whose outputs are wrong (tests/unit/test_fake_lines.py): the findings belong at their
return lines. Written here; the ops are ``sc_lines::short`` and ``sc_lines::half``."""

import torch

LIB = torch.library.Library("sc_lines", "DEF")  # noqa: TOR901 - the tests' own namespace
LIB.define("short(Tensor x) -> Tensor")
LIB.define("half(Tensor x) -> Tensor")


@torch.library.register_fake("sc_lines::short", lib=LIB)
def short(x):
    n = x.shape[0]
    return x.new_empty((n,))  # the runtime appends one element: (N + 1,)


@torch.library.register_fake("sc_lines::half", lib=LIB)
def half(x):
    n = x.shape[0]
    return x.new_empty((n,))  # the runtime's output is float16


LIB.define("dot(Tensor a, Tensor b) -> Tensor")


@torch.library.register_fake("sc_lines::dot", lib=LIB)
def dot(a, b):
    return a.new_empty(())  # the runtime refuses a and b of other lengths: no check here (SC021)
