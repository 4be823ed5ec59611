"""--explore path maps, agreement with torch.export, explanations and fixes (issue 3)."""

import json
import sys

import pytest

import shapecheck
from shapecheck.contract.model import bind_case
from shapecheck.findings import Verdict
from shapecheck.logic import expr as E
from shapecheck.logic.solver import Bounds, Outcome, Solver
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import KERNELS, ROOT, SDPA_MPS, invoke

K = KERNELS / "sdpa_kernels.py"
BOOL4 = "rank=4,mask=bool,is_causal=false,dtype=float32,enable_gqa=false"
SEED = "rank=4,mask=float,is_causal=false,dtype=bfloat16,enable_gqa=false"


def _solver(contract):
    return Solver([Bounds(d.name, d.min, d.max) for d in contract.dims])


def _equivalent(solver, domain, a, b):
    return (solver.implies([domain, a], b).outcome == Outcome.PROVED
            and solver.implies([domain, b], a).outcome == Outcome.PROVED)


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_regressed_kernel_splits_three_ways_with_correct_regions(sdpa_contract):
    r = shapecheck.explore_op(SDPA_MPS, meta=f"{K}:regressed", options=Options(cases=(BOOL4,), max_traces=64))
    pm = r.cases[0].path_map
    assert pm is not None and pm.covered and not pm.truncated
    assert len(pm.paths) == 3
    by_rank1 = {p.outputs[1].count(",") + 1: p for p in pm.paths}
    two_pass = by_rank1[5]  # output 1 is the 5-D partials
    assert two_pass.outputs[1] == "(B, H, L, 32, E)"
    case = bind_case(sdpa_contract, dict(rank=4, mask="bool", is_causal=False, dtype="float32", enable_gqa=False))
    s = _solver(sdpa_contract)
    vec = E.parse("L <= 8 and L <= S and E == Ev and E in (64, 96, 128)")
    assert _equivalent(s, case.domain, E.parse(two_pass.region), E.conj([vec, E.parse("S >= 1024")]))
    others = [p for p in pm.paths if p is not two_pass]
    general = next(p for p in others if "Ev" in p.outputs[0].split(",")[-1])
    one_pass = next(p for p in others if p is not general)
    assert _equivalent(s, case.domain, E.parse(one_pass.region), E.conj([vec, E.parse("S < 1024")]))
    assert _equivalent(s, case.domain, E.parse(general.region), E.negate(vec))
    for p in pm.paths:
        region = E.parse(p.region)
        assert E.evaluate(region, p.example) is True and E.evaluate(case.domain, p.example) is True
        assert p.overlaps and all(o.out0_matches for o in p.overlaps)
    assert {o.path for o in two_pass.overlaps} == {"vector-2pass@2026-03", "vector-2pass@current"}
    # the general and vector formulas differ where E != Ev: a shape-polymorphism break in output 0; the two
    # vector paths differ in output 1 (the 5-D partials): a break too, anywhere
    out0 = [b for b in pm.breaks if b.output == 0]
    assert out0 and all(b.point["E"] != b.point["Ev"] for b in out0)
    assert [(b.a, b.b) for b in pm.breaks if b.output == 1] == [tuple(sorted((two_pass.id, one_pass.id)))]


@pytest.mark.slow
def test_installed_kernel_is_one_path_covering_the_domain():
    r = shapecheck.explore_op(SDPA_MPS, options=Options(cases=(BOOL4,)))
    pm = r.cases[0].path_map
    assert pm.covered and len(pm.paths) == 1 and pm.paths[0].region == "true" and not pm.breaks


@pytest.mark.slow
def test_exploration_terminates_and_reports_truncation():
    r = shapecheck.explore_op(SDPA_MPS, meta=f"{K}:regressed", options=Options(cases=(BOOL4,), max_traces=5))
    pm = r.cases[0].path_map
    assert pm.truncated and pm.traces == 5
    assert not pm.covered and pm.uncovered_example


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_explore_cli_text_and_json():
    res = invoke("verify", "op", SDPA_MPS, "--meta", f"{K}:regressed", "--case", BOOL4, "--explore",
                 "--max-traces", "64", "--format", "json")
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    ex = doc["cases"][0]["explore"]
    assert ex["covered"] and len(ex["meta_paths"]) == 3
    assert {"region", "example", "outputs", "overlaps"} <= set(ex["meta_paths"][0])
    text = invoke("verify", "op", SDPA_MPS, "--meta", f"{K}:regressed", "--case", BOOL4, "--explore",
                  "--max-traces", "64").stdout
    assert "path maps (--explore):" in text and "S >= 1024" in text and "shape-polymorphism break" in text


