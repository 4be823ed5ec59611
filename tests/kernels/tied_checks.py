"""Meta kernels of aten::bmm whose torch._check reads a dim the domain ties to another (A2 == B1): torch.export
gives both one Dim, so the check narrows that Dim's range like any other."""

import torch


def checks_the_shared_size(self, mat2):
    torch._check(self.size(2) <= 1024)
    return self.new_empty((self.size(0), self.size(1), mat2.size(2)))


def checks_the_tie(self, mat2):
    torch._check(self.size(2) == mat2.size(1))
    return self.new_empty((self.size(0), self.size(1), mat2.size(2)))
