"""An op whose only kernel is a Python CompositeImplicitAutograd function registered through a torch.library.Library
(as torchao registers its quantization ops): torch keeps no Python handle on it, and the audit called it "C++"
with no line. It branches on its first dim against 8."""

import torch

lib = torch.library.Library("ciapy", "DEF")  # noqa: TOR901 - a library of the test's own
lib.define("rows(Tensor x) -> Tensor")


def rows(x):
    if x.shape[0] <= 8:
        return x * 2
    return x * 3


lib.impl("rows", rows, "CompositeImplicitAutograd")
