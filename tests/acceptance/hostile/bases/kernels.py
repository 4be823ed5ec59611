"""Meta kernels for the fuzzer's base contracts."""


def rows(x, pad, flag=False):
    n = (x.size(0) + pad - 1) // pad * pad
    return x.new_empty((n, x.size(1)))
