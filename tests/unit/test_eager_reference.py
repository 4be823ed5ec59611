"""The op's own eager kernel as the runtime reference (issue 15, point 5): fuzz op compares every output of
the meta kernel with the real kernel's at every drawn point (shape, dtype, significant strides, which side
raises), without any layout in the contract."""

import pytest

from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op
from shapecheck.runtime.reference import EagerReference, MetalReference, outputs_differ, reference_for
from tests.conftest import ROOT, SDPA_MPS, invoke
from tests.kernels.permuted_ops import CONTRACT

INDEX_SELECT = ROOT / "contracts" / "aten" / "index_select.toml"


@pytest.fixture(scope="module")
def permuted(tmp_path_factory):
    import tests.kernels.permuted_ops  # noqa: F401 - registers the custom ops

    d = tmp_path_factory.mktemp("eager")
    for name in ("heads_first", "heads_first_fixed"):
        (d / f"{name}.toml").write_text(CONTRACT.format(name=name))
    return d


def test_the_reference_is_the_eager_kernel_for_any_op_with_one_and_metal_ref_for_mps():
    assert isinstance(reference_for(SDPA_MPS)[0], MetalReference)
    ref, why = reference_for("aten::index_select")
    assert isinstance(ref, EagerReference) and why == "" and "eager kernel on cpu" in ref.describe(())
    none, why = reference_for("aten::_scaled_dot_product_cudnn_attention")
    assert none is None and "has no cpu kernel" in why


def test_significant_strides_follow_torch_cross_check():
    import torch

    base = torch.empty(2, 1, 3, 4)
    assert outputs_differ(base, base.clone()) is None
    # a size-1 dim's stride does not matter, nor do an empty tensor's strides
    assert outputs_differ(torch.empty(2, 1, 3, 4).as_strided((2, 1, 3, 4), (12, 99, 4, 1)), base) is None
    assert outputs_differ(torch.empty(0, 3), torch.empty(3, 0).t()) is None
    assert "strides" in outputs_differ(torch.empty(2, 3, 4, 5), torch.empty(2, 4, 3, 5).transpose(1, 2))
    assert "dtype" in outputs_differ(torch.empty(2, dtype=torch.float32), torch.empty(2, dtype=torch.float64))


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_fuzz_finds_a_contiguous_fake_of_a_permuted_real_output_and_passes_its_twin(permuted):
    bad = fuzz_op("sc_eager::heads_first", contract=str(permuted / "heads_first.toml"),
                  options=FuzzOptions(examples=30, seed=0, verify_examples=False))
    assert bad.verdict == "fail" and "eager kernel" in bad.reference
    f = bad.failures[0]
    assert f.code == "SC015" and f.check == "runtime" and "strides" in f.message
    assert f.dims["H"] >= 2 and f.dims["S"] >= 2  # where a (B, S, H, D) buffer's view is not contiguous
    good = fuzz_op("sc_eager::heads_first_fixed", contract=str(permuted / "heads_first_fixed.toml"),
                   options=FuzzOptions(examples=30, seed=0, verify_examples=False))
    assert good.verdict == "pass", good.failures


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_fuzz_finds_the_2d_index_the_runtime_rejects_where_the_contract_admits_it(tmp_path):
    text = INDEX_SELECT.read_text()
    text = text.split("\n[[rejects]]")[0]  # no reject: a 2-D index is an ordinary case of the domain
    text = text.replace('{ when = "index_rank == 0", value = "1" }, { value = "N" }',
                        '{ when = "index_rank == 0", value = "1" }, { when = "index_rank == 2", value = "N * M" }, '
                        '{ value = "N" }')
    naive = tmp_path / "index_select.toml"
    naive.write_text(text)
    r = fuzz_op("aten::index_select", contract=str(naive),
                options=FuzzOptions(examples=60, seed=0, verify_examples=False))
    assert r.verdict == "fail"
    f = r.failures[0]
    assert f.code == "SC014" and "index_rank=2" in f.case and "Index is supposed to be a vector" in f.message
    # the shipped contract states the region as a [[rejects]]: the domain's examples all agree
    shipped = fuzz_op("aten::index_select", contract=str(INDEX_SELECT),
                      options=FuzzOptions(examples=40, seed=0, verify_examples=False))
    assert shipped.verdict == "pass", shipped.failures


@pytest.mark.slow
def test_ref_check_compares_every_output_with_the_meta_kernel(permuted):
    from shapecheck.contract.load import load_contract
    from shapecheck.runtime.refcheck import ref_check

    bad = ref_check(load_contract(permuted / "heads_first.toml"), examples=6, seed=0)
    assert bad.verdict == "fail" and {f.code for f in bad.findings} == {"SC015"}
    assert all(f.sizes["H"] > 1 and f.sizes["S"] > 1 for f in bad.findings)
    assert "strides" in bad.findings[0].message
    good = ref_check(load_contract(permuted / "heads_first_fixed.toml"), examples=6, seed=0)
    assert good.verdict == "pass" and good.paths[0].points == 6


@pytest.mark.slow
def test_an_op_without_a_cpu_kernel_is_fuzzed_with_a_note_that_there_is_no_reference():
    flash = "aten::_scaled_dot_product_flash_attention"
    contract = ROOT / "contracts" / "aten" / "_scaled_dot_product_flash_attention.toml"
    r = fuzz_op(flash, contract=str(contract),
                options=FuzzOptions(examples=3, seed=0, verify_examples=False, cases=("mode=eval",)))
    assert r.verdict == "pass" and "no runtime reference" in r.reference and "checks 2 and 3 skipped" in r.reference


def test_device_cuda_without_a_gpu_is_a_clear_usage_error():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    r = invoke("ref", "check", "aten::index_select", "--contract", INDEX_SELECT, "--device", "cuda")
    assert r.returncode == 2 and "--device cuda: no CUDA device" in r.stderr and "Traceback" not in r.stderr
