"""The audit's eager worker killed at its time limit mid-build (hunt 40: optimum-quanto builds its C++ extension on
its first eager call, in its own package, and the audit left torch's build lock there, so that every later call of
the op hung; the compilers, each in a process group of its own under ninja, ran on)."""

from __future__ import annotations

import importlib.util
import os
import time

import pytest

from tests.conftest import KERNELS


@pytest.mark.slow  # it waits out the call's 8 s limit
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="the worker's processes are found through /proc")
def test_a_worker_killed_mid_build_leaves_no_lock_and_no_compiler(tmp_path, monkeypatch):
    from shapecheck.audit.eager import EagerWorker
    from shapecheck.audit.inputs import OpInputs

    monkeypatch.setenv("SLOWBUILD_DIR", str(tmp_path))
    spec = importlib.util.spec_from_file_location("slow_build_kernels", KERNELS / "slow_build.py")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    inputs = OpInputs("slowbuild::first_call.default", "schema",
                      (("x", False, ("tensor", ("x_0",), (2,), "float32")),))
    worker = EagerWorker()
    try:
        res = worker.call("slowbuild::first_call.default", inputs, {"x_0": 2}, seconds=8)
    finally:
        worker.close()
    assert res.crashed and "ran past 8 s" in res.error and "build lock" in res.error, res.error
    assert not (tmp_path / "lock").exists()
    compiler = int((tmp_path / "compiler.pid").read_text())
    time.sleep(0.5)
    assert not os.path.exists(f"/proc/{compiler}") or open(f"/proc/{compiler}/stat").read().split()[2] == "Z"


def test_a_call_that_takes_no_build_lock_leaves_no_file_behind():
    """The worker notes a build lock only when it takes one: a call that builds nothing, in a process that ends
    without closing its worker (the console script leaves by ``os._exit``), leaves nothing in the temp dir (the
    twenty-ninth session's runs had left a hundred empty note files there)."""
    import glob
    import tempfile

    from shapecheck.audit.eager import EagerWorker
    from shapecheck.audit.inputs import OpInputs

    pattern = os.path.join(tempfile.gettempdir(), f"shapecheck-build-locks-{os.getpid()}-*")
    inputs = OpInputs("aten::neg.default", "schema", (("self", False, ("tensor", ("x_0",), (3,), "float32")),))
    worker = EagerWorker()
    try:
        res = worker.call("aten::neg.default", inputs, {"x_0": 3})
        assert res.ok, res.error
        assert not glob.glob(pattern)
    finally:
        worker.close()
    assert not glob.glob(pattern)
