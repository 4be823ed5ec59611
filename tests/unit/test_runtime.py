"""One runtime reference serves `fuzz op` and `ref check`: the registry, the shared inputs, quirks and tolerance
table, and the same rule code for the same runtime defect in both commands."""

import math
import re

import pytest
import torch
from hypothesis import given, settings

import metal_ref
from shapecheck.contract.load import load_contract
from shapecheck.render.runtime import fuzz_text
from shapecheck.runtime import reference as runtime
from shapecheck.runtime.fuzz import FuzzOptions, check_examples, fuzz_op
from shapecheck.runtime.refcheck import check_point, ref_check
from shapecheck.runtime.reference import EagerReference, MetalReference, RuntimeReference, reference_for
from shapecheck.search.strategies import cases, example_at
from tests.conftest import SDPA_CONTRACT, SDPA_MPS

SDPA = load_contract(SDPA_CONTRACT)
F32 = "rank=4,mask=none,is_causal=false,dtype=float32,enable_gqa=false"


def _case(case_id):
    return next(c for c in SDPA.cases() if c.id == case_id)


def _path(case, path_id, era="current"):
    return next(p for p in case.paths if p.id == path_id and p.era == era)


def _stripped(tmp_path, old=None, new=None):
    """The shipped contract without its [[suppress]] tables (and with one text replaced)."""
    text = re.sub(r"\n\[\[suppress\]\]\n(?:[^\[\n][^\n]*\n)*", "\n", SDPA_CONTRACT.read_text())
    if old is not None:
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp_path / "c.toml"
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------------------------------------
# The registry and the shared inputs


def test_registry_gives_metal_ref_for_the_sdpa_op_and_a_reason_for_others():
    ref, why = reference_for(SDPA_MPS)
    assert isinstance(ref, MetalReference) and isinstance(ref, RuntimeReference) and why == ""
    assert isinstance(reference_for("aten._scaled_dot_product_attention_math_for_mps")[0], MetalReference)
    # any other op with a CPU kernel: its own eager kernel; an op with none (a CUDA-only op): none, and why
    assert isinstance(reference_for("aten::mm")[0], EagerReference)
    flash = "aten::_scaled_dot_product_flash_attention"
    assert reference_for(flash) == (None, f"no runtime reference for {flash} ({flash} has no cpu kernel)")
    none, why = reference_for(SDPA_MPS, device="mps")
    assert none is None and why.startswith(f"no runtime reference for {SDPA_MPS} on mps")
    assert MetalReference.available("aten::mm") is not None and MetalReference.available(SDPA_MPS) is None
    # the MPP path needs a GPU with Metal Performance Primitives: the reference for it dispatches there
    assert ref.for_path("mpp").has_mpp and ref.for_path("prefill") is ref
    assert ref.has_path("current", "general-chunked") and not ref.has_path("1999-01", "general")
    assert ref.path_id("vector_2pass") == "vector-2pass" and ref.runtime_path("vector-2pass") == "vector_2pass"


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(cases(SDPA, era="current"))
def test_both_commands_build_the_same_inputs(ex):
    """fuzz's examples and ref check's points get their tensors from the one construction."""
    ref = MetalReference()
    mine = ref.arguments(ex.case, ex.values, ex.seed)
    theirs = ex.arguments("cpu")
    assert mine.keys() == theirs.keys()
    for name, value in mine.items():
        if isinstance(value, torch.Tensor):
            assert value.dtype == theirs[name].dtype and torch.equal(value, theirs[name]), name
        else:
            assert value == theirs[name]
    mask = mine.get("attn_mask")
    if mask is not None and mask.dtype.is_floating_point:  # additive: finite where kept, -inf elsewhere
        assert bool((torch.isfinite(mask) | (mask == float("-inf"))).all())


def test_additive_masks_mix_finite_biases_and_masked_keys():
    case = _case("rank=4,mask=float,is_causal=false,dtype=float32,enable_gqa=false")
    mask = MetalReference().arguments(case, dict(B=2, H=2, Hk=2, L=8, S=64, E=4, Ev=4), seed=3)["attn_mask"]
    finite = mask[torch.isfinite(mask)]
    assert 0.6 < finite.numel() / mask.numel() < 0.9  # kept with probability 0.75
    assert bool((mask == float("-inf")).any()) and float(finite.abs().max()) > 0.5


