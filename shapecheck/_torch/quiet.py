"""The process's state while a kernel is traced: torch's logs silenced, numpy's absence known (part of the door
into torch)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator


def _numpy_missing() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("numpy") is None
    except (ImportError, ValueError):  # a half-imported or odd entry: leave it be
        return False


NUMPY_MISSING = _numpy_missing()


@contextlib.contextmanager
def numpy_absence_known() -> Iterator[None]:
    """torch's ``sym_max`` of two ints imports numpy at every call (``torch/__init__.py``'s
    ``__all_and_float_types``); where numpy is not installed, each such import searches ``sys.path`` again (0.1 ms,
    about a tenth of a rank-5 SDPA trace's symbolic arithmetic). While a kernel is traced its absence is recorded in
    ``sys.modules``, so that the import fails at once (ModuleNotFoundError, as before), as it succeeds at once where
    numpy is installed."""
    import sys

    if not NUMPY_MISSING or "numpy" in sys.modules:
        yield
        return
    sys.modules["numpy"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if "numpy" in sys.modules and sys.modules["numpy"] is None:
            del sys.modules["numpy"]


@contextlib.contextmanager
def quiet_torch_logging() -> Iterator[None]:
    """Silence torch's error-level logs (each data-dependent guard is logged with a traceback; here they are
    the expected signal, reported by shapecheck itself). Nested uses cost nothing: ``logging.disable``
    clears every logger's cache, which is measurable once per trace."""
    previous = logging.root.manager.disable
    if previous >= logging.ERROR:
        yield
        return
    logging.disable(logging.ERROR)
    try:
        yield
    finally:
        logging.disable(previous)


@contextlib.contextmanager
def export_backends() -> Iterator[None]:
    """The backends as torch.export leaves them while it traces: mkldnn, nnpack and cudnn switched off (torch 2.13's
    ``export/_trace.py``, so that no backend-specific decomposition enters the graph). A fake's call of torch's backend
    choice sees it: ``fake_impls``' conv asks ``_select_conv_backend``, which with mkldnn on guards the batch
    ``N < 16``, a guard export never installs (hunt 50)."""
    import torch

    # the switches alone: ``torch.backends.mkldnn.flags`` sets oneDNN's TF32 flag too, which warns on every call
    switches = [(getattr(torch._C, f"_get_{b}_enabled", None), getattr(torch._C, f"_set_{b}_enabled", None))
                for b in ("mkldnn", "nnpack", "cudnn")]
    switches = [(get, put) for get, put in switches if get is not None and put is not None]
    before = [get() for get, _ in switches]
    for _, put in switches:
        put(False)
    try:
        yield
    finally:
        for (_, put), was in zip(switches, before, strict=True):
            put(was)
