"""Hunt 65's kernels: a value specialisation of a static dim (``dynamic = false``), explored per value."""

import torch


def int_of_rows(x):  # specialises N: right at every N
    n = int(x.size(0))
    return x.new_empty(((n + 15) // 16 * 16, x.size(1)))


def int_of_rows_wrong(x):  # specialises N, wrong at N == 3
    n = int(x.size(0))
    return x.new_empty((7 if n == 3 else (n + 15) // 16 * 16, x.size(1)))


def branch_on_rows(x):  # the same defect as a guard on N
    if x.size(0) == 3:
        return x.new_empty((7, x.size(1)))
    return x.new_empty(((x.size(0) + 15) // 16 * 16, x.size(1)))


__all__ = ["torch"]


def minus3(x):  # wrong for every N >= 3, raises below (a negative size)
    return x.new_empty((x.size(0) - 3, x.size(1)))
