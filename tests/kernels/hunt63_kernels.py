"""Hunt 63's misreading of verify, rebuilt as a custom op: a fake that returns a tensor of negative size where the
runtime raises (a mutant of torch's ``unfold`` without its size check: shapecheck's own run of it crashed with
exit 4)."""

import torch

torch.library.define("schunt63::windows", "(Tensor x) -> Tensor")


@torch.library.impl("schunt63::windows", "CPU")
def windows_cpu(x):
    torch._check(x.shape[0] >= 2, lambda: "maximum size for tensor at dimension 0 is less than the window")
    return x.unfold(0, 2, 1)


@torch.library.register_fake("schunt63::windows")
def windows_fake(x):
    a, b = x.shape
    return x.as_strided((a - 1, b, 2), (b, 1, b))  # no check: at A = 0, B = 0 a tensor of size [-1, 0, 2]
