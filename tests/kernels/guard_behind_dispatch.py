"""A kernel whose guard lies in code of its own file that torch's dispatch reaches: the kernel calls a custom
op whose fake (below, in this file) branches on the dynamic size. The replay's shallow runs pause the line
tracer inside torch's calls and do not see the guard's line; the whole runs do (prove/replay.py)."""

import torch

_lib = torch.library.Library("sc_behind_dispatch", "FRAGMENT")
_lib.define("inner(Tensor self, SymInt[] size) -> Tensor")


def inner_fake(self, size):
    if size[0] <= 8:  # the guard, reached through torch's dispatch
        return self.new_empty(size)
    return self.new_empty(size)


torch.library.register_fake("sc_behind_dispatch::inner", inner_fake, lib=_lib)


def kernel(self, size):
    return torch.ops.sc_behind_dispatch.inner(self, size)
