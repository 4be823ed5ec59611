"""The audit's comparison with the eager kernel where one of them refuses (hunt 29): a layout the eager kernel
checks and the fake takes is a finding, as a dtype it checks is; a flag variant is compared in the other dtypes
too; a backend that lacks a dtype is no check; a crash at an empty point is a note unless the lifted point
crashes too."""

import pytest

from tests.unit.test_audit_untraced import audit_lib

REFUSALS = '''
import os
import signal

import torch
from torch.library import custom_op


@custom_op("refusals::to_nhwc", mutates_args=())
def to_nhwc(x: torch.Tensor) -> torch.Tensor:
    if not x.is_contiguous():
        raise RuntimeError("to_nhwc expects a contiguous (B, C, H, W) tensor")
    return x.permute(0, 2, 3, 1).contiguous()


@to_nhwc.register_fake
def _(x):
    return x.new_empty((x.shape[0], x.shape[2], x.shape[3], x.shape[1]))


@custom_op("refusals::dequant", mutates_args=())
def dequant(q: torch.Tensor, scale: torch.Tensor, out_fp32: bool = False) -> torch.Tensor:
    out = q.float() * scale.float()
    return out if out_fp32 else out.to(scale.dtype)


@dequant.register_fake
def _(q, scale, out_fp32=False):
    return q.new_empty(q.shape, dtype=scale.dtype)  # out_fp32 forgotten


@custom_op("refusals::backend", mutates_args=())
def backend(x: torch.Tensor) -> torch.Tensor:
    if x.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise RuntimeError(f"No backend can handle 'backend': dtype {x.dtype} not in (float32, float16, bfloat16)")
    return x.clone()


@backend.register_fake
def _(x):
    return torch.empty_like(x)


@custom_op("refusals::empty_dies", mutates_args=())
def empty_dies(x: torch.Tensor) -> torch.Tensor:
    if x.shape[0] == 0:
        os.kill(os.getpid(), signal.SIGSEGV)  # reads a row an empty input lacks
    return x.clone()


@empty_dies.register_fake
def _(x):
    return torch.empty_like(x)
'''


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    try:
        code, doc = audit_lib(tmp_path_factory.mktemp("refusals"), mp, "refusals_lib", REFUSALS)
    finally:
        mp.undo()
    return code, {r["op"].split("::")[1].split(".")[0]: r for r in doc["ops"]}


@pytest.mark.slow
def test_a_layout_the_eager_kernel_refuses_and_the_fake_takes_is_a_finding(audited):
    _, ops = audited
    found = [f for f in ops["to_nhwc"]["findings"] if f["code"] == "SC041" and "memory order" in f["expr"]]
    assert len(found) == 1 and "expects a contiguous" in found[0]["message"], ops["to_nhwc"]["findings"]


@pytest.mark.slow
def test_a_flag_variant_is_compared_in_the_other_dtypes(audited):
    _, ops = audited
    dtype = [f for f in ops["dequant"]["findings"] if f["code"] == "SC039"]
    assert dtype and all("out_fp32=True" in f["expr"] for f in dtype), ops["dequant"]["findings"]


@pytest.mark.slow
def test_a_backend_that_lacks_a_dtype_is_no_check_of_the_fake(audited):
    _, ops = audited
    assert ops["backend"]["findings"] == [], ops["backend"]["findings"]
    assert any(v["status"] == "eager-rejects" for v in ops["backend"]["variants"])


@pytest.mark.slow
def test_an_eager_crash_at_an_empty_point_alone_is_a_note(audited):
    code, ops = audited
    rec = ops["empty_dies"]
    assert not [f for f in rec["findings"] if "crashes" in f["expr"]], rec["findings"]
    assert any("on an empty input" in n and "SIGSEGV" in n for n in rec["notes"]), rec["notes"]
    assert code == 1  # the other ops' findings
