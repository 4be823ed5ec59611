"""An op whose fake raised on every input found (one the eager kernel takes, as torchvision's roi_pool with
3-column rois) has a real finding, but no trace of the fake was made: the coverage says so (not traced, not
compared), and a baseline lists it as untraced rather than hiding it as traced."""

from __future__ import annotations

import contextlib
import io
import json
import sys

import pytest

LIB = '''
import torch
from torch.library import custom_op


@custom_op("untraced::boxes_area", mutates_args=())
def boxes_area(rois: torch.Tensor) -> torch.Tensor:  # no shape check in the eager kernel
    if rois.shape[1] >= 5:
        return (rois[:, 3] - rois[:, 1]) * (rois[:, 4] - rois[:, 2])
    return rois.new_zeros(rois.shape[0])


@boxes_area.register_fake
def _(rois):
    torch._check(rois.size(1) == 5, lambda: "rois need five columns")  # no size the search can read
    return rois.new_empty(rois.shape[0])
'''

HINTED = LIB.replace("untraced::", "hinted::").replace('"rois need five columns"', '"rois must have shape as Tensor[K, 5]"')
HINTED = HINTED.replace("return rois.new_empty(rois.shape[0])", "return rois.new_empty(rois.shape[0], 1)  # eager: [K]")


def _audit(*argv: str) -> tuple[int, str]:
    from shapecheck.cli.main import main

    out = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(["audit", *argv])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    return code, out.getvalue()


@pytest.mark.slow
def test_a_shape_the_fakes_error_asks_for_is_searched_so_the_op_is_traced(tmp_path, monkeypatch):
    # the fake's "Tensor[K, 5]" gives the search a size both kernels take: the fake's output on valid input is
    # then compared (eager [K], the fake [K, 1]: SC038), where the op was left untraced
    code, doc = audit_lib(tmp_path, monkeypatch, "hinted_lib", HINTED)
    rec = doc["ops"][0]
    assert code == 1 and rec["traces"] > 0 and doc["coverage"]["traced"] == 1, rec
    sc038 = [f for f in rec["findings"] if f["code"] == "SC038"]
    assert sc038 and sc038[0]["counterexample"]["rois_1"] == 5, rec["findings"]


def audit_lib(tmp_path, monkeypatch, name: str, source: str) -> tuple[int, dict]:
    """(exit code, JSON report) of ``shapecheck audit --import`` of the library ``source``, written as NAME.py."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out = _audit("--import", str(tmp_path / f"{name}.py"), "-j", "1", "--no-cache", "--format", "json")
    return code, json.loads(out)


@pytest.mark.slow
def test_an_op_the_fake_never_returned_on_is_not_traced_nor_compared(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "untraced_lib.py").write_text(LIB)
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ("--import", str(tmp_path / "untraced_lib.py"), "-j", "1", "--no-cache")
    code, out = _audit(*args, "--format", "json")
    doc = json.loads(out)
    rec = doc["ops"][0]
    assert code == 1 and [f["code"] for f in rec["findings"]] == ["SC042"]
    assert rec["traces"] == 0 and doc["coverage"]["traced"] == 0 and doc["coverage"]["compared_with_eager"] == 0
    assert rec["op"] in doc["coverage"]["inconclusive"] and any(n.startswith("not traced:") for n in rec["notes"])
    base = tmp_path / "base.json"
    _audit(*args, "--baseline", str(base))
    assert [u["op"] for u in json.loads(base.read_text())["untraced"]] == [rec["op"]]
    sys.modules.pop("untraced_lib", None)


NO_FAKE = '''
import torch

lib = torch.library.Library("nofakeaudit", "DEF")
lib.define("boxes(Tensor b) -> Tensor")


def boxes_cpu(b):
    if b.dim() != 2 or b.shape[1] != 7:  # the eager kernel takes no call the search makes
        raise RuntimeError("boxes must have shape [N, 7]")
    return b[:, :1].clone()


def boxes_meta(b):  # FakeTensor then falls back to the eager kernel: at static sizes only
    raise NotImplementedError("no meta kernel")


lib.impl("boxes", boxes_cpu, "CPU")
lib.impl("boxes", boxes_meta, "Meta")
'''


@pytest.mark.slow
def test_an_op_whose_fake_is_unsupported_on_every_call_is_listed_without_a_fake_kernel(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nofake_lib.py").write_text(NO_FAKE)
    code, out = _audit("--import", str(tmp_path / "nofake_lib.py"), "-j", "1", "--no-cache", "--format", "json")
    doc = json.loads(out)
    assert code == 3 and doc["coverage"]["no_fake_kernel"] == ["nofakeaudit::boxes.default"], doc["coverage"]
    assert any("UnsupportedOperatorException on every call" in n for n in doc["ops"][0]["notes"])
    sys.modules.pop("nofake_lib", None)


WIDE = '''
import torch

lib = torch.library.Library("widelib", "DEF")
lib.define("rows(Tensor x, bool wide=False) -> Tensor")
lib.impl("rows", lambda x, wide=False: x.new_zeros(x.shape[0]), "CPU")


def rows_fake(x, wide=False):
    if wide:  # a branch per size: more regions than the trace bound (--max-traces) explores
        steps = sum(1 for i in range(1, 40) if x.shape[0] > i)
        return x.new_empty(x.shape[0] + steps - steps)
    return x.new_empty(x.shape[0])


torch.library.register_fake("widelib::rows", rows_fake, lib=lib)
'''


@pytest.mark.slow
def test_a_variant_explored_in_part_leaves_the_op_explored_in_part(tmp_path, monkeypatch):
    # the first inputs (wide=False) are traced to the end and clean; wide=True, a variant, has regions its trace
    # bound left out: its findings stand, and the op is explored in part (accepting them leaves it inconclusive)
    code, doc = audit_lib(tmp_path, monkeypatch, "wide_lib", WIDE)
    rec = doc["ops"][0]
    assert any("wide=True" in v["args"] for v in rec["variants"]), rec["variants"]
    assert code == 1 and rec["partial"] and all("wide=True" in f["message"] for f in rec["findings"]), rec
    assert any(n.startswith("stopped after") and "wide=True" in n for n in rec["notes"]), rec["notes"]
    assert rec["op"] in doc["coverage"]["inconclusive"]


def test_a_baselines_reason_is_cut_at_a_clause_not_mid_text():
    """hunt 41: a reason cut at 160 characters ended in "(give the op samples: ["."""
    from shapecheck.ci.baseline import shorten

    why = ("not compared: the eager kernel rejected every input tried: ConnectError: [Errno -2] Name or service not "
           "known; the fake returned on each (give the op samples: [tool.shapecheck.audit] samples, or list the op "
           "in the baseline with a reason); and more words after that to pass the limit of the reason's length")
    short = shorten(why)
    assert short.endswith(" ...") and len(short) <= 244 and short[:-4] in why, short
    assert not short[:-4].endswith(("(", "[", ":", ";", ",")) and why.startswith(short[:-4])
    assert shorten("a short reason") == "a short reason"
