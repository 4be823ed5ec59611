"""The compatibility layer, part of ``kernels``: which dispatch key holds an op's eager (non-meta) kernel for a
device, read off torch's dispatch table (``torch._C._dispatch_has_kernel_for_dispatch_key``, ``_dispatch_dump``)."""

from __future__ import annotations

import os
from typing import Any

import torch

from .core import TORCH_DIR
from .kernels import python_registered

#: the dispatch key of each device's own kernels (the eager kernel's, below)
_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA"}


def eager_kernel_key(op: Any, device: str) -> str | None:
    """The dispatch key under which ``op`` has a real (non-meta) kernel for ``device``: the device's own key, or
    a composite kernel that runs on every device; None when it has none."""
    name = op.name()
    keys = (_DEVICE_KEYS.get(device, device.upper()), "CompositeExplicitAutograd",
            "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutograd")
    found = next((k for k in keys if torch._C._dispatch_has_kernel_for_dispatch_key(name, k)), None)
    if found is None and _python_autograd_kernel(name, device):
        return "Autograd"
    return found


def _python_autograd_kernel(name: str, device: str) -> bool:
    """Whether the op's autograd key holds a Python function (``Library.impl(name, fn, "Autograd")``: torch.ao's
    ``fake_quant_per_channel`` runs its ``autograd.Function`` there): it runs on tensors of every device with no
    backend kernel below it, unlike aten's C++ autograd kernels and torch.library.custom_op's (registered from
    torch/_library), which redispatch to the backend's."""
    own, machinery = f"Autograd{_DEVICE_KEYS.get(device, device.upper())}", os.path.join(TORCH_DIR, "_library")
    for line in torch._C._dispatch_dump(name).splitlines():
        key, _, rest = line.partition(": registered at ")
        if key.strip() in ("Autograd[alias]", own) and python_registered(line) and not rest.startswith(machinery):
            return True
    return False
