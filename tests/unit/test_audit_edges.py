"""The audit's comparison with the eager kernel at the edge of each assert the trace saw (``differential.
boundaries``): the fake refuses there, so an eager kernel that returns is a check the fake has and the runtime
lacks (torch 2.13's conv_transpose on a zero-size output). And the argument variants that reach such an edge: an
int list off its trivial value alone, and with the first tensor a rank up. In-process (click's runner through
``main``); the libraries are small files written here."""

from __future__ import annotations

import json

import pytest

from shapecheck.audit.points import boundaries
from shapecheck.logic import expr as E
from tests.conftest import invoke


def _main(*argv: str) -> tuple[int, str, str]:
    res = invoke(*argv)
    return res.returncode, res.stdout, res.stderr


def _texts(r: str) -> list[list[str]]:
    return [[E.to_text(c) for c in conds] for conds in boundaries(E.parse(r))]


def test_an_assert_is_broken_just_past_its_edge():
    assert _texts("a > b") == [["a == b"]]
    assert _texts("a >= b + 2") == [["a == b + 2 - 1"]]
    assert _texts("a <= 3") == [["a == 4"]]
    assert _texts("a != b") == [["a == b"]]
    # any of them: every part at its edge at once (conv_transpose's "some output dim > 0")
    assert _texts("a > 1 or b > 1") == [["a == 1", "b == 1"]]
    # all of them: one part broken at a time, the others kept
    assert _texts("a > 1 and b < 4") == [["a == 1", "b < 4"], ["b == 4", "a > 1"]]
    assert _texts("a == b") == []  # an equality is broken by moving one side (draw_points)


SHRINK = '''
import torch

LIB = torch.library.Library("auditedge", "DEF")
LIB.define("strict(Tensor x, int[1] pad=1) -> Tensor")
LIB.define("exact(Tensor x, int[1] pad=1) -> Tensor")
LIB.define("padded(Tensor x, int[1] pad=0) -> Tensor")


def _shrink(x, pad=(1,)):
    # the eager kernel: an empty result where the padding eats the whole last dim, an error past that
    n = x.shape[-1] - 2 * pad[0]
    if n < 0:
        raise RuntimeError(f"pad {pad[0]} is too large for a last dim of {x.shape[-1]}")
    return x.narrow(-1, pad[0], n).clone()


LIB.impl("strict", _shrink, "CPU")
LIB.impl("exact", _shrink, "CPU")
LIB.impl("padded", _shrink, "CPU")


@torch.library.register_fake("auditedge::strict", lib=LIB)
def _(x, pad=(1,)):
    n = x.shape[-1] - 2 * pad[0]
    torch._check(n > 0, lambda: "output size is too small")  # refuses the empty result eager returns
    return x.new_empty((*x.shape[:-1], n))


def _exact(x, pad=(1,)):
    n = x.shape[-1] - 2 * pad[0]
    torch._check(n >= 0, lambda: "pad is too large")
    return x.new_empty((*x.shape[:-1], n))


torch.library.register_fake("auditedge::exact", _exact, lib=LIB)
torch.library.register_fake("auditedge::padded", _exact, lib=LIB)
'''


@pytest.mark.slow
def test_a_fake_that_refuses_at_the_edge_of_its_assert_where_eager_returns_is_a_finding(tmp_path):
    # at its default pad=[1], the edge of strict's assert is a last dim of 2: an empty result, which the eager
    # kernel returns and the fake refuses (no dim is 0 there, nor 1: the points each dim takes do not meet it).
    # exact's edge is a last dim of 1, where both refuse: no finding
    (tmp_path / "auditedge.py").write_text(SHRINK)
    code, out, err = _main("audit", "--import", str(tmp_path / "auditedge.py"), "--ops", "auditedge::*",
                           "--format", "json", "-j", "1", "--no-cache")
    recs = {r["op"]: r for r in json.loads(out)["ops"]}
    strict = recs["auditedge::strict.default"]
    rejects = [f for f in strict["findings"] if f["class"] == "fake-rejects"]
    assert rejects, strict
    (f,) = rejects[:1]
    last = max(k for k in f["counterexample"] if k.startswith("x_"))
    assert f["counterexample"][last] == 2, f
    exact = recs["auditedge::exact.default"]
    assert not [f for f in exact["findings"] if f["class"] == "fake-rejects"], exact["findings"]
    assert code == 1, err


