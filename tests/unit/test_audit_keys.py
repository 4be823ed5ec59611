"""One report per way a fake differs from its eager kernel, not one per line (hunt 43, bitsandbytes): two checks at
a fake's ``def`` line are two findings, a rank the fake gets wrong is not the same as a size it gets wrong, a
kernel registered with ``torch.library.register_kernel`` is read through torch's wrapper, and a finding with no
size to name never says that it holds at every input. Kernels: tests/kernels/audit_keys.py."""

from __future__ import annotations

import pytest

from shapecheck.audit.explore import Finding
from shapecheck.audit.keys import finding_key

LIBRARY = "tests/kernels/audit_keys.py"


def _rejects(message: str) -> Finding:
    return Finding("fake-rejects", "the fake raises where the eager kernel returns", None, {"A_0": 3}, None, message)


def test_two_checks_a_fake_makes_at_one_line_are_two_keys_and_one_check_at_two_points_is_one():
    blocksize = _rejects("the fake raises RuntimeError: blocksize must be positive, got 0 on inputs the eager "
                         "kernel accepts (A=float32[A_0])")
    dtype = _rejects("with A as int8: at A_0=3: the fake: RuntimeError: A must be uint8, got torch.int8")
    again = _rejects("at A_0=5: the fake: RuntimeError: A must be uint8, got torch.float32; the eager kernel "
                     "returns")
    assert finding_key(blocksize) != finding_key(dtype)
    assert finding_key(dtype) == finding_key(again)


def test_a_rank_apart_is_another_key_than_a_size_apart():
    def shape(message: str) -> Finding:
        return Finding("eager-shape", "output 0 shape", None, {"A_0": 3}, None, message)

    size = shape("at A_0=1: the eager kernel returns [2, 3], the fake [1, 3]")
    other_size = shape("at A_0=4: the eager kernel returns [5, 3], the fake [4, 3]")
    rank = shape("at A_0=2: the eager kernel returns [8, 3], the fake [2, 4, 3]")
    assert finding_key(size) == finding_key(other_size) != finding_key(rank)


def test_a_point_with_no_sizes_says_so_and_not_that_it_holds_everywhere():
    from shapecheck.render.audit import _point

    assert _point({}) == "no sizes to name (the message says at which inputs)"
    assert _point({"A_0": 3, "A_1": 4}) == "A_0=3, A_1=4"


@pytest.mark.slow
def test_each_difference_is_reported_and_a_register_kernel_kernel_is_compared():
    from shapecheck.audit.run import run_audit

    run = run_audit(("auditkeys::*",), (LIBRARY,), jobs=1)
    records = {r["op"].split("::")[1]: r for r in run.records}
    deq = [f["message"] for f in records["deq.default"]["findings"] if f["class"] == "fake-rejects"]
    assert any("blocksize must be positive" in m for m in deq) and any("A must be uint8" in m for m in deq), deq
    rows = [f["message"] for f in records["rows.default"]["findings"] if f["class"] == "eager-shape"]
    assert any("returns [4, 3], the fake [3, 3]" in m for m in rows), rows
    assert any("returns [10, 3], the fake [3, 3, 3]" in m for m in rows), rows
    # the kernel torch wrapped: its words ("adam", "lamb") reach the search, so eager calls return and compare
    upd = records["upd.default"]
    assert upd["status"] == "findings" and upd["eager"]["compared"] > 0, upd["eager"]
    assert not any("__dynamo_disable" in str(v.get("args")) for v in upd.get("variants", ())), upd["variants"]


def test_the_function_read_for_a_register_kernel_kernel_is_the_librarys():
    import torch

    from shapecheck._torch.library_impls import function_at, recording

    def kernel(name, g):
        return g

    lib = torch.library.Library("auditkeys_wrapped", "DEF")
    lib.define("upd(str name, Tensor g) -> Tensor")
    with recording():
        torch.library.register_kernel("auditkeys_wrapped::upd", "cpu", kernel, lib=lib)
    assert function_at(torch.ops.auditkeys_wrapped.upd.default, "CPU") is kernel
