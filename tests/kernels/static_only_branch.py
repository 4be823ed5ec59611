"""A kernel with a branch only concrete sizes take (as torch's constant_pad_nd kernel returns early where every
pad is a concrete 0): z3's least counterexample of its wrong output, N = 1, replays down that branch and shows
nothing; N = 2 shows the wrong output (prove/replay.py tries other points of the finding's region)."""

import torch


def kernel(self, size):
    n = size[0]
    if isinstance(n, int) and n == 1:  # a plain int: static sizes only
        return self.new_empty([1])
    return self.new_empty([torch.sym_max(n, 3)])  # wrong below 3
