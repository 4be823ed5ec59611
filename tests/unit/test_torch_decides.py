"""What torch decides on its own (SC016) and guard_or_false as torch means it, each checked against a real
torch.export(strict=True) with dynamic dims."""

import itertools

import pytest

from shapecheck._torch import core as C
from shapecheck._torch import static as CS
from shapecheck.findings import Verdict
from shapecheck.logic import expr as E
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import KERNELS, ROOT, beyond_output_record

POOL = str(ROOT / "contracts" / "aten" / "avg_pool2d.toml")
POOL_KERNELS = KERNELS / "pooling_kernels.py"
EMPTY = str(KERNELS / "empty_batch.toml")
EMPTY_KERNELS = KERNELS / "empty_batch.py"
POOL_CASES = list(itertools.product([False, True], [2, 3], [1, 2], [0, 1]))  # ceil_mode, kernel, stride, padding


FORMATS = ("contiguous", "channels_last")  # the contract's input layouts


def case_id(ceil_mode, kernel, stride, padding, fmt="contiguous"):
    return f"ceil_mode={str(ceil_mode).lower()},kernel={kernel},stride={stride},padding={padding},memory_format={fmt}"


def by_case(report, code, fmt="contiguous"):
    """The cases of one input layout with a finding of ``code``, F13's output-record guards aside (export succeeds
    there; its program refuses a size whose output is 1: tests/unit/test_export_output_metadata.py)."""
    return {v.case for v in beyond_output_record(report.violations) if v.code == code
            and v.case.endswith(f"memory_format={fmt}")}


def export_fails(ceil_mode, kernel, stride, padding, fn=None, fmt="contiguous") -> str | None:
    """torch.export(strict=True) of aten.avg_pool2d with N, C, H, W dynamic over the contract's ranges (H and
    W from the least size the requires allow), on an input in ``fmt``; ``fn`` installed as the op's meta
    kernel. The error, or None."""
    import torch
    from torch.export import Dim, export

    class Pool(torch.nn.Module):
        def forward(self, x):
            return torch.ops.aten.avg_pool2d(x, [kernel, kernel], [stride, stride], [padding, padding], ceil_mode)

    least = max(1, kernel - 2 * padding)
    shapes = {"x": {0: Dim("N", min=0), 1: Dim("C", min=1), 2: Dim("H", min=least), 3: Dim("W", min=least)}}
    formats = {"contiguous": torch.contiguous_format, "channels_last": torch.channels_last}
    x = torch.randn(2, 3, 10, 11).contiguous(memory_format=formats[fmt])
    C.reset_dynamo()
    try:
        if fn is None:
            export(Pool(), (x,), dynamic_shapes=shapes, strict=True)
        else:
            with C.meta_kernel_installed(torch.ops.aten.avg_pool2d.default, fn):
                export(Pool(), (x,), dynamic_shapes=shapes, strict=True)
    except Exception as err:  # noqa: BLE001 - the outcome under test
        return f"{type(err).__name__}: {err}"
    return None


