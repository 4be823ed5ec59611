"""ref check and fuzz op against the op's eager kernel on contracts the SDPA family does not exercise: a dim that
only the domain and the outputs name, relations between dims, an eager kernel that is only a stub, and a guard
the contract accepts with a [[suppress]]."""

import pytest

from shapecheck.contract.load import load_contract
from shapecheck.findings import Verdict
from shapecheck.logic import expr as E
from shapecheck.logic.solver import Bounds, Solver
from shapecheck.rules import RuleCode
from shapecheck.runtime.refcheck import points_for_path, ref_check
from tests.conftest import ROOT, invoke

CDIST = """
schema = 1
op = "aten::_cdist_forward"

[dims]
A0 = { min = 0, max = 4096 }
A1 = { min = 0, max = 4096 }
B0 = { min = 0, max = 4096 }
B1 = { min = 0, max = 4096 }

[choices]
dtype = ["float32"]

[domain]
requires = ["A1 == B1"]

[[args]]
name = "x1"
kind = "tensor"
dtype = "dtype"
shape = "(A0, A1)"

[[args]]
name = "x2"
kind = "tensor"
dtype = "dtype"
shape = "(B0, B1)"

[[args]]
name = "p"
kind = "float"
value = 2.0

[[args]]
name = "compute_mode"
kind = "none"

[[paths]]
id = "all"
when = "true"
outputs = ["(A0, B0)"]
"""


def _points(contract, spread):
    solver = Solver([Bounds(d.name, d.min, d.max) for d in contract.dims])
    return points_for_path(contract, "default", contract.paths[0].id, 24, 0, solver, spread=spread)


@pytest.mark.slow
def test_a_relation_between_dims_still_gets_points_drawn_in_every_dim(tmp_path):
    path = tmp_path / "cdist.toml"
    path.write_text(CDIST)
    c = load_contract(path)
    pts = _points(c, spread=True)
    # before: every dim drawn at once broke A1 == B1, and only the least point (all 0) was left
    assert len(pts) == 24
    assert len({tuple(s.values()) for _, _, s in pts}) == 24
    assert all(s["A1"] == s["B1"] for _, _, s in pts)
    assert sum(1 for _, _, s in pts if s["A0"] > 1 and s["B0"] > 1 and s["A1"] > 1) >= 10
    r = ref_check(c, examples=24, seed=0)
    assert r.verdict == Verdict.PASS and r.paths[0].points == 24


@pytest.mark.slow
def test_a_dim_only_the_domain_and_outputs_name_gets_a_value():
    c = load_contract(ROOT / "contracts" / "aten" / "pixel_shuffle.toml")  # C: in `Ci == C * r * r` and the output
    for spread in (False, True):
        pts = _points(c, spread)
        assert pts and all("C" in s for _, _, s in pts)
        assert all(E.evaluate(case.domain, s) is True for case, _, s in pts)
    r = ref_check(c, examples=12, seed=0)  # was exit 2: "unbound names ['C'] in 'Ci == C * 2 * 2'"
    assert r.verdict == Verdict.PASS and r.paths[0].points == 12


def test_an_eager_stub_that_is_not_implemented_is_not_the_input_refused():
    # aten::_scaled_dot_product_fused_attention_overrideable's CPU kernel is a stub for privateuse1 backends:
    # NotImplementedError on every input. Before, ref check reported 24 SC014 "runtime rejects" and failed.
    r = invoke("ref", "check", "aten::_scaled_dot_product_fused_attention_overrideable", "--examples", "4")
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stdout.startswith("INCONCLUSIVE") and "SC014" not in r.stdout
    assert "the eager kernel on cpu is not implemented" in r.stdout


@pytest.mark.slow
def test_fuzz_takes_a_guard_the_contract_suppresses_as_a_note():
    # the shipped contract accepts F3's E == Ev guard of torch's helper with a [[suppress]] of SC022: verify and
    # gate pass it; fuzz op failed on it
    r = invoke("fuzz", "op", "aten::_scaled_dot_product_fused_attention_overrideable", "--examples", "12",
               "--seed", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "accepted by the contract's [[suppress]] (SC022)" in r.stdout


@pytest.mark.slow
def test_each_side_of_a_reject_regions_or_is_tried_alone():
    # hunt 65: `H < oh + k or W < ow + k - 1` is one too wide on H; every point z3 gave lay at W = 1, where the
    # runtime refuses the width, so the H side was never tried alone and the wrong region passed
    c = load_contract(str(ROOT / "tests" / "kernels" / "hunt65_fmp_wide_reject.toml"))
    r = ref_check(c, examples=24, seed=0)
    wrong = [f for f in r.findings if f.code is RuleCode.RUNTIME_REJECTS]
    assert r.verdict is Verdict.FAIL and wrong, [(f.code, f.sizes) for f in r.findings]
    assert all(f.sizes["H"] == 3 and f.sizes["W"] >= 4 for f in wrong), [f.sizes for f in wrong]
    # where the runtime runs the input, the meta kernel accepting it agrees with it: no SC021 "where the runtime
    # raises" beside the SC014 (hunt 66)
    both = [f for f in r.findings if f.code is RuleCode.META_ACCEPTS_REJECTED_INPUT and f.sizes in [w.sizes for w in wrong]]
    assert not both, [(f.code, f.sizes) for f in both]