# ---------------------------------------------------------------------------------------------------------
# Quirks reach both commands


def _prefill_point():
    case = _case("rank=4,mask=float,is_causal=false,dtype=float32,enable_gqa=false")
    return case, _path(case, "prefill"), dict(B=1, H=2, Hk=2, L=9, S=6, E=32, Ev=32)


@pytest.mark.slow
def test_prefill_mask_times_ln2_reaches_ref_check_and_fuzz(monkeypatch):
    case, path, sizes = _prefill_point()
    ref = MetalReference()
    args = ref.arguments(case, sizes, seed=5)
    out0 = metal_ref.run(**{k: args[k] for k in ("query", "key", "value", "attn_mask")}, era="current")[0]
    plain = metal_ref.math_reference(args["query"], args["key"], args["value"], args["attn_mask"])
    assert not torch.allclose(out0.double(), plain, atol=1e-3, equal_nan=True)  # the quirk shows at this point
    ex = example_at(case, sizes, seed=5)
    assert check_point(case, path, sizes, 5, False) == []
    assert check_examples(SDPA_MPS, [ex.text()], options=FuzzOptions(eras=("current",))).verdict == "pass"

    monkeypatch.setattr(runtime, "PREFILL_MASK_FACTOR", 1.0)  # the math without the quirk: both commands see it
    assert {f.code for f in check_point(case, path, sizes, 5, False)} == {"SC012"}
    (f,) = check_examples(SDPA_MPS, [ex.text()], options=FuzzOptions(eras=("current",))).failures
    assert f.check == "values" and f.code == "SC012" and f.runtime_paths == {"current": "prefill"}


def test_chunked_causal_per_chunk_reaches_ref_check_and_fuzz():
    case = _case("rank=4,mask=none,is_causal=true,dtype=float16,enable_gqa=false")
    path = _path(case, "general-chunked")
    sizes = dict(B=1, H=1, Hk=1, L=3069, S=4, E=2, Ev=2)
    ref = MetalReference()
    args = ref.arguments(case, sizes, seed=1)
    out0 = metal_ref.run(**{k: args[k] for k in ("query", "key", "value")}, is_causal=True, era="current")[0]
    whole = metal_ref.math_reference(args["query"], args["key"], args["value"], None, True)
    atol, rtol = ref.tolerance(args, "float16")
    # row 3068 starts the second chunk: it sees key 0 only, not keys 0..3 as one causal band would allow
    assert not torch.allclose(out0[0, 0, 3068].double(), whole[0, 0, 3068], atol=atol, rtol=rtol)
    assert check_point(case, path, sizes, 1, False) == []
    ex = example_at(case, sizes, seed=1)
    assert check_examples(SDPA_MPS, [ex.text()], options=FuzzOptions(eras=("current",))).verdict == "pass"


# ---------------------------------------------------------------------------------------------------------
# One tolerance table, one rule code per defect


class _Planted(MetalReference):
    """metal_ref with a planted runtime defect in output 0; counts the instances both commands make."""

    made = 0
    defect = "shape"

    def __init__(self, has_mpp=False):
        super().__init__(has_mpp)
        type(self).made += 1

    def run(self, args, era, path=None):
        out0, *rest = super().run(args, era, path)
        out0 = out0.unsqueeze(0) if self.defect == "shape" else out0 + 0.05
        return (out0, *rest)


@pytest.fixture
def planted(monkeypatch):
    monkeypatch.setattr(runtime, "REFERENCES", [_Planted])
    monkeypatch.setattr(_Planted, "made", 0)
    return _Planted


