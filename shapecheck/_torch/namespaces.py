"""The compatibility layer, part 6: the installed torch module a ``--meta-source`` candidate is defined in (its
globals: the names the file's function reads), chosen by how the file registers it and which torch file it
stands for."""

from __future__ import annotations

import os
import sys
from typing import Any

from .core import TORCH_DIR


def meta_registration_namespace(file: str | None = None, registration: str = "register_meta") -> dict[str, Any]:
    """A copy of the installed module's globals that a candidate of ``file`` is defined in: for a
    ``register_decomposition``, the torch module whose path ``file`` ends with (``_decomp/decompositions.py``,
    ``_refs/__init__.py``, ``_refs/nn/functional/__init__.py``), else ``torch._decomp.decompositions``; for the
    rest, ``torch._meta_registrations``."""
    import torch._meta_registrations as mr

    if registration != "register_decomposition":
        return dict(vars(mr))
    import torch._decomp.decompositions as dd
    import torch._refs  # noqa: F401 - its modules are the other homes of decompositions
    import torch._refs.nn.functional  # noqa: F401

    parts = os.path.normpath(os.path.abspath(file or "")).split(os.sep)
    best, module = 0, dd
    for name, mod in list(sys.modules.items()):
        path = getattr(mod, "__file__", None)
        if not name.startswith("torch._") or not isinstance(path, str):
            continue
        mine = os.path.relpath(path, TORCH_DIR).split(os.sep)
        n = len(mine)
        if n > best and parts[-n:] == mine:
            best, module = n, mod
    return dict(vars(module))
