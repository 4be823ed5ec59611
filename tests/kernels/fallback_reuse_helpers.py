"""Helpers of ``fallback_reuse``'s fake, in a module of their own: what they ask is a helper's question, as torch's
own are."""

from torch.fx.experimental.symbolic_shapes import guard_or_false


def ones_or(n):
    return 1 if guard_or_false(n == 1) else n


def two_at_one(n):
    return 2 if guard_or_false(n == 1) else n


def one_more_elsewhere(n):
    return 1 if guard_or_false(n == 1) else n + 1


def both_ways(n):
    if guard_or_false(n == 1):
        return n
    if guard_or_false(n != 1):
        return n
    return n
