"""The compatibility layer, part 3: what the audit needs of torch (every op, schema-derived or OpInfo inputs,
static runs). Torch internals here as in ``_torch.core``, which this module builds on."""

from __future__ import annotations

import contextlib
import functools
import os
import warnings
from collections.abc import Iterator
from typing import Any

import torch

from ..findings import SourceLoc
from .core import DTYPES, TORCH_DIR, enable_python_dispatcher, quiet_torch_logging, static_fake_mode

# The audit: every op, schema-derived or OpInfo inputs, static runs


def all_op_names() -> list[str]:
    """Every registered operator as ``ns::name[.overload]`` (the default overload unsuffixed)."""
    return sorted(torch._C._dispatch_get_all_op_names())


def is_functional(op: Any) -> bool:
    """No argument written in place or as ``out=``: the overloads an audit calls with fresh inputs."""
    schema = op._schema
    return not schema.is_mutable and not any(a.alias_info is not None and a.alias_info.is_write
                                             for a in schema.arguments)


@functools.cache
def opinfo_db() -> list[Any] | None:
    """torch's OpInfo database (``torch.testing._internal.common_methods_invocations.op_db``), or None when the
    installed torch's testing package cannot load it (it needs numpy and expecttest)."""
    try:
        with quiet_torch_logging(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from torch.testing._internal.common_methods_invocations import op_db
    except Exception:  # noqa: BLE001 - any failure of torch's test utilities means: no OpInfo samples here
        return None
    return list(op_db)


def opinfo_samples(info: Any, limit: int = 4) -> list[tuple[Any, tuple, dict]]:
    """Up to ``limit`` float32 CPU samples of an OpInfo as (input, args, kwargs); [] when it has none."""
    out = []
    try:
        for s in info.sample_inputs("cpu", torch.float32, requires_grad=False):
            out.append((s.input, tuple(s.args), dict(s.kwargs)))
            if len(out) >= limit:
                break
    except Exception:  # noqa: BLE001 - a sample generator that fails here: no samples
        return []
    return out


def tensor_facts(x: Any) -> tuple[tuple[int, ...], str] | None:
    """(shape, dtype name) of a real tensor, for an OpInfo sample; None for anything else."""
    if not isinstance(x, torch.Tensor):
        return None
    name = str(x.dtype).replace("torch.", "")
    return (tuple(int(d) for d in x.shape), name) if name in DTYPES else None


@contextlib.contextmanager
def static_mode() -> Iterator[None]:
    """Static shapes under FakeTensorMode and the Python dispatcher: the kernel at concrete sizes."""
    with quiet_torch_logging(), static_fake_mode(), enable_python_dispatcher():
        yield


def audit_frame(frames: list[Any], files: set[str] | frozenset[str]) -> SourceLoc | None:
    """Where a torch kernel guarded: the innermost frame in ``files``, else the innermost frame of torch's
    own Python kernels (meta registrations, refs, decompositions), skipping the dispatch, fake-tensor and
    symbolic-shape machinery. None when only machinery is on the stack (a C++ meta kernel)."""
    norm = {os.path.abspath(f) for f in files}
    for fr in reversed(frames):
        if os.path.abspath(fr.filename) in norm:
            return SourceLoc(fr.filename, fr.lineno or 0, fr.name, (fr.line or "").strip())
    for fr in reversed(frames):
        path = os.path.abspath(fr.filename)
        if not path.startswith(TORCH_DIR + os.sep):
            continue
        rel = os.path.relpath(path, TORCH_DIR)
        if rel.startswith(_MACHINERY) or rel in _MACHINERY_FILES:
            continue
        return SourceLoc(fr.filename, fr.lineno or 0, fr.name, (fr.line or "").strip())
    return None


_MACHINERY = tuple(os.path.join(*p) + os.sep for p in (("fx",), ("_subclasses",), ("_dispatch",), ("_library",), ("_dynamo",),
                                                         ("_higher_order_ops",), ("utils",), ("_logging",)))
_MACHINERY_FILES = {"__init__.py", "_ops.py", "overrides.py", "_tensor.py", "_compile.py", "_jit_internal.py",
                    os.path.join("_prims_common", "wrappers.py"), os.path.join("_prims", "context.py")}
