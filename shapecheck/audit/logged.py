"""What a C++ kernel logs instead of raising: a kernel that logs a failed check on stderr and returns anyway
(ExecuTorch's ATen-mode kernels return an uninitialised output, hunt 36) refuses its inputs as a raise would, on
the eager side and on the fake side alike (a C++ kernel at the Meta key runs the same code on fake tensors)."""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any

#: a C++ check that failed and was only logged: glog's "Check failed: x == y", ExecuTorch's ET_CHECK_MSG/ET_LOG
#: "Check failed (cond): message"
_FAILED_CHECK = re.compile(r"\bCheck failed\b[^\n]*")
#: what is read of one call's stderr (a kernel that logs much before its failed check: hunt 38's 64 KiB was short)
READ_LIMIT = 8 << 20


@contextlib.contextmanager
def stderr_read() -> Any:
    """The process's stderr (file descriptor 2, where C++ kernels log) during the block, kept in a file and
    not shown; the block's ``as`` target reads it afterwards."""
    import sys
    import tempfile

    sys.stderr.flush()
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(2)
        os.dup2(tmp.fileno(), 2)
        text: list[str] = []
        try:
            yield lambda: "".join(text)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text.append(tmp.read(READ_LIMIT).decode("utf-8", "replace"))


def failed_check(logged: str) -> str:
    """A kernel that logs a failed check on stderr and returns anyway (ExecuTorch's ATen-mode kernels return an
    uninitialised output, hunt 36) refuses the inputs as a raise would: the error text, else ""."""
    m = _FAILED_CHECK.search(logged)
    return "" if m is None else f"RuntimeError: the kernel logged a failed check and returned anyway: " \
                                f"{m.group(0).strip()[:300]}"
