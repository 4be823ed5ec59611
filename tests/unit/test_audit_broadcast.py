"""Broadcasting is no strict equality. Under unbacked sizes torch's broadcasting helpers (``_broadcast_shapes``,
fake_impls' ``infer_size``) take ``guard_or_false(size == 1)`` as False and then ``torch._check(a == b)``: the op
demands only ``a == b or a == 1 or b == 1`` (eager and FakeTensorMode take ``[6, 8] * [6, 1]``). Such an assert is
told by its stack, reported as ``a == b (or broadcast: 1)``, drafted as the disjunction, and the comparison with
the eager kernel draws points with either side at 1. In-process; the library is a small file written here."""

from __future__ import annotations

import json

import pytest
import torch

from tests.conftest import invoke

SCALED = '''
import torch

LIB = torch.library.Library("auditbcast", "DEF")
LIB.define("scaled(Tensor w, Tensor scales) -> Tensor")
LIB.impl("scaled", lambda w, scales: w * scales, "CompositeExplicitAutograd")
# optimum-quanto's qbytes_mm: the weights scaled per row (broadcast), then a matmul whose inner-size check reads the
# broadcast size, which the unbacked trace names scales_1
LIB.define("scaled_mm(Tensor A, Tensor B, Tensor scales) -> Tensor")
LIB.impl("scaled_mm", lambda A, B, scales: torch.matmul(A, (scales * B).t()), "CompositeExplicitAutograd")
'''


def _asserts(fn, ranks: list[int]) -> list[tuple[str, str | None]]:
    """(torch's assert, the broadcasting helper that made it or None) of ``fn`` on fresh unbacked sizes."""
    from shapecheck._torch import audit as CA
    from shapecheck._torch import core as C

    with C.TraceEnv(set()) as env:
        args = [CA.empty([env.size(0, 2**31 - 1) for _ in range(r)], "float32") for r in ranks]
        env.mark_baseline()
        fn(*args)
        return [(str(expr), C.broadcasting(frames)) for expr, frames in env.kernel_asserts()]


@pytest.mark.slow
def test_an_assert_of_torch_s_broadcasting_is_told_by_its_stack():
    refs = _asserts(lambda a, b: torch.ops.aten.where.self(a > 0, a, b), [2, 2])  # _refs._broadcast_shapes
    fast = _asserts(lambda a, b: torch.ops.aten.mul.Tensor(a, b), [2, 2])  # fake_impls.infer_size
    assert refs and all(h and h.startswith("_broadcast_shapes at torch/_refs/") for _, h in refs), refs
    assert fast and all(h and h.startswith("infer_size at torch/_subclasses/fake_impls.py") for _, h in fast), fast
    # reshape's infer_size (in _prims_common) also asserts two sizes equal: a demand, not broadcasting
    view = _asserts(lambda a, b: torch.ops.aten.reshape(a, [b.shape[0]]), [1, 1])
    assert view and all(h is None for _, h in view), view


def test_a_broadcast_requires_is_a_disjunction_as_a_fact():
    from shapecheck.audit.explore import parsed_requires
    from shapecheck.logic import expr as E

    facts = parsed_requires([("w_1 == scales_1 (or broadcast: 1)", None, ""), ("x_0 == 3", None, ""),
                             ("(raised) RuntimeError: no", None, "")])
    assert [E.to_text(f) for f in facts] == ["w_1 == scales_1 or w_1 == 1 or scales_1 == 1", "x_0 == 3"]


@pytest.mark.slow
def test_a_broadcasting_kernel_is_reported_and_drafted_with_its_size_1_sides(tmp_path):
    (tmp_path / "auditbcast.py").write_text(SCALED)
    res = invoke("audit", "--import", str(tmp_path / "auditbcast.py"), "--ops", "auditbcast::scaled.*", "--format",
                 "json", "-j", "1", "--no-cache", "--draft", str(tmp_path / "drafts"))
    (rec,) = json.loads(res.stdout)["ops"]
    texts = [r["expr"] for r in rec["requires"]]
    assert "w_1 == scales_1 (or broadcast: 1)" in texts and "w_0 == scales_0 (or broadcast: 1)" in texts, texts
    assert not any(t in ("w_1 == scales_1", "scales_1 == w_1", "w_0 == scales_0") for t in texts), texts
    assert not any(t.startswith("(broadcastable)") for t in texts), texts  # torch's u-named error, said already
    assert rec["status"] == "relation-only" and not rec["findings"] and res.returncode == 0, (rec, res.stderr)
    draft = (tmp_path / "drafts" / "auditbcast" / "scaled.default.toml").read_text()
    assert '"A1 == B1 or A1 == 1 or B1 == 1"' in draft and '"A0 == B0 or A0 == 1 or B0 == 1"' in draft, draft
    assert '"A1 == B1",' not in draft and '"A0 == B0",' not in draft, draft