def _fuzz(**options):
    base = dict(examples=25, seed=4, eras=("2026-03",), cases=("dtype=float32",), verify_examples=False)
    return fuzz_op(SDPA_MPS, options=FuzzOptions(**{**base, **options}))


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_a_wrong_output0_shape_is_sc011_in_both_commands(planted):
    fuzzed = _fuzz()
    assert planted.made == 1  # fuzz took its reference from the registry
    (f,) = fuzzed.failures
    assert f.check == "runtime" and f.code == "SC011" and fuzzed.exit_code == 1
    assert "runtime (SC011 runtime-output-shape): " in fuzz_text(fuzzed)
    assert fuzzed.to_json()["failures"][0]["code"] == "SC011"
    checked = ref_check(SDPA, eras=("2026-03",), examples=2)
    assert planted.made == 2  # and so did ref check
    assert checked.verdict == "fail" and {x.code for x in checked.findings} == {"SC011"}


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_one_tolerance_table_decides_values_in_both_commands(planted, monkeypatch):
    monkeypatch.setattr(planted, "defect", "values")  # output 0 off by 0.05 everywhere
    (f,) = _fuzz().failures
    assert f.check == "values" and f.code == "SC012"
    assert {x.code for x in ref_check(SDPA, eras=("2026-03",), examples=2).findings} == {"SC012"}

    monkeypatch.setattr(runtime, "TOLERANCES", {d: (1.0, 1.0) for d in runtime.TOLERANCES})
    assert _fuzz().verdict == "pass"
    assert ref_check(SDPA, eras=("2026-03",), examples=2).verdict == "pass"


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_a_rejected_input_a_path_admits_is_sc014_in_both_commands(tmp_path):
    """Today's chunked branch raises for any mask; without the contract's suppression both commands fail it."""
    contract = _stripped(tmp_path)
    r = fuzz_op(SDPA_MPS, contract=str(contract), options=FuzzOptions(
        examples=15, seed=2, eras=("current",), path="general-chunked@current", cases=("rank=4,mask=bool",),
        verify_examples=False))
    (f,) = r.failures
    assert f.check == "runtime" and f.code == "SC014" and f.got == "RuntimeCheckError"
    assert f.runtime_paths == {"current": "general_chunked"} and f.paths == {"current": ["general-chunked"]}
    checked = ref_check(load_contract(contract), eras=("current",), examples=6)
    assert "SC014" in {x.code for x in checked.findings if x.path == "general-chunked"}
    # with the shipped suppression, fuzz counts it as an accepted note, as ref check does
    ok = fuzz_op(SDPA_MPS, options=FuzzOptions(examples=15, seed=2, eras=("current",), cases=("rank=4,mask=bool",),
                                               path="general-chunked@current", verify_examples=False))
    assert ok.verdict == "pass"
    assert any(n.endswith("accepted by the contract's [[suppress]] (SC014)") for n in ok.notes)


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_a_wrong_precondition_is_sc010_in_both_commands(tmp_path):
    contract = _stripped(tmp_path, 'vec_2603 = "L <= 8 and', 'vec_2603 = "L <= 16 and')
    r = fuzz_op(SDPA_MPS, contract=str(contract), options=FuzzOptions(
        examples=40, seed=1, eras=("2026-03",), path="vector-1pass@2026-03", cases=(F32,), verify_examples=False))
    (f,) = r.failures
    assert f.check == "runtime" and f.code == "SC010" and f.got == "general"
    assert 9 <= f.dims["L"] <= 16 and f.paths == {"2026-03": ["vector-1pass"]}
    checked = ref_check(load_contract(contract), eras=("2026-03",), examples=24)
    assert "SC010" in {x.code for x in checked.findings}


def test_tolerance_adds_the_score_rounding_term_to_the_table():
    case = _case("rank=4,mask=none,is_causal=false,dtype=float16,enable_gqa=false")
    args = MetalReference().arguments(case, dict(B=1, H=1, Hk=1, L=4, S=4, E=8, Ev=8), seed=0)
    atol, rtol = MetalReference().tolerance(args, "float16")
    assert (atol, rtol) > runtime.TOLERANCES["float16"] and rtol == runtime.TOLERANCES["float16"][1]
    q, k = args["query"].double(), args["key"].double()
    s_max = float((q @ k.transpose(-1, -2)).abs().max()) / math.sqrt(8)
    extra = math.expm1(torch.finfo(torch.float16).eps * s_max) * float(args["value"].abs().max())
    assert atol == pytest.approx(runtime.TOLERANCES["float16"][0] + extra)
