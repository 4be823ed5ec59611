"""fuzz runs the fake on plain sizes too (``Checker._static_sizes``): a fake whose branch asks whether a size is
concrete takes another path there than with backed sizes (a hunt's wrong PASS, confirmed by opcheck and by
torch.compile at L = 5)."""

from __future__ import annotations

import pytest

from tests.conftest import KERNELS, invoke


def _fuzz(example: str):
    return invoke("fuzz", "op", "staticbr::pool1d", "--import", str(KERNELS / "static_branch.py"), "--contract",
                  str(KERNELS / "static_branch.toml"), "--example", example, "--no-verify-examples")


@pytest.mark.slow
def test_a_branch_only_plain_sizes_take_fails_fuzz_at_that_size_and_not_elsewhere():
    res = _fuzz(";N=1,C=1,L=5")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "on plain sizes (FakeTensorMode without a ShapeEnv" in res.stdout
    assert "output 0 is (1, 1, 7); with backed sizes (1, 1, 4)" in res.stdout
    assert _fuzz(";N=1,C=1,L=6").returncode == 0
    # the truth: plain FakeTensorMode runs the wrong branch, the eager kernel the right one
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode


    with FakeTensorMode():
        assert tuple(torch.ops.staticbr.pool1d(torch.empty(1, 1, 5)).shape) == (1, 1, 7)
    assert tuple(torch.ops.staticbr.pool1d(torch.empty(1, 1, 5)).shape) == (1, 1, 4)