def test_the_eager_kernel_is_compared_where_one_side_is_1():
    """The points drawn for the comparison: the broadcast relation lets a dim go to 1 with its partner at the
    example (``[3, 3] * [3, 1]``, eager and FakeTensorMode take it), where the strict equality pinned both to 1."""
    from shapecheck.audit.explore import AuditExplorer, parsed_requires
    from shapecheck.audit.inputs import OpInputs
    from shapecheck.audit.points import draw_points

    inputs = OpInputs("x::y", "schema", (("w", False, ("tensor", ("w_0", "w_1"), (3, 3), "float32")),
                                         ("scales", False, ("tensor", ("scales_0", "scales_1"), (3, 3), "float32"))))
    near = AuditExplorer(None, inputs).near  # type: ignore[arg-type] - its points only, no kernel
    strict = draw_points(inputs, [], near, parsed_requires([("w_1 == scales_1", None, "")]))
    assert {"w_0": 3, "w_1": 3, "scales_0": 3, "scales_1": 1} not in strict, strict
    points = draw_points(inputs, [], near, parsed_requires([("w_1 == scales_1 (or broadcast: 1)", None, "")]))
    assert {"w_0": 3, "w_1": 3, "scales_0": 3, "scales_1": 1} in points, points
    assert {"w_0": 3, "w_1": 1, "scales_0": 3, "scales_1": 3} in points, points


@pytest.mark.slow
def test_an_assert_on_a_broadcast_size_is_premised_on_no_size_1_side(tmp_path):
    """mm's ``A_1 == scales_1`` after ``scales * B`` holds only where the broadcast took no size-1 side (a scales
    of one column takes A_1 == B_1): it is required with that premise, and the trace's output formula is checked
    only there (at ``scales_1 = 1`` it said (A_0, scales_0) where the eager kernel returns (A_0, B_0): SC043)."""
    (tmp_path / "auditbcast.py").write_text(SCALED)
    res = invoke("audit", "--import", str(tmp_path / "auditbcast.py"), "--ops", "auditbcast::scaled_mm*", "--format",
                 "json", "-j", "1", "--no-cache", "--variants", "0")
    (rec,) = json.loads(res.stdout)["ops"]
    texts = [r["expr"] for r in rec["requires"]]
    assert "scales_1 != B_1 or A_1 == scales_1" in texts and "A_1 == scales_1" not in texts, texts
    assert not rec["findings"] and rec["status"] == "relation-only", rec["findings"]
    assert all("scales_0 == B_0" in p["when"] or "B_0 == scales_0" in p["when"] for p in rec["paths"]), rec["paths"]


def test_each_dim_of_a_wide_op_is_drawn_at_1_and_past_the_example():
    """An op with many dims (torch-harmonics' neighbourhood attention: 15 tensor dims and 4 int ones) spent the
    comparison's points on every dim at 0, and a batch dim at 1 beside another input's was never compared (its
    broadcast, eager (2, ...) against the fake's (1, ...), went unseen): each dim gets its 0, 1 and past points."""
    from shapecheck.audit.explore import AuditExplorer
    from shapecheck.audit.inputs import OpInputs
    from shapecheck.audit.points import draw_points

    args = tuple((n, False, ("tensor", tuple(f"{n}_{i}" for i in range(4)), (1, 2, 2, 2), "float32"))
                 for n in ("kw", "vw", "qw", "bias"))
    inputs = OpInputs("x::y", "samples", (*args, ("heads", False, ("sym", "heads", 1))))
    near = AuditExplorer(None, inputs).near  # type: ignore[arg-type] - its points only, no kernel
    points = draw_points(inputs, [], near, [])
    example = dict(inputs.dims())
    for d in example:
        for v in (0, 1, example[d] + 2):
            assert {**example, d: v} in points, (d, v, len(points))


