"""The eager worker's time-out (hunt 31 W2): optimum-quanto builds its C++ extension on the first eager call, under
torch's build lock; the audit killed the worker after 60 s, the lock stayed, and every later call waited on it.
A time-out now kills the worker's process group (the build with it) and removes the build locks made during the
call."""

from __future__ import annotations

import os
import time

import pytest

from shapecheck.audit.inputs import OpInputs

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")


def _define(lib_name: str):
    import torch

    lib = torch.library.Library(lib_name, "DEF")  # noqa: TOR901 - the test's own namespace
    lib.define("build(Tensor x) -> Tensor")

    def build(x):
        # as torch.utils.cpp_extension does: the lock under the build root, then a long compiler run
        import subprocess

        from torch.utils.cpp_extension import get_default_build_root
        from torch.utils.file_baton import FileBaton

        folder = os.path.join(os.environ.get("TORCH_EXTENSIONS_DIR") or get_default_build_root(), "slow_ext")
        os.makedirs(folder, exist_ok=True)
        assert FileBaton(os.path.join(folder, "lock")).try_acquire()
        child = subprocess.Popen(["sleep", "300"])
        with open(os.path.join(folder, "child.pid"), "w") as f:
            f.write(str(child.pid))
        time.sleep(300)
        return x

    lib.impl("build", build, "CPU")
    return lib


@pytest.mark.slow
def test_a_time_out_kills_the_build_it_started_and_removes_its_lock(tmp_path, monkeypatch):
    from shapecheck.audit.eager import TIMED_OUT, EagerWorker

    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    lib = _define("eager_timeout_t")
    inputs = OpInputs("eager_timeout_t::build.default", "schema", (("x", False, ("tensor", ("x_0",), (3,), "float32")),))
    worker = EagerWorker()
    try:
        res = worker.call("eager_timeout_t::build.default", inputs, {"x_0": 3}, seconds=8)
    finally:
        worker.close()
    assert res.crashed and res.error.startswith(TIMED_OUT), res
    lock = tmp_path / "slow_ext" / "lock"
    assert not lock.exists() and "torch's build lock it left" in res.error and str(lock) in res.error
    pid = int((tmp_path / "slow_ext" / "child.pid").read_text())
    for _ in range(50):  # the compiler it started died with it (a zombie until its parent is reaped: gone or Z)
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[1].split()[0] == "Z":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the build's child process {pid} still runs")
    del lib
