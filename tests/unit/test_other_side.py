"""The other side of a kernel's own guard_or_false, run on concrete sizes (``prove.other_side``): a hunt's wrong
PASS, a fake wrong only at M = 0 behind ``guard_or_false(M == 0)``, which the symbolic trace answers False."""

from __future__ import annotations

import json

import pytest

from tests.conftest import KERNELS, invoke


def _verify(name: str):
    return invoke("verify", "op", f"fbside::cat_{name}", "--import", str(KERNELS / "fallback_sides.py"), "--contract",
                  str(KERNELS / f"fallback_sides_{name}.toml"), "-j", "1", "--no-cache", "--format", "json")


@pytest.mark.slow
def test_the_other_branch_of_a_guard_or_false_is_checked_where_the_sizes_take_it():
    res = _verify("bad")
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    [v] = doc["violations"]
    assert v["code"] == "SC002" and v["counterexample"] == {"B": 1, "M": 0, "K": 1}
    assert v["location"]["text"] == "if guard_or_false(a.size(1) == 0):  # wrong only where M == 0"
    assert "output 0 is (1, 2) at B=1, M=0, K=1 but the contract's path cat says (1, 1)" in v["message"]
    assert doc["cases"][0]["paths"] == {"cat": "refuted"}
    # the truth (the op registered by --import above), as FakeTensorMode runs the fake on concrete sizes
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode


    with FakeTensorMode():
        assert tuple(torch.ops.fbside.cat_bad(torch.empty(1, 0), torch.empty(1, 1)).shape) == (1, 2)
    assert tuple(torch.ops.fbside.cat_bad(torch.empty(1, 0), torch.empty(1, 1)).shape) == (1, 1)


@pytest.mark.slow
def test_an_other_branch_with_the_same_shape_passes():
    res = _verify("ok")
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads(res.stdout)["violations"] == []


@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_raise_on_both_sides_of_a_layout_answer_is_placed_where_it_raises_and_not_blamed_on_it():
    """hunt 39 (and 53): a glu whose ``reshape(-1, A1 // 2)`` raises at a halved size of 0 for every A0. The raise was found at
    A0 = 1, the other side of the layout logic's ``A0 == 1`` answer, so the SC007 named the multiplication's line and
    said the layout answer took the branch; the kernel raises at A0 = 0 too, on the trace's side."""
    res = invoke("verify", "op", "aten::glu", "--contract", str(KERNELS / "glu_reshape.toml"), "--meta",
                 f"{KERNELS / 'glu_reshape.py'}:glu_reshape", "-j", "1", "--no-cache", "--format", "json")
    assert res.returncode == 1, res.stdout + res.stderr
    found = json.loads(res.stdout)["violations"]
    line = (KERNELS / "glu_reshape.py").read_text().splitlines().index(
        "    return out.reshape(-1, a.shape[-1] // 2).view(out.shape)") + 1
    # the raise is the reshape's own check at that line, ``A1 // 2 != 0``: its SC004, at A1 = 0 (an SC007 of the
    # other side of an answer, which said the same again, is left out where that check fails at its point)
    [check] = [v for v in found if v["code"] == "SC004"]
    assert check["location"]["line"] == line and check["expr"] == "A1 // 2 != 0", check
    assert check["counterexample"]["A1"] in (0, 1), check
    # not blamed on the layout answer ``A0 == 1`` (the trace's side raises too)
    assert not any("A0 == 1" in v["message"] for v in found), found


@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_size_made_from_data_on_the_other_side_is_no_wrong_shape_and_no_pass():
    """hunt 39: a row count made from data read as ``(None, 0)`` on the other side of a layout answer, an SC002
    against the contract's (1, 0); it is a size the contract does not name: inconclusive, as the trace says."""
    res = invoke("verify", "op", "aten::glu", "--contract", str(KERNELS / "glu_reshape.toml"), "--meta",
                 f"{KERNELS / 'glu_reshape.py'}:glu_rows", "-j", "1", "--no-cache", "--format", "json")
    assert res.returncode == 3, res.stdout + res.stderr
    found = json.loads(res.stdout)["violations"]
    assert {v["code"] for v in found} == {"SC005"}, found
    assert not any("None" in v["message"] for v in found), found


@pytest.mark.slow
def test_export_runs_raise_at_a_line_where_only_an_inconclusive_finding_sits_is_still_reported():
    """hunt 39: a data-dependent row count under torch.export's run (UnsupportedOperatorException around the index's
    own error). Once both findings were placed at the kernel's line, the trace's unreproduced raise (SC005) hid the
    export-style run's SC007 there, and the verdict fell from FAIL to INCONCLUSIVE."""
    res = invoke("verify", "op", "aten::logcumsumexp", "--contract", str(KERNELS / "lce_rows.toml"), "--meta-source",
                 str(KERNELS / "lce_rows_registrations.py"), "-j", "1", "--no-cache", "--format", "json")
    assert res.returncode == 1, res.stdout + res.stderr
    [raised] = [v for v in json.loads(res.stdout)["violations"] if v["code"] == "SC007"]
    assert raised["location"]["text"] == "rows = self[self.isfinite().all(dim=-1)]", raised
