"""A fake without the dim check its eager kernel makes (``maybe_wrap_dim``'s "Dimension out of range", an
IndexError) accepts a dim past the rank: SC041, not an error about made-up data (a mutant of cummax's meta kernel
passed as clean). An error about the data (an index past a size) is still only noted."""

from __future__ import annotations

import sys

import pytest

from tests.unit.test_audit_untraced import audit_lib

pytestmark = pytest.mark.slow  # an audit run each

LIB = '''
import torch


@torch.library.custom_op("{ns}::running", mutates_args=())
def running(x: torch.Tensor, dim: int = 0) -> torch.Tensor:
    return torch.cumsum(x, {eager_dim})


@running.register_fake
def _(x, dim=0):
    return torch.empty_like(x)  # no dim check
'''


def test_a_fake_that_takes_a_dim_past_the_rank_is_sc041(tmp_path, monkeypatch):
    code, doc = audit_lib(tmp_path, monkeypatch, "dimlib", LIB.format(ns="dimlib", eager_dim="dim"))
    (rec,) = doc["ops"]
    found = [f for f in rec["findings"] if f["code"] == "SC041"]
    assert code == 1 and found, rec
    assert any("Dimension out of range" in f["message"] for f in found)
    sys.modules.pop("dimlib", None)


def test_an_index_error_about_the_data_is_still_only_noted(tmp_path, monkeypatch):
    """The eager kernel indexes with the data (``x[int(x.sum())]``): its IndexError is the made-up data's."""
    source = LIB.format(ns="datalib", eager_dim="0").replace(
        "return torch.cumsum(x, 0)", "return torch.cumsum(x, 0) + x.reshape(-1)[int(x.abs().sum()) + x.numel()]")
    code, doc = audit_lib(tmp_path, monkeypatch, "datalib", source)
    (rec,) = doc["ops"]
    assert not [f for f in rec["findings"] if f["code"] == "SC041"], rec
    assert any("is out of bounds" in n for n in rec["notes"]), rec["notes"]
    sys.modules.pop("datalib", None)
