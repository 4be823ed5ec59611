"""fuzz names and accepts a guard as verify does (hunt 49): a ``[[suppress]]`` with a ``message`` covers only the
guards whose text holds it (fuzz passed a parity branch that verify and strict export fail, on a suppression meant
for torch.export's output record), and a helper's guard that holds on the whole domain but that torch cannot decide
is SC016, not SC022 "does not hold" (fuzz failed where verify, with the contract's SC016 suppression, passed)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT

SHIPPED = (ROOT / "contracts" / "aten" / "avg_pool2d.toml").read_text(encoding="utf-8")
PARITY = '''[[suppress]]
rule = "SC022"
case = "ceil_mode=true,kernel=2,stride=2,padding=1"'''
RECORD = '''[[suppress]]
rule = "SC022"
message = "torch.export's record of the op's output"'''


def _without(tmp_path, *blocks):
    text = SHIPPED
    for block in blocks:
        start = text.index(block)
        end = text.find("[[suppress]]", start + 1)
        text = text[:start] + (text[end:] if end != -1 else "")
    path = tmp_path / "avg_pool2d.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.slow  # fuzz runs
def test_a_suppression_with_a_message_covers_only_the_guards_that_say_it(tmp_path):
    from shapecheck.options import VerifyOptions
    from shapecheck.prove.verify import verify_op
    from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op

    contract = _without(tmp_path, PARITY)  # the record's suppression (a message) stays
    case = "ceil_mode=true,kernel=2,stride=2,padding=1"
    assert verify_op("aten::avg_pool2d", contract=contract, options=VerifyOptions(cases=(case,))).verdict == "fail"
    r = fuzz_op("aten::avg_pool2d", contract=contract, options=FuzzOptions(examples=60, seed=1, cases=(case,),
                                                                           verify_examples=False))
    assert r.verdict == "fail" and r.failures[0].code.value == "SC022", r.notes
    assert "2 * (" in r.failures[0].got and "record" not in r.failures[0].message


@pytest.mark.slow  # a fuzz run
def test_a_helper_guard_that_always_holds_is_sc016_and_the_contracts_sc016_suppression_covers_it(tmp_path):
    from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op

    contract = _without(tmp_path, PARITY, RECORD)
    r = fuzz_op("aten::avg_pool2d", contract=contract,
                options=FuzzOptions(examples=60, seed=1, cases=("ceil_mode=true,kernel=3,stride=2,padding=1",),
                                    verify_examples=False))
    assert r.verdict == "pass", [f.message for f in r.failures]
    assert any("accepted by the contract's [[suppress]] (SC016)" in n for n in r.notes), r.notes


@pytest.mark.slow  # a fuzz run
def test_the_shipped_convolution_contract_passes_fuzz_as_it_passes_verify_and_export():
    """hunt 50: fake_impls' conv asks torch's C++ code for a backend (with mkldnn on: ``N < 16``, which
    torch.export, tracing with mkldnn off, never installs) and for memory formats (``Ci > 1`` at a size of 1 kept
    symbolic, which export makes a constant); fuzz failed the shipped contract with SC001s where strict export and
    verify pass."""
    from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op

    r = fuzz_op("aten::convolution", options=FuzzOptions(examples=120, seed=1, cases=("k=1,p=0,s=1",)))
    assert r.verdict == "pass", [f.message for f in r.failures]


@pytest.mark.slow  # a fuzz run
def test_torchs_guard_at_an_example_whose_output_is_1_wide_is_left_to_the_examples_where_it_is_wider():
    """fake_impls' conv converts its output's memory format, and torch's C++ contiguity test asks whether a 3 by
    3 input's 1 by 1 output is 1 by 1 (``max(1, H - 2) * max(1, W - 2) <= 1``): torch.export makes such an output
    size a constant (F13), and verify runs export's trace where it is 2 or more. fuzz failed the shipped contract's
    k=3 cases with SC001 at fake_impls.py where verify passes (and strict export from a 5 by 5 example)."""
    from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op

    r = fuzz_op("aten::convolution", options=FuzzOptions(examples=100, seed=1, cases=("k=3,p=0,s=1",),
                                                         verify_examples=False))
    assert r.verdict == "pass", [f.message for f in r.failures]
    assert any("an output size is 0 or 1 and torch" in n for n in r.notes), r.notes


def test_a_guard_asked_by_torchs_cpp_code_is_told_from_a_python_branch():
    import torch

    from shapecheck._torch.backed import BackedRun
    from shapecheck._torch.core import Own

    def kernel(x):
        if x.shape[0] > 2:  # Python's branch
            pass
        x.is_contiguous(memory_format=torch.channels_last)  # torch's C++ contiguity test
        return x

    run = BackedRun(Own(frozenset({__file__}), frozenset({kernel.__code__})), specialize_zero_one=False)
    x = run.empty([run.dim("N", 3), run.dim("C", 4), run.dim("H", 5), run.dim("W", 6)], "float32")
    run.run(kernel, [x], {})
    native = {str(g.expr): g.native for g in run.guards}
    assert any(not v for k, v in native.items() if "> 2" in k or "2 <" in k), native
    assert any(native.values()), native


def test_the_backends_export_turns_off_are_switched_without_a_warning_and_restored():
    """``torch.backends.mkldnn.flags`` sets oneDNN's TF32 flag too, which warned on every verify (a fresh clone's
    README command printed it); the switches alone are set, and put back."""
    import warnings

    import torch

    from shapecheck._torch.quiet import export_backends

    before = torch._C._get_mkldnn_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with export_backends():
            assert not torch._C._get_mkldnn_enabled() and not torch._C._get_nnpack_enabled()
    assert torch._C._get_mkldnn_enabled() == before