@pytest.fixture(scope="module")
def pool_report():
    return verify_op("aten::avg_pool2d", contract=POOL, options=Options(full=True))


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_sc016_fires_exactly_where_export_fails_on_the_installed_pooling_kernel(pool_report):
    """The ceil-mode branch of torch's pooling meta is dead for kernel 3 / stride 2 (and kernel 2, padding 0):
    z3 proves it, torch cannot, and export rejects the dynamic H. Where the branch is real (kernel 2, stride 2,
    padding 1) the branch is in torch's helper pooling_output_shape, SC022 (the kernel's own line: SC001);
    everywhere else export succeeds and nothing is reported."""
    for fmt in FORMATS:  # the same cases in both layouts: export with a channels_last input fails alike
        failing = {case_id(*c, fmt=fmt) for c in POOL_CASES if export_fails(*c, fmt=fmt) is not None}
        sc016 = by_case(pool_report, "SC016", fmt)
        branch = by_case(pool_report, "SC001", fmt) | by_case(pool_report, "SC022", fmt)
        assert case_id(True, 3, 2, 0, fmt) in sc016 and case_id(True, 3, 2, 1, fmt) in sc016
        assert case_id(True, 2, 2, 1, fmt) in branch
        assert sc016 | branch == failing and not sc016 & branch
        assert not by_case(pool_report, "SC005", fmt) and not by_case(pool_report, "SC002", fmt)
    # torch's layout helper asks C * H * W == 1 on unbacked channels_last sizes (F9): only sizes 0 and 1 decide
    # it, and export decides it from Dim(min=2), so it is no finding (it was SC022, and failed where export passes)
    assert not any("C * H * W" in v.expr for v in pool_report.violations)
    # the shipped contract accepts these findings with reasons (the gate over contracts/ passes)
    assert all(v.suppressed for v in pool_report.violations) and pool_report.verdict == Verdict.PASS


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_sc016_names_the_guard_its_line_and_no_counterexample(pool_report):
    v = next(v for v in pool_report.violations if v.code == "SC016" and v.case == case_id(True, 3, 2, 0)
             and v.dims == ("H",))
    # located at the kernel's line that calls torch's helper pooling_output_shape, where the check is
    assert v.location.line and "pooling_output_shape(" in v.location.text
    assert v.counterexample == {}
    assert "always false for H in [3, 2147483647]" in v.message and "torch.export installs the guard" in v.message
    assert "static arguments" in v.fix and "sym_min" in v.fix
    assert E.evaluate(v.node, {"H": 3}) is False and E.evaluate(v.node, {"H": 1000001}) is False


@pytest.mark.parametrize("fn, ceil_cases_failing", [("avg_pool2d_branchy", {(2, 0), (2, 1), (3, 0), (3, 1)}),
                                                    ("avg_pool2d_static", {(2, 1)}),
                                                    ("avg_pool2d_sym_min", set())])
@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_suggested_rewrites_pass_verify_and_export(fn, ceil_cases_failing):
    """The two rewrites SC016 suggests, on the pooling case: the branch behind a condition on the static
    arguments (dead where z3 proved it dead), and the rule as torch.sym_min. Verify and export agree on each
    stride-2 ceil case; a remaining finding is the real branch (SC001)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("pooling_kernels", POOL_KERNELS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    r = verify_op("aten::avg_pool2d", contract=POOL, meta=f"{POOL_KERNELS}:{fn}", options=Options(full=True))
    found = {v.case for v in r.violations if v.code in ("SC001", "SC016")}
    assert not by_case(r, "SC005") and not by_case(r, "SC002")
    for k, p in [(2, 0), (2, 1), (3, 0), (3, 1)]:
        fails = export_fails(True, k, 2, p, getattr(module, fn)) is not None
        assert fails == ((k, p) in ceil_cases_failing) == (case_id(True, k, 2, p) in found)
    assert bool(beyond_output_record(r.violations)) == bool(ceil_cases_failing)


# ---------------------------------------------------------------------------------------------------------
# torch's own answer, through the compatibility module


def test_static_decision_is_torchs_value_range_reasoning():
    import sympy

    h = sympy.Symbol("H", integer=True)
    ranges = {"H": (2, 2**31 - 1), "C": (2, 100), "Ci": (2, 400)}
    assert CS.static_decision(h >= 1, ranges, {}, []) is True
    assert CS.static_decision(E.parse("H * C == 0"), ranges, {}, []) is False
    assert CS.static_decision(E.parse("2 * (H // 2) - 2 >= H"), ranges, {}, []) is None  # z3 proves it false
    assert CS.static_decision(E.parse("Ci == 4 * C"), ranges, {"Ci": E.parse("4 * C")}, []) is True
    assert CS.static_decision(E.parse("H <= 8"), ranges, {}, [E.parse("H <= 8")]) is True  # an earlier guard


@pytest.mark.slow
def test_torch_that_cannot_answer_is_inconclusive_never_pass(monkeypatch):
    """Without torch's static evaluation the obligation is SC005, not a pass and not SC016."""
    monkeypatch.setattr(CS, "_static_env", lambda: object())  # a torch without ShapeEnv._maybe_evaluate_static
    r = verify_op("aten::avg_pool2d", contract=POOL, options=Options(cases=(case_id(True, 3, 2, 0),)))
    assert r.verdict == Verdict.INCONCLUSIVE
    assert not by_case(r, "SC016") and any("torch" in v.message for v in r.violations if v.code == "SC005")


