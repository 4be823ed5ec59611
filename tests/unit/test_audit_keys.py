"""One report per way a fake differs from its eager kernel, not one per line (hunt 43, bitsandbytes): two checks at
a fake's ``def`` line are two findings, a disagreement the hook's sample shows is not hidden behind one at made-up
inputs, a kernel registered with ``torch.library.register_kernel`` is read through torch's wrapper, and a finding with no
size to name never says that it holds at every input. Kernels: tests/kernels/audit_keys.py."""

from __future__ import annotations

import pytest

from shapecheck.audit.explore import Finding
from shapecheck.audit.keys import finding_key

LIBRARY = "tests.kernels.audit_keys"


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


@pytest.mark.slow
def test_a_samples_finding_is_hidden_only_by_another_samples():
    """Without a hook, the 3-D variant's disagreement repeats the first inputs' (the output's shape, at the same
    line) and is not reported again; a sample of the hook's is the user's own call: its finding stands."""
    from shapecheck.audit.run import AuditOptions, run_audit

    def shapes(**kw):
        run = run_audit(("auditkeys::rows*",), (LIBRARY,), jobs=1, options=AuditOptions(**kw))
        (rec,) = run.records
        return [f["message"] for f in rec["findings"] if f["class"] == "eager-shape"]

    plain = shapes()
    assert any("returns [4, 3], the fake [3, 3]" in m for m in plain) and len(plain) == 1, plain
    hooked = shapes(samples="tests.kernels.audit_keys:samples")
    assert any("sample 2 of the samples hook" in m and "returns [9, 8], the fake [2, 4, 8]" in m for m in hooked), hooked


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
    rowvec = [f["message"] for f in records["rowvec.default"]["findings"]]
    assert any("with A=Tensor[rank 1" in m and "the fake [3]" in m for m in rowvec), rowvec
    quant = [f["message"] for f in records["quant.default"]["findings"]]
    assert any("float64" in m and "only supports 16/32-bit floats" in m for m in quant), quant
    # a size the error asks to divide the last dim is tried: traced and compared, its requirement stated
    blocks = records["blocks32.default"]
    assert blocks["eager"]["compared"] > 0 and any("% 32 == 0" in r for r in map(str, blocks["requires"])), blocks
    # the second tensor laid out otherwise too: the output follows its layout, the fake's is contiguous
    follow = [f["expr"] for f in records["follow.default"]["findings"] if f["class"] == "eager-strides"]
    assert any("with v transposed" in e for e in follow), records["follow.default"]["findings"]
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
