"""SC005: a float guard that holds for every N, but z3 cannot take it and no two points tell its sides apart."""


def kernel(self, size):
    if (size[0] / 3) * 3 > 0.5 * size[0]:
        return self.new_empty(size)
    return self.new_empty(size)
