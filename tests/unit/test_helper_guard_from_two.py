"""A guard that torch's helper or a sub-op's C++ kernel raises in verify's unbacked trace is SC022 only where
export could install it: with both sides on the domain with every size from 2. torch 2.1-2.9's meta_conv
converts its output with ``out.to(memory_format=...)``, whose C++ kernel asks ``Co > 1`` (true for every size
export traces) and whether the output's spatial size is 1 (which sizes from 2 can make it: the exported
program then fails on those inputs)."""

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import KERNELS

META = f"{KERNELS / 'conv_memory_format.py'}:conv_to_format"


def _run(case):
    return verify_op("aten::convolution", meta=META, options=Options(cases=(case,), jobs=1))


@pytest.mark.slow
def test_a_guard_only_sizes_0_and_1_decide_is_not_a_finding():
    # k=1, p=0, s=1: the output is (N, Co, H, W): `Co > 1` and `H * W > 1` hold for every size from 2; strict
    # export succeeds, and so does verify (it was two SC022, failing where export passes)
    r = _run("k=1,p=0,s=1")
    assert r.verdict == Verdict.PASS, [(v.code, v.expr) for v in r.violations]


@pytest.mark.slow
def test_a_guard_sizes_from_2_reach_stays_sc022():
    # k=3, p=1, s=2: the output height (H - 1) // 2 + 1 is 1 at H = 2: export keeps the guard in the program,
    # which fails there; `Co > 1` is still no finding
    r = _run("k=3,p=1,s=2")
    # both are torch's whatever the kernel (finding F13: export's record of the output guards the output size
    # against 1 too), so the shipped contract suppresses SC022 with that reason: reported, suppressed
    assert {(v.code, v.expr) for v in r.violations} == {
        ("SC022", "((H - 1) // 2 + 1) * ((W - 1) // 2 + 1) > 1"), ("SC022", "(W - 1) // 2 + 1 != 1")}
    assert all("F13" in v.suppressed for v in r.violations) and r.verdict == Verdict.PASS


def test_torchs_refusal_is_named_only_for_the_guard_it_is_about():
    """hunt 37: the refusal of a guard over W alone is not the outcome of a guard over D, H and W, which export
    keeps as a check of the program's inputs (strict export succeeds with it)."""
    from shapecheck.prove.helper_guards import _first, _outcome

    refusal = ("Constraints violated (W)!\n  - Not all values of W = W in the specified range 3 <= W <= 4096 "
               "satisfy the generated guard ((-2) + W) != 1.")
    assert _first(refusal, [{"W"}]).startswith("torch: Not all values of W")
    assert _first(refusal, [{"D", "H", "W"}]) is None
    assert "keeps the guard as a check of the exported program's inputs" in _outcome(refusal, [{"D", "H", "W"}])
    assert "rejects the Dim range (torch: Not all values of W" in _outcome(refusal, [{"W"}])
    assert _first("export failed for another reason", [{"W"}]) == "torch: export failed for another reason"


def test_guards_grouped_at_one_line_are_refused_one_dim_a_line():
    """hunt 65: affine_grid_generator's ``W == 5; H == 4`` (linspace's steps, one line of the kernel) were said
    kept as a check of the program's inputs, where torch refuses both dims, one line each."""
    from shapecheck.prove.helper_guards import _outcome

    refusal = ("Constraints violated (H, W)! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
               "  - You marked H as dynamic but your code specialized it to be a constant (4).\n"
               "  - You marked W as dynamic but your code specialized it to be a constant (5).")
    said = _outcome(refusal, [{"W"}, {"H"}])
    assert said.startswith("torch.export rejects the Dim range (torch: You marked H as dynamic"), said
    assert "keeps the guard" in _outcome(refusal, [{"H", "W"}])  # no line about a guard over both