ONE_SIDE = '''
import torch

LIB = torch.library.Library("onesided", "DEF")
LIB.define("mm(Tensor A, Tensor B, Tensor scales) -> Tensor")
# optimum-quanto's qbytes_mm, distilled: the eager kernel scales the product's columns, the fake scales B's rows
LIB.impl("mm", lambda A, B, scales: (A @ B.t()) * scales.t(), "CPU")


def mm_fake(A, B, scales):
    torch._check(A.shape[1] == B.shape[1])
    w = scales * B
    return A.new_empty(A.shape[0], w.shape[0])


torch.library.register_fake("onesided::mm", mm_fake, lib=LIB)


def samples(op):
    return [((torch.randn(4, 8), torch.randn(6, 8), torch.rand(6, 1)), {})]  # a per-row scale: [6, 1]
'''


@pytest.mark.slow
def test_a_sample_on_the_size_1_side_of_a_broadcast_is_explored_on_the_general_side(tmp_path, monkeypatch):
    # a hunt on optimum-quanto: with the sample's scale [6, 1] only the side at 1 of torch's broadcast was traced
    # (the 0/1 sides are left to export's specialisation), so scales [6, K] never was (the hunt's wheel said exit 0,
    # where at K = 2 and A_0 = 4 the eager kernel raises and the fake returns; the points drawn now find that)
    res, rec = _sampled(tmp_path, monkeypatch, "onesided", ONE_SIDE)
    # export's side, sizes past 1, is traced too (not only the example's side at 1)
    assert any("scales_1 != 1" in p["when"] for p in rec["paths"]), rec["paths"]
    accepts = [f for f in rec["findings"] if f["code"] == "SC041"]
    assert res.returncode == 1 and accepts, (res.returncode, rec["findings"], rec["notes"])
    assert accepts[0]["counterexample"]["scales_1"] >= 2, accepts[0]["counterexample"]


ROW_SCALE = '''
import torch

LIB = torch.library.Library("rowscale", "DEF")
LIB.define("rowscale(Tensor x, Tensor s) -> Tensor")


def rowscale(x, s):
    if s.dim() != 2 or s.shape[1] != 1 or s.shape[0] != x.shape[0]:
        raise RuntimeError("per-row scale only")
    return x * s


def rowscale_fake(x, s):  # broadcasts first, then demands the scale's one column: the kernels agree everywhere
    y = x * s
    torch._check(s.shape[1] == 1, lambda: "per-row scale only")
    torch._check(s.shape[0] == x.shape[0], lambda: "per-row scale only")
    return torch.empty_like(y)


LIB.impl("rowscale", rowscale, "CPU")
torch.library.register_fake("rowscale::rowscale", rowscale_fake, lib=LIB)


def samples(op):
    return [((torch.randn(4, 8), torch.rand(4, 1)), {})]
'''


@pytest.mark.slow
def test_a_size_1_dim_the_op_demands_stays_traced_on_its_own_side(tmp_path, monkeypatch):
    # hunt 24: with only export's side past 1 explored (c41dd4c), where this fake raises, the op read as not traced
    # (exit 3); the example's side at 1 is explored too
    res, rec = _sampled(tmp_path, monkeypatch, "rowscale", ROW_SCALE)
    assert res.returncode == 0 and rec["status"] == "relation-only" and rec["finished"], (rec["status"], rec["notes"])
    assert any("s_1 == 1" in p["when"] for p in rec["paths"]), rec["paths"]


def _sampled(tmp_path, monkeypatch, name: str, source: str):
    """(the process result, the op's record) of ``audit --import NAME --samples NAME:samples --variants 0``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    res = invoke("audit", "--import", name, "--samples", f"{name}:samples", "--variants", "0", "--format", "json",
                 "-j", "1", "--no-cache", cwd=tmp_path)
    (rec,) = json.loads(res.stdout)["ops"]
    return res, rec