# ---------------------------------------------------------------------------------------------------------
# guard_or_false as torch means it: the fallback side must be right on the whole domain


def run_empty(fn):
    return verify_op("sctest::attend_rows", contract=EMPTY, meta=f"{EMPTY_KERNELS}:{fn}")


@pytest.mark.slow
def test_guard_or_false_fix_whose_fallback_is_right_at_batch_0_passes():
    r = run_empty("fallback_right")
    assert r.verdict == Verdict.PASS and r.cases[0].traces == 1


def test_guard_or_false_fix_whose_fallback_is_wrong_fails_at_batch_0():
    r = run_empty("fallback_wrong")
    assert r.verdict == Verdict.FAIL and {v.code for v in r.violations} == {"SC002"}
    v = r.violations[0]
    assert v.counterexample == {"B": 0, "L": 1, "E": 1}
    assert "output 0 is (1, 1, 1) but the contract's path rows says (0, 1, 1)" in v.message
    assert "guard_or_false(B * L * E == 0) takes its fallback side (False" in v.message


def test_the_passing_guard_or_false_fix_exports_and_runs_at_batch_0_and_2():
    import importlib.util

    import torch
    from torch.export import Dim, export

    spec = importlib.util.spec_from_file_location("empty_batch", EMPTY_KERNELS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lib = torch.library.Library("sctest", "FRAGMENT")  # noqa: TOR901 - a throwaway op for this test
    lib.define("attend_rows(Tensor x) -> Tensor")
    lib.impl("attend_rows", lambda x: x.clone(), "CPU")
    torch.library.register_fake("sctest::attend_rows", module.fallback_right, lib=lib)

    class Attend(torch.nn.Module):
        def forward(self, x):
            return torch.ops.sctest.attend_rows(x)

    C.reset_dynamo()
    ep = export(Attend(), (torch.randn(2, 3, 4),), dynamic_shapes={"x": {0: Dim("B", min=0, max=65536)}},
                strict=True)
    for b in (0, 2):
        assert ep.module()(torch.randn(b, 3, 4)).shape == (b, 3, 4)


@pytest.mark.slow
def test_guard_or_false_that_export_installs_stays_sc001():
    """guard_or_false(L > 8): torch cannot decide it from L's Dim range, so export installs it."""
    from tests.unit.test_verify import run

    r = run("branch_with_guard_or_false")
    assert r.verdict == Verdict.FAIL and any(v.code == "SC001" and v.expr == "L > 8" for v in r.violations)
    assert run("settled_guard_or_true").verdict == Verdict.PASS


@pytest.mark.slow
def test_guard_or_false_settled_by_z3_but_not_by_torch_is_sc016_as_export_says():
    import torch
    from torch.export import Dim, export
    from torch.fx.experimental.symbolic_shapes import guard_or_false

    r = verify_op("aten::new_empty", contract=str(ROOT / "tests" / "golden" / "examples" / "new_empty.toml"),
                  meta=f"{EMPTY_KERNELS}:hidden_dead_fallback")
    assert r.verdict == Verdict.FAIL and [v.code for v in r.violations] == ["SC016"]
    assert "guard_or_* condition 2 * (N // 2) - 2 >= N is always false" in r.violations[0].message

    class Same(torch.nn.Module):
        def forward(self, x):
            n = x.size(0)
            if guard_or_false(2 * (n // 2) - 2 >= n):
                return x.new_empty((n - 1,))
            return x.new_empty((n,))

    C.reset_dynamo()
    with pytest.raises(Exception, match="Not all values of N"):
        export(Same(), (torch.randn(5),), dynamic_shapes={"x": {0: Dim("N", min=1)}}, strict=True)


@pytest.mark.parametrize("path", sorted((ROOT / "contracts" / "aten").glob("_scaled_dot_product_*.toml")),
                         ids=lambda p: p.stem)
@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_the_sdpa_family_still_passes_with_no_sc016(path):
    import tomllib

    op = tomllib.loads(path.read_text())["op"]
    r = verify_op(op, contract=str(path))
    assert r.verdict == Verdict.PASS and not any(v.code == "SC016" for v in r.violations)