@pytest.mark.slow
def test_an_int_list_is_also_varied_alone_and_with_the_first_tensor_a_rank_up(tmp_path):
    # padded's pad is [0] by default: it is tried at [1] alone, and at [1] with x a rank up (conv_transpose2d's
    # zero-size output is refused by the fake for a batched input only)
    (tmp_path / "auditedge.py").write_text(SHRINK)
    code, out, err = _main("audit", "--import", str(tmp_path / "auditedge.py"), "--ops", "auditedge::padded*",
                           "--format", "json", "-j", "1", "--no-cache")
    (rec,) = json.loads(out)["ops"]
    rank = len(rec["example"].split("]")[0].split(","))
    labels = [v["args"] for v in rec["variants"]]
    assert "pad=[1]" in labels and f"pad=[1], x=Tensor[rank {rank + 1}, float32]" in labels, labels
    assert code in (0, 1), err


@pytest.mark.slow
def test_a_broadcasting_op_is_explored_on_the_general_side_of_torch_s_0_1_branches():
    # eq.Tensor's fake broadcasts through torch's helpers, which ask guard_or_false(size == 1) on each axis of
    # each input: with both sides of each explored, 12 traces left it "explored in part" (inconclusive). The
    # sides at size 1 are export's specialisation, compared with the eager kernel at those sizes instead
    code, out, err = _main("audit", "--ops", "aten::eq.Tensor", "--format", "json", "-j", "1", "--no-cache")
    (rec,) = json.loads(out)["ops"]
    assert rec["status"] != "inconclusive" and not any("stopped after" in n for n in rec["notes"]), rec["notes"]
    assert any("0/1 sides of branches in torch's own helpers" in n for n in rec["notes"]), rec["notes"]
    assert rec["eager"]["points"] >= 5 and code in (0, 1), err


PREMISED = '''
import torch

LIB = torch.library.Library("auditpremise", "DEF")
LIB.define("wide(Tensor x) -> Tensor")
LIB.impl("wide", lambda x: x.clone(), "CPU")


@torch.library.register_fake("auditpremise::wide", lib=LIB)
def _(x):
    if x.shape[0] > 5:  # the kernel's own branch; the example (every size 3) lies on the other side
        torch._check(x.shape[0] % 2 == 0, lambda: "a wide x has an even number of rows")
    return x.new_empty(x.shape)
'''


@pytest.mark.slow
def test_an_assert_made_only_where_the_example_is_not_is_required_with_its_premise(tmp_path):
    # x_0 % 2 == 0 is asserted only where x_0 > 5: no demand on inputs like the example's (x_0 = 3), so it is
    # required with the region as its premise
    (tmp_path / "auditpremise.py").write_text(PREMISED)
    code, out, err = _main("audit", "--import", str(tmp_path / "auditpremise.py"), "--ops", "auditpremise::*",
                           "--format", "json", "-j", "1", "--no-cache", "--variants", "0")
    (rec,) = json.loads(out)["ops"]
    texts = [r["expr"] for r in rec["requires"]]
    assert "x_0 % 2 == 0" not in texts and "x_0 <= 5 or x_0 % 2 == 0" in texts, texts
    assert code in (0, 1), err


@pytest.mark.slow
def test_a_branch_on_a_dim_the_kernel_ties_to_another_is_found_on_sides_that_keep_the_tie():
    """A hunt's wrong PASS: the two sides of ``y_0 <= 8`` were drawn with only y_0 moved, so x_0 stayed 3 and the
    kernel's own ``torch._check(y_0 == x_0)`` refused both; the branch was never reported, while strict export
    with one Dim for both refuses it. The sides now meet what the kernel demanded before the guard, or (a check
    made after it) what its regions demand."""
    from shapecheck.audit.run import AuditOptions, run_audit

    records = {r["op"]: r for r in run_audit(("relbr::*",), ("tests/kernels/relation_branches.py",), jobs=1,
                                             options=AuditOptions(differential=False)).records}
    for name, line in (("check_then_branch", "if y.shape[0] <= 8:"), ("branch_then_check", "if x.shape[0] <= 8:")):
        [f] = records[f"relbr::{name}.default"]["findings"]
        assert f["class"] == "constant-comparison" and f["location"]["text"] == line
        cex, wit = f["counterexample"], f["witness"]
        assert cex["x_0"] == cex["y_0"] > 8 and wit["x_0"] == wit["y_0"] <= 8  # the tie kept on both sides
    only = records["relbr::check_only.default"]
    assert only["findings"] == [] and [r["expr"] for r in only["requires"]] == ["y_0 == x_0"]


