"""Fakes that demand a relation between two dims (``torch._check(y_0 == x_0)``) and branch on one of them against a
constant: strict torch.export with one Dim for both refuses the branch ("Constraints violated"). A side of the
branch with only the guard's dim moved breaks the relation, so the op refuses both such sides; the audit must still
report the branch. ``check_only`` demands the relation and does not branch: a relation, no finding."""

import torch


def _op(name, fake):
    torch.library.define(f"relbr::{name}", "(Tensor x, Tensor y) -> Tensor")
    torch.library.register_fake(f"relbr::{name}")(fake)
    torch.library.register_kernel(f"relbr::{name}", "cpu")(lambda x, y: torch.empty_like(x))


def check_then_branch(x, y):
    torch._check(y.shape[0] == x.shape[0])
    if y.shape[0] <= 8:
        return torch.empty_like(x)
    return torch.empty_like(x)


def branch_then_check(x, y):
    if x.shape[0] <= 8:
        torch._check(y.shape[0] == x.shape[0])
        return torch.empty_like(x)
    torch._check(y.shape[0] == x.shape[0])
    return torch.empty_like(x)


def check_only(x, y):
    torch._check(y.shape[0] == x.shape[0])
    return torch.empty_like(x)


_op("check_then_branch", check_then_branch)
_op("branch_then_check", branch_then_check)
_op("check_only", check_only)
