"""SC005: a float guard that holds for every N, but z3 cannot take it (0.1 * N rounds) nor points split it."""


def kernel(self, size):
    if (size[0] / 3) * 3 > 0.1 * size[0]:
        return self.new_empty(size)
    return self.new_empty(size)
