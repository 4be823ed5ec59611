"""SC016: the branch is dead for every N (z3 proves 2 * (N // 2) - 2 >= N false, as in the ceil-mode pooling
size), but torch's value ranges cannot show it, so torch.export installs the guard and rejects a dynamic N."""


def kernel(self, size):
    n = size[0]
    if 2 * (n // 2) - 2 >= n:
        return self.new_empty((n - 1,))
    return self.new_empty(size)
