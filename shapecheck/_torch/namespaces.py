"""The compatibility layer, part 6: the installed torch module a ``--meta-source`` candidate is defined in (its
globals: the names the file's function reads), chosen by how the file registers it and which torch file it
stands for."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

from .core import TORCH_DIR


def meta_registration_namespace(file: str | None = None, registration: str = "register_meta") -> dict[str, Any]:
    """A copy of the installed module's globals that a candidate of ``file`` is defined in (``installed_module``)."""
    return dict(vars(installed_module(file, registration)))


def installed_module(file: str | None = None, registration: str = "register_meta") -> Any:
    """The installed torch module a candidate of ``file`` stands for: for a ``register_decomposition`` (or a
    function only ``py_impl`` registers: decompositions.py's ``matmul``, _refs' ``broadcast_tensors``), the torch
    module whose path ``file`` ends with (``_decomp/decompositions.py``, ``_refs/__init__.py``,
    ``_refs/nn/functional/__init__.py``), else the one whose functions it defines (``_by_content``), else
    ``torch._decomp.decompositions``; for a FakeTensor rule (``register_op_impl``), the torch module its path names
    (``_refs/__init__.py`` holds native_layer_norm's), else ``torch._subclasses.fake_impls``; for the rest,
    ``torch._meta_registrations``."""
    import torch._meta_registrations as mr

    rule = registration == "register_op_impl"
    if registration not in ("register_decomposition", "py_impl") and not rule:
        return mr
    import torch._decomp.decompositions as dd
    import torch._refs  # noqa: F401 - its modules are the other homes of decompositions
    import torch._refs.nn.functional  # noqa: F401
    import torch._subclasses.fake_impls as fi

    parts = os.path.normpath(os.path.abspath(file or "")).split(os.sep)
    best, module = 0, fi if rule else dd
    for name, mod in list(sys.modules.items()):
        path = getattr(mod, "__file__", None)
        if not name.startswith("torch._") or not isinstance(path, str):
            continue
        mine = os.path.relpath(path, TORCH_DIR).split(os.sep)
        n = len(mine)
        if n > best and parts[-n:] == mine:
            best, module = n, mod
    return module if best or rule else _by_content(file) or module


def _by_content(file: str | None) -> Any:
    """For a file whose path names no torch module (a copy saved as ``refs_copy.py``): the installed module of
    decompositions whose own functions the file defines most of by name (None where it defines none of them)."""
    import ast

    try:
        with open(file or "", encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    best, module = 0, None
    for name, mod in list(sys.modules.items()):
        if not (name.startswith("torch._refs") or name.startswith("torch._decomp")):
            continue
        own = sum(1 for n in names if getattr(getattr(mod, n, None), "__module__", None) == name)
        if own > best:
            best, module = own, mod
    return module


def reads_global(fn: Any, module: Any, name: str) -> bool:
    """Whether torch's function ``fn`` (a kernel torch resolved: a FakeTensor rule, a decomposition; or a
    function of its ``__wrapped__`` chain) is defined in ``module`` and reads its global ``name``:
    ``native_layer_norm_fake`` calls ``torch._refs.native_layer_norm`` by name, so a PR that changes that
    function changes what the rule runs."""
    chain, seen = [], set()
    while fn is not None and id(fn) not in seen:
        seen.add(id(fn))
        chain.append(fn)
        fn = getattr(fn, "__wrapped__", None) or getattr(fn, "func", None)  # decorators, functools.partial
    for f in chain:
        code = getattr(f, "__code__", None)
        if code is None:
            continue
        own = getattr(f, "__globals__", None) is vars(module)
        stack = [code]
        while stack:  # its body and the code nested in it
            c = stack.pop()
            # its module's global, or imported where it runs (fake_impls' index_tensor: ``from
            # torch._meta_registrations import meta_index_Tensor`` in its body reads the module's name then)
            if name in c.co_names and (own or module.__name__ in c.co_names):
                return True
            stack.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    return False


@contextlib.contextmanager
def bound_global(module: Any, name: str, value: Any) -> Iterator[None]:
    """``module.name`` is ``value`` for the block (a ``--meta-source`` file's function where torch's own code
    reads it by name), then what it was."""
    before = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, before)
