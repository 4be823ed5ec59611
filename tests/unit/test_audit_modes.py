"""The audit of an op whose ways of running reach two kernels: torch.export runs upsample_nearest2d's decomposition,
plain FakeTensorMode (meta-device model init, FakeTensorProp) its meta registration, which raises TypeError on an
empty batch where the eager kernel returns. Both kernels run against the eager kernel; plain FakeTensorMode's
disagreements name its kernel and, as in verify, count only with --both-modes. In-process (click's runner)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import invoke

OP = "aten::upsample_nearest2d.default"


def _record(*more: str) -> tuple[int, dict]:
    res = invoke("audit", "--ops", OP, "-j", "1", "--no-cache", "--format", "json", *more)
    (rec,) = json.loads(res.stdout)["ops"]
    return res.returncode, rec


@pytest.mark.slow
def test_plain_fake_tensor_modes_own_kernel_is_compared_and_counts_with_both_modes():
    code, rec = _record()
    other = rec["other_mode"]
    assert "meta registration upsample_nearest2d" in other["kernel"] and "plain FakeTensorMode" in other["modes"]
    assert other["compared"] > 0 and not other["counted"]
    (f,) = [f for f in other["findings"] if f["class"] == "fake-rejects"]
    assert f["counterexample"]["self_0"] == 0 and "cond must be a bool" in f["message"]
    assert f["location"]["file"].endswith("_meta_registrations.py")
    # shown, not counted: the verdict is the kernel torch.export runs (its own findings: the decomposition's)
    assert not any(g["expr"].startswith("[plain FakeTensorMode") for g in rec["findings"])
    assert all(g["location"]["file"].endswith("decompositions.py") for g in rec["findings"])
    assert any("not counted" in n and "cond must be a bool" in n for n in rec["notes"])
    both, counted = _record("--both-modes")
    assert counted["other_mode"]["counted"]
    mine = [g for g in counted["findings"] if g["expr"].startswith("[plain FakeTensorMode")]
    assert [g["class"] for g in mine] == ["fake-rejects"] and mine[0]["counterexample"] == f["counterexample"]
    assert len(counted["findings"]) == len(rec["findings"]) + 1 and both == 1


@pytest.mark.slow
def test_an_op_with_one_kernel_for_every_way_has_no_second_run():
    res = invoke("audit", "--ops", "aten::pixel_shuffle.default", "-j", "1", "--no-cache", "--format", "json")
    (rec,) = json.loads(res.stdout)["ops"]
    assert "other_mode" not in rec
