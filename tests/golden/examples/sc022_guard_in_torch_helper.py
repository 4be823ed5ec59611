"""SC022: torch's broadcasting helper, called from the kernel's line, asks whether a size is 1
(``guard_or_false``). Under verify's unbacked sizes it answers False and installs nothing; as torch.export traces
(backed sizes) it installs the guard, and export rejects the Dim range of N. The guard is torch's, the line the
kernel's."""
import torch


def kernel(self, size):
    rows = self.new_empty((size[0] - 1, 1))
    torch.broadcast_shapes(rows.shape, (1, 1))
    return self.new_empty(size)
