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


# baddbmm with ``self`` broadcast over the batch, as torch's meta kernel does it, and a mutant's own branch on N:
# at an example whose batch is 1, fuzz leaves expand's guard B == 1 aside and judges the others under it; one it
# does not imply, as N <= 4, is still the kernel's branch
torch.library.define("schunt63::baddbmm_branchy", "(Tensor self, Tensor batch1, Tensor batch2) -> Tensor")


@torch.library.impl("schunt63::baddbmm_branchy", "CPU")
def baddbmm_branchy_cpu(self, batch1, batch2):
    return torch.baddbmm(self, batch1, batch2)


@torch.library.register_fake("schunt63::baddbmm_branchy")
def baddbmm_branchy_fake(self, batch1, batch2):
    b, n, _ = batch1.shape
    p = batch2.shape[2]
    torch._check(batch2.shape[0] == b, lambda: "Expected size for first two dimensions of batch2 tensor to be")
    self.expand(b, n, p)
    if n <= 4:  # the mutant's own branch on a dynamic dim
        return batch1.new_empty((1, n, p))
    return batch1.new_empty((b, n, p))
