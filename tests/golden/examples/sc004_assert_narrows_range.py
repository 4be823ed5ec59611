"""SC004: a runtime assert narrows N from [1, 2**31-1] to [1, 4096]."""
import torch


def kernel(self, size):
    torch._check(size[0] <= 4096)
    return self.new_empty(size)