@pytest.mark.slow
def test_the_contiguity_checks_behind_contiguous_are_no_finding_as_export_accepts_them():
    """A hunt's false alarms on torchao's qscaled_dot_product: ``.contiguous()`` of a transposed 4-D input gave an
    SC037 ``max(1, q_2) * max(1, q_3) != q_3`` and five SC031, all guard_or_false answers of torch's C++ contiguity
    check at the kernel's line. Sizes from 2 settle each, and strict export accepts every dim dynamic. What is left
    is true of that fake: where a transposed dim has size 1, ``.contiguous()`` returns q itself, so the fake's
    output is a view of q where the eager kernel's clone is not (SC044, what CrossRefFakeMode's aliasing check
    says); an empty q, which has no element to share, is no finding."""
    import torch

    from shapecheck.audit.run import run_audit

    [rec] = run_audit(("contig::*",), ("tests/kernels/contiguous_fake.py",), jobs=1).records
    [alias] = rec["findings"]
    assert alias["class"] == "eager-alias" and 1 in (alias["counterexample"]["q_1"], alias["counterexample"]["q_2"])
    assert 0 not in alias["counterexample"].values() and "the fake a view of q" in alias["message"], alias
    assert any("sizes from 2, as torch.export traces, settle it" in n for n in rec["notes"])

    class Call(torch.nn.Module):
        def forward(self, q):
            return torch.ops.contig.transposed_copy(q)

    dims = {"q": {i: torch.export.Dim(f"d{i}") for i in range(4)}}
    torch.export.export(Call(), (torch.randn(2, 5, 7, 3),), dynamic_shapes=dims, strict=True)  # raises if it refuses


@pytest.mark.slow
def test_a_python_composite_kernel_of_a_library_is_named_python_and_located_at_its_line():
    """A hunt on torchao: its CompositeImplicitAutograd Python functions, registered through a torch.library.Library,
    were "C++ CompositeImplicitAutograd decomposition" with no kernel line, and optimum-quanto's
    CompositeExplicitAutograd ones "Python Meta kernel". The dispatch table's tag and registration file say which."""
    from shapecheck.audit.run import run_audit

    [rec] = run_audit(("ciapy::*",), ("tests/kernels/cia_library.py",), jobs=1).records
    assert "a Python function registered through torch.library" in rec["kernel"] and "C++" not in rec["kernel"]
    assert rec["kernel_kind"] == "python"
    [f] = rec["findings"]
    assert f["class"] == "constant-comparison" and f["location"]["file"].endswith("tests/kernels/cia_library.py")
    assert f["location"]["text"] == "if x.shape[0] <= 8:"


@pytest.mark.slow
def test_an_out_overloads_own_fake_is_the_kernel_audited_and_located():
    """A hunt on bitsandbytes: ``.out`` overloads were located at the default overload's fake, which the kernel
    lookup found by the op's name without its overload."""
    from shapecheck.audit.run import run_audit

    records = {r["op"]: r for r in run_audit(("outov::*",), ("tests/kernels/out_overload.py",), jobs=1).records}
    assert records["outov::scale.out"]["definition"]["function"] == "_out_fake"
    assert records["outov::scale.default"]["definition"]["function"] == "_default_fake"


@pytest.mark.slow
def test_a_variant_keeps_its_first_points_and_a_region_torch_finds_empty_is_skipped():
    """Hunt 24 on this session's points: the co-moved points of a broken assert (every dim at the example's
    value moved together) came first and took a variant's six points, so conv_transpose3d's unbatched input with
    padding [1, 1, 1] (the fake returns [3, 0, 3, 3], the eager kernel says the output is too small) went
    uncompared; and a variant under the op's own trace bound reached a region torch's ranges find empty
    (AssumptionRejected), which lost linalg_pinv's whole record (not run, exit 3)."""
    from shapecheck.audit.run import run_audit

    conv, pinv = run_audit(("aten::conv_transpose3d.input", "aten::linalg_pinv.rcond_tensor"), jobs=1).records
    small = [f for f in conv["findings"] if f["code"] == "SC041" and f["message"].startswith("with padding=[1, 1, 1]:")]
    assert small and "Output size is too small" in small[0]["message"], conv["findings"]
    assert pinv["status"] != "not-run" and [f["code"] for f in pinv["findings"]] == ["SC031", "SC031"], pinv["notes"]


