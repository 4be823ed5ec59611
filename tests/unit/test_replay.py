"""Counterexamples are real: torch's own helpers (broadcasting) answer guard_or_false under unbacked sizes, and
a trace holds only where that answer does; every reported counterexample is replayed at static sizes."""

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import KERNELS, ROOT

CROSS = str(ROOT / "contracts" / "aten" / "linalg_cross.toml")
AK = KERNELS / "aten_kernels.py"


@pytest.mark.slow
def test_linalg_cross_broadcast_of_two_dynamic_dims_passes():
    """_broadcast_shapes assumes `B == 1` is false under unbacked sizes: the first trace's (B, 1, 3) held only
    where B != 1, and was compared with the contract at B=1, Bo=2 (a false SC002 and SC004). Both sides of
    torch's answer are explored now."""
    r = verify_op("aten::linalg_cross", contract=CROSS)
    assert r.verdict == Verdict.PASS, [v.message for v in r.violations]
    shared = next(c for c in r.cases if "shared" in c.case)
    assert shared.traces > 1 and all(p.status == "proved" for p in shared.paths)


@pytest.mark.slow
def test_a_candidate_built_on_broadcast_shapes_passes():
    r = verify_op("aten::linalg_cross", contract=CROSS, meta=f"{AK}:cross_broadcast")
    assert r.verdict == Verdict.PASS, [v.message for v in r.violations]


@pytest.mark.slow
def test_a_wrong_broadcast_is_found_at_a_real_point():
    r = verify_op("aten::linalg_cross", contract=CROSS, meta=f"{AK}:cross_keeps_self_shape")
    assert r.verdict == Verdict.FAIL
    bad = [v for v in r.violations if v.code == "SC002"]
    assert bad and not [v for v in r.violations if v.code == "SC004"]
    for v in bad:  # the kernel's output really differs there
        b, bo = v.counterexample["B"], v.counterexample["Bo"]
        want = (b, bo, 3) if "outer" in v.case else (max(b, bo), 1, 3)
        assert want != (b, 1, 3)


def test_a_finding_that_does_not_reproduce_is_inconclusive_not_a_violation(monkeypatch):
    """With torch's broadcasting answers ignored again (the old root cause), the analysis claims SC002 at B=1,
    Bo=2; the kernel at exactly that point returns the contract's shape, so the replay turns it into SC005."""
    from shapecheck._torch import core as C

    monkeypatch.setattr(C, "_LAYOUT_HELPERS", C._LAYOUT_HELPERS + (C.os.path.join(C.TORCH_DIR, "_refs"),))
    r = verify_op("aten::linalg_cross", contract=CROSS)
    assert r.verdict == Verdict.INCONCLUSIVE
    assert not [v for v in r.violations if v.code in ("SC001", "SC002", "SC004")]
    stale = [v for v in r.violations if "did not reproduce at" in v.message]
    assert stale and all(v.code == "SC005" for v in stale)
    assert any(v.counterexample == {"B": 1, "Bo": 2} and "as the contract says" in v.message for v in stale)


def test_replay_sees_the_reported_behaviour():
    from shapecheck.kernel import sources
    from shapecheck.kernel.load import load_target
    from shapecheck.prove.replay import run_at

    c, k = load_target("aten::linalg_cross", CROSS, sources.from_options(f"{AK}:cross_keeps_self_shape", None))
    shared = next(case for case in c.cases() if "shared" in case.id)
    assert run_at(k, shared, {"B": 1, "Bo": 2}).outputs == ((1, 1, 3),)
    assert run_at(k, shared, {"B": 2, "Bo": 3}).error.startswith("RuntimeError")


def _kernels():
    import ast

    gold = ROOT / "tests" / "golden" / "examples"
    out = [(f"golden/{p.name}", "aten::new_empty", str(gold / "new_empty.toml"), f"{p}:kernel", ())
           for p in sorted(gold.glob("sc00*.py"))]
    hidden = str(KERNELS / "hidden_case.toml")
    for fn, op in (("cross_broadcast", "linalg_cross"), ("cross_keeps_self_shape", "linalg_cross"),
                   ("conv_forgets_the_padding", "convolution"), ("ceil_planted_in_a_later_case", None),
                   ("branch_excluding_a_point", None), ("two_formulas_behind_one_return", None)):
        contract = str(ROOT / "contracts" / "aten" / f"{op}.toml") if op else hidden
        out.append((fn, f"aten::{op or 'new_empty'}", contract, f"{AK}:{fn}", ()))
    for name in ("pixel_shuffle", "index_select", "convolution", "constant_pad_nd", "linalg_cross"):
        out.append((name, f"aten::{name}", str(ROOT / "contracts" / "aten" / f"{name}.toml"), None, ()))
    sdpa = KERNELS / "sdpa_kernels.py"
    case = "rank=4,mask=bool,is_causal=false,dtype=float32,enable_gqa=false"
    for node in ast.parse(sdpa.read_text()).body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            out.append((node.name, "aten::_scaled_dot_product_attention_math_for_mps", None, f"{sdpa}:{node.name}",
                        (case,)))
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("label", "op", "contract", "meta", "cases"), _kernels(), ids=[k[0] for k in _kernels()])
def test_the_shipped_contracts_and_test_kernels_have_no_finding_that_does_not_reproduce(label, op, contract, meta,
                                                                                         cases):
    from shapecheck.prove.verify import Options

    r = verify_op(op, contract=contract, meta=meta, options=Options(jobs=1, cases=cases))
    assert not [v.message for v in r.violations if "did not reproduce" in v.message]