# ---- torch.export agreement ---------------------------------------------------------------------------

sys.path.insert(0, str(ROOT / "bench"))


@pytest.mark.slow
def test_seed_reproduced_exactly_both_ways():
    import torch
    from seed_export import export_dynamic

    from shapecheck._torch import core as C
    from tests.kernels.sdpa_kernels import regressed

    op = torch.ops.aten._scaled_dot_product_attention_math_for_mps.default
    with C.meta_kernel_installed(op, regressed):
        with pytest.raises(Exception, match=r"Constraints violated \(seq\)"):
            export_dynamic(1, 64)
    C.reset_dynamo()
    assert verify_op(SDPA_MPS, meta=f"{K}:regressed", options=Options(cases=(SEED,))).verdict == Verdict.FAIL
    ep = export_dynamic(1, 64)  # the installed, fixed kernel again
    # the op has no CPU kernel, so check the exported graph rather than running it: seq stays symbolic
    # over [1, 64] and output 0 is (1, 4, seq, 128)
    (vr,) = ep.range_constraints.values()
    assert int(vr.lower) == 1 and int(vr.upper) == 64
    out_node = next(n for n in ep.graph.nodes if n.op == "output")
    shape = out_node.args[0][0].meta["val"].shape
    assert isinstance(shape[2], torch.SymInt) and (shape[0], shape[1], shape[3]) == (1, 4, 128)
    assert verify_op(SDPA_MPS, options=Options(cases=(SEED,))).verdict == Verdict.PASS


@pytest.mark.slow
def test_confirm_export_agrees_on_the_seed_case():
    bad = verify_op(SDPA_MPS, meta=f"{K}:regressed", options=Options(cases=(SEED,), confirm_export=True))
    x = bad.cases[0].export
    assert x.ran and x.succeeded is False and x.agrees is True and "Constraints violated" in x.message
    good = verify_op(SDPA_MPS, options=Options(cases=(SEED,), confirm_export=True))
    y = good.cases[0].export
    assert y.ran and y.succeeded is True and y.agrees is True
    assert set(y.to_json()) >= {"ran", "succeeded", "agrees", "message"}


@pytest.mark.slow
def test_branch_on_L_eq_1_is_an_explained_disagreement():
    r = verify_op(SDPA_MPS, meta=f"{K}:guard_L_eq_1", options=Options(cases=(SEED,), confirm_export=True))
    assert r.verdict == Verdict.FAIL
    x = r.cases[0].export
    assert x.ran and x.succeeded is True and x.agrees is False
    assert "0/1" in x.explanation and "L == 1" in x.explanation


# ---- fixes ---------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("fn,code,words", [
    ("regressed", "SC001", "path-independent shape"),
    ("specialize_int_L", "SC003", "SymInt directly"),
    ("check_L_le_4096", "SC004", "contract precondition"),
    ("branch_changes_shape", "SC001", "Dim('L', min=1, max=8)"),
])
def test_fix_suggestions_by_kind(fn, code, words):
    r = verify_op(SDPA_MPS, meta=f"{K}:{fn}", options=Options(cases=(SEED,)))
    v = next(v for v in r.violations if v.code == code)
    assert words in v.fix, v.fix
    if fn == "regressed":
        assert "(B, H, L, Ev)" in v.fix


def test_export_failures_caused_by_shapecheck_are_recognised_in_the_chain():
    """dynamo wraps what a traced function raises; an error of shapecheck's own argument filling must still
    be found (and raised), never read as "export failed"."""
    from shapecheck.errors import InternalError
    from shapecheck.prove.export import _shapecheck_error

    ours = InternalError("filling failed")
    try:
        try:
            raise ours
        except InternalError as inner:
            raise RuntimeError("dynamo: an exception was raised while tracing") from inner
    except RuntimeError as wrapped:
        assert _shapecheck_error(wrapped) is ours
    assert _shapecheck_error(RuntimeError("export's own failure")) is None
