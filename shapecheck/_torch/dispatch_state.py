"""torch's thread-local dispatch state, kept across a kernel's call whatever the kernel does."""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Iterator

import torch

from .attribution import keep_dispatched


@contextlib.contextmanager
def dispatch_state_kept() -> Iterator[None]:
    """torch's thread-local dispatch state as it was before, whatever a kernel did in between: an error raised
    while torch unwinds its own guards (a meta kernel's ``.item()`` on an input recurses until Python stops it)
    can leave the Python key excluded, and every fake tensor made after would fail torch's no_dispatch()
    assertion, in the stages after the kernel's run. torch's own guard objects held by the frames of the
    exception's traceback put back the state they found when they are freed, which may be long after: the
    frames' locals are freed here, before the state is put back."""
    include, exclude = torch._C._dispatch_tls_local_include_set(), torch._C._dispatch_tls_local_exclude_set()
    meta = torch._C._meta_in_tls_dispatch_include()
    try:
        with torch._C._ForceDispatchKeyGuard(include, exclude):  # its exit puts back the sets it found
            try:
                yield
            except BaseException as exc:
                seen: set[int] = set()
                chained: BaseException | None = exc
                while chained is not None and id(chained) not in seen:
                    seen.add(id(chained))
                    keep_dispatched(chained)  # what torch's guard attribution reads from the locals
                    traceback.clear_frames(chained.__traceback__)  # the frames stay, for the report; their locals go
                    chained = chained.__cause__ or chained.__context__
                raise
    finally:
        torch._C._set_meta_in_tls_dispatch_include(meta)