def test_a_value_the_path_fixes_has_its_zero_edge_drawn_where_the_fakes_asserts_hold():
    """im2col without its "blocks >= 1" check, at kernel 2, dilation 2, stride 2 (hunt 28): the path fixes the block
    count ``(self_1 - 1) // 2 == 1`` and its outputs are constants, so no output formula had a zero edge; the
    count's own 0 lies at H = 1 (the fake's ``self_1 >= 2`` refuses it, as eager does) and H = 2 (the fake
    returns an empty output where eager raises): the point drawn is H = 2, where the fake's asserts hold."""
    from shapecheck.audit.points import zero_edges
    from shapecheck.logic.solver import Bounds, Solver

    solver = Solver([Bounds(n, 0, 64) for n in ("self_0", "self_1", "self_2")])

    def near(conds, keep=frozenset(), loose=True):
        return solver.small_model(conds)

    paths = [{"when": "self_0 != 0 and (self_1 - 1) // 2 == 1 and (self_2 - 1) // 2 == 1", "outputs": ["(4 * self_0, 1)"]}]
    requires = [E.parse("self_1 >= 2"), E.parse("self_2 >= 2")]
    points = zero_edges(paths, {"self_0", "self_1", "self_2"}, near, requires)
    assert {p["self_1"] for p in points if (p["self_1"] - 1) // 2 == 0} == {2}, points
    assert any((p["self_2"] - 1) // 2 == 0 and p["self_2"] == 2 for p in points), points


@pytest.mark.slow
def test_im2col_without_its_block_count_check_is_found_by_the_audit(tmp_path):
    """A copy of decompositions.py whose im2col lacks the "blocks >= 1" check returns an empty output where the
    eager kernel raises; the audit passed it (hunt 28, a historical bug of this kind)."""
    import shutil

    import torch._decomp.decompositions as dd

    copy = tmp_path / "torch" / "_decomp" / "decompositions.py"
    copy.parent.mkdir(parents=True)
    text = open(dd.__file__).read()
    start = text.index("    torch._check(\n        all(c > 0 for c in output_size),", text.index("def im2col("))
    end = text.index("\n    )\n", start) + len("\n    )\n")
    assert "the calculated shape of the array of sliding blocks" in text[start:end]
    copy.write_text(text[:start] + text[end:])
    code, out, _ = _main("audit", "--meta-source", str(copy), "--ops", "aten::im2col", "-j", "1", "--no-cache",
                         "--format", "json")
    (rec,) = json.loads(out)["ops"]
    assert code == 1 and any(f["class"] == "fake-accepts" for f in rec["findings"]), rec["findings"]
    shutil.copy(dd.__file__, copy)  # the unmodified file: no such finding
    code, out, _ = _main("audit", "--meta-source", str(copy), "--ops", "aten::im2col", "-j", "1", "--no-cache",
                         "--format", "json")
    (rec,) = json.loads(out)["ops"]
    assert not any(f["class"] == "fake-accepts" for f in rec["findings"]), rec["findings"]


RANKS = '''
import torch

LIB = torch.library.Library("auditranks", "DEF")
LIB.define("dist(Tensor x1, Tensor x2) -> Tensor")
LIB.define("dist_ok(Tensor x1, Tensor x2) -> Tensor")
LIB.define("scaled(Tensor x) -> Tensor")
LIB.define("scaled_ok(Tensor x) -> Tensor")


def _dist(x1, x2):  # the eager kernel: the batch dims of both broadcast, as cdist's
    return torch.cdist(x1, x2)


def _scaled(x):  # the eager kernel: any rank, a 0-d input too
    return x * 2


for name, fn in (("dist", _dist), ("dist_ok", _dist), ("scaled", _scaled), ("scaled_ok", _scaled)):
    LIB.impl(name, fn, "CPU")


@torch.library.register_fake("auditranks::dist", lib=LIB)
def _(x1, x2):  # the batch dims of x1 only
    return x1.new_empty((*x1.shape[:-1], x2.shape[-2]))


@torch.library.register_fake("auditranks::dist_ok", lib=LIB)
def _(x1, x2):
    batch = torch.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    return x1.new_empty((*batch, x1.shape[-2], x2.shape[-2]))


@torch.library.register_fake("auditranks::scaled", lib=LIB)
def _(x):  # a special case of its own that breaks a 0-d input
    return x.new_empty((x.shape[0], *x.shape[1:]))


@torch.library.register_fake("auditranks::scaled_ok", lib=LIB)
def _(x):
    return x.new_empty(x.shape)
'''


@pytest.mark.slow
def test_the_first_tensor_0_d_and_the_second_a_rank_up_are_variants(tmp_path):
    """A fake that takes the batch dims of its first operand only (hunt 28's cdist), and one that breaks on a 0-d
    input: no variant lowered the first tensor's rank or raised the second's, so both passed."""
    (tmp_path / "auditranks.py").write_text(RANKS)
    code, out, err = _main("audit", "--import", str(tmp_path / "auditranks.py"), "--ops", "auditranks::*",
                           "--format", "json", "-j", "1", "--no-cache")
    recs = {r["op"].split(".")[0]: r for r in json.loads(out)["ops"]}
    dist = [f for f in recs["auditranks::dist"]["findings"] if f["class"] == "eager-shape"]
    assert dist and "x2=Tensor[rank 3" in json.dumps(dist[0]), recs["auditranks::dist"]["findings"]
    scaled = [f for f in recs["auditranks::scaled"]["findings"] if f["class"] == "fake-rejects"]
    assert scaled and "rank 0" in json.dumps(scaled[0]), recs["auditranks::scaled"]["findings"]
    for ok in ("auditranks::dist_ok", "auditranks::scaled_ok"):  # (dist_ok lacks cdist's dtype and column checks)
        assert not [f for f in recs[ok]["findings"] if f["class"] in ("eager-shape", "fake-rejects")], recs[ok]["findings"]
    assert code == 1, err


def test_a_rank_variants_repeat_of_a_guard_is_the_same_finding():
    """A 4-D query's ``query_2 <= 8`` is the 3-D query's ``query_1 <= 8`` at the same line: one report (the SDPA-MPS
    audit listed 4 such repeats, and 4 more once the second tensor got a rank variant)."""
    from shapecheck.audit.explore import Finding
    from shapecheck.audit.keys import finding_keys

    three = {"query_0": 1, "query_1": 9, "query_2": 64, "key_0": 1, "key_1": 1, "key_2": 64}
    four = {"query_0": 1, "query_1": 1, "query_2": 9, "query_3": 64, "key_0": 1, "key_1": 1, "key_2": 64}

    def same(a, pa, b, pb):
        return bool(finding_keys(Finding("constant-comparison", a, None, pa, None, ""))
                    & finding_keys(Finding("constant-comparison", b, None, pb, None, "")))

    assert same("query_1 <= 8", three, "query_2 <= 8", four)  # a dim read from the end
    assert same("query_1 <= key_1", three, "query_2 <= key_1", four)
    assert same("query_0 == 3", three, "query_0 == 3", four)  # a batch dim, read from the start
    assert same("u4 == 2", three, "u7 == 2", four)


PICK = '''
import torch

LIB = torch.library.Library("auditpick", "DEF")
LIB.define("pick(Tensor x, Tensor index) -> Tensor")
LIB.impl("pick", lambda x, index: torch.index_select(x, 0, index), "CPU")  # a 0-d x takes a one-element index


@torch.library.register_fake("auditpick::pick", lib=LIB)
def _(x, index):  # torch's meta index_select without its 0-d special case (hunt 28's b04)
    size = list(x.shape)
    size[0] = index.numel()
    return x.new_empty(size)
'''


@pytest.mark.slow
def test_a_fake_that_breaks_on_every_0_d_input_is_found_through_the_variants_own_search(tmp_path):
    """The 0-d variant keeps the first inputs' 3-element index, which eager refuses there too; its own search (a
    quarter of the budget) never asked the eager kernel about a call the fake refused, so the one-element index
    eager takes was not found and the op passed."""
    (tmp_path / "auditpick.py").write_text(PICK)
    code, out, err = _main("audit", "--import", str(tmp_path / "auditpick.py"), "--ops", "auditpick::pick",
                           "--format", "json", "-j", "1", "--no-cache")
    (rec,) = json.loads(out)["ops"]
    rejects = [f for f in rec["findings"] if f["class"] == "fake-rejects"]
    assert rejects and "rank 0" in json.dumps(rejects[0]), rec["findings"]
    assert code == 1, err