@pytest.mark.slow
def test_a_guard_that_torchs_dispatch_reaches_is_replayed_through_the_whole_run():
    """The replay's first runs pause the line tracer inside torch's calls (shallow: a third of the time). A guard
    in the kernel's own code that torch's dispatch reaches (a custom op's fake in the kernel's file) is not seen
    there: the whole runs decide, and the finding stays SC001 at its line, not SC005."""
    from shapecheck.contract.load import load_contract
    from shapecheck.kernel import sources
    from shapecheck.kernel.load import load_target
    from shapecheck.prove.replay import run_at
    from shapecheck.prove.verify import Options

    kernel_file = KERNELS / "guard_behind_dispatch.py"
    contract = str(ROOT / "tests" / "golden" / "examples" / "new_empty.toml")
    r = verify_op("aten::new_empty", contract=contract, meta=f"{kernel_file}:kernel", options=Options(jobs=1))
    assert r.verdict == Verdict.FAIL
    (v,) = r.violations
    assert v.code == "SC001" and v.location.function == "inner_fake" and "size[0] <= 8" in v.location.text
    _, k = load_target("aten::new_empty", contract, sources.from_options(f"{kernel_file}:kernel", None))
    case = next(iter(load_contract(contract).cases()))
    for point in (v.counterexample, v.witness):
        shallow, whole = run_at(k, case, point, shallow=True), run_at(k, case, point)
        assert shallow.outputs == whole.outputs and shallow.error == whole.error
        assert set(shallow.steps) <= set(whole.steps)
        assert v.location.line in {s[3] for s in whole.steps} - {s[3] for s in shallow.steps}


@pytest.mark.slow
def test_a_finding_whose_least_point_takes_a_static_branch_is_replayed_at_another_point():
    """The output is wrong at N = 1 and N = 2; at N = 1 the static run takes a branch the symbolic trace cannot
    (a plain int), and returns the contract's shape. The finding is not dropped to SC005: at N = 2 it reproduces,
    and it is reported there, its message redone for that point."""
    from shapecheck.prove.verify import Options

    contract = str(ROOT / "tests" / "golden" / "examples" / "new_empty.toml")
    r = verify_op("aten::new_empty", contract=contract, meta=f"{KERNELS / 'static_only_branch.py'}:kernel",
                  options=Options(jobs=1))
    assert r.verdict == Verdict.FAIL, [v.message for v in r.violations]
    (v,) = r.violations
    assert v.code == "SC002" and v.counterexample == {"N": 2}
    assert v.message.startswith("output 0 is (3,) but the contract's path only says (2,)"), v.message
    import json

    assert "region" not in json.loads(json.dumps(r.to_json()))["violations"][0]  # in-process only



@pytest.mark.slow
def test_an_error_of_the_trace_where_the_kernel_returns_a_shape_the_contract_denies_is_that_shape_finding(tmp_path):
    """polar's decomposition raises under unbacked sizes on a broadcast, and returns the broadcast shape with
    static ones: where the contract states the first operand's shape, that static output is the violation
    (SC002 at the point), not an SC007 that "did not reproduce" (inconclusive, exit 3, as before)."""
    from shapecheck.audit.schema_draft import draft_contract

    skeleton = draft_contract("aten::polar", trace=False)  # its dims, args and one path, outputs unspecified
    assert skeleton.count('outputs = ["unspecified"]') == 1 and "[domain]" not in skeleton
    contract = tmp_path / "polar.toml"
    contract.write_text(skeleton.replace('outputs = ["unspecified"]', 'outputs = ["(A0, A1)"]') + '\n[domain]\n'
                        'requires = ["A1 == B1 or A1 == 1 or B1 == 1", "A0 == B0 or A0 == 1 or B0 == 1"]\n')
    r = verify_op("aten::polar", contract=str(contract), options=Options(jobs=1))
    assert r.verdict is Verdict.FAIL
    shapes = {(v.counterexample["B0"], v.counterexample["B1"]): v.expr for v in r.violations if v.code == "SC002"}
    # each is a point where the broadcast takes the second operand's size; since torch's cached answers are seen
    # (hunt 53), the trace explores the broadcast's questions and states the output per region
    assert shapes and all((b0, b1) != (1, 1) and "contract (A0, A1)" in e for (b0, b1), e in shapes.items()), shapes
    assert not [v for v in r.violations if v.code in ("SC005", "SC007")]
