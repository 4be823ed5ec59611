"""The argument kinds and dtypes real ops need (issue 24): every torch dtype by name (read from torch, not listed
in shapecheck, without importing torch at load), float lists, values that decide sizes, and the documented
examples that use them: an NVFP4 quantiser with float4 outputs, interpolate with scale factors,
repeat_interleave with output_size, adaptive pooling confirmed by torch.export."""

import subprocess
import sys

import pytest
import torch

from shapecheck.contract import dtypes
from shapecheck.contract.load import load_contract
from shapecheck.errors import ContractError
from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.runtime.refcheck import ref_check
from shapecheck.trace.arguments import make_arguments
from tests.conftest import ROOT

EXAMPLES = ROOT / "docs" / "examples"


def _contract(tmp_path, args: str, outputs: str = '"unspecified"', extra: str = ""):
    (tmp_path / "c.toml").write_text(f"""
schema = 1
op = "sc_kinds::op"
{extra}
[dims]
N = {{ min = 1, max = 64 }}
O = {{ min = 0, max = 64 }}

{args}

[[paths]]
id = "any"
when = "true"
outputs = [{outputs}]
""")
    return tmp_path / "c.toml"


# ---------------------------------------------------------------------------------------------------------
# Dtypes


def test_every_dtype_of_the_installed_torch_is_a_contract_dtype(tmp_path):
    names = [n for n in dir(torch) if isinstance(getattr(torch, n), torch.dtype)]
    assert {"float4_e2m1fn_x2", "float8_e4m3fn", "uint16", "uint32", "uint64", "complex32", "bits8"} <= set(names)
    for name in names:
        assert dtypes.known(name), name
        arg = f'[[args]]\nname = "x"\nkind = "tensor"\nshape = "(N,)"\ndtype = "{name}"'
        if name in ("qint8", "quint8", "qint32", "quint4x2", "quint2x4"):
            # torch makes a quantized tensor at concrete sizes only: no input of one can be traced (a hunt's exit 4)
            assert dtypes.quantized(name)
            with pytest.raises(ContractError, match=r"\[args\.x\.dtype\].*quantized dtype"):
                load_contract(_contract(tmp_path, arg))
            continue
        assert not dtypes.quantized(name)
        case = next(iter(load_contract(_contract(tmp_path, arg, f'{{ shape = "(N,)", dtype = "{name}" }}')).cases()))
        assert case.arg("x").dtype == name and case.paths[0].specs[0].dtype == name
        # fuzz and ref check can make it: values, or random bytes for a dtype without arithmetic
        x = make_arguments(case, {"N": 3}, 0, "cpu")["x"]
        assert x.dtype == getattr(torch, name) and x.shape == (3,)


def test_an_unknown_dtype_lists_the_close_ones(tmp_path):
    arg = '[[args]]\nname = "x"\nkind = "tensor"\nshape = "(N,)"\ndtype = "float4_e2m1fn"'
    with pytest.raises(ContractError) as err:
        load_contract(_contract(tmp_path, arg))
    assert "[args.x.dtype]" in str(err.value) and "did you mean float4_e2m1fn_x2" in str(err.value)
    arg = '[[args]]\nname = "x"\nkind = "tensor"\nshape = "(N,)"\ndtype = "float32"'
    with pytest.raises(ContractError) as err:
        load_contract(_contract(tmp_path, arg, '{ shape = "(N,)", dtype = "bfloat61" }'))
    assert "outputs[0].dtype" in str(err.value) and "did you mean bfloat16" in str(err.value)


def test_loading_a_contract_reads_dtype_names_without_importing_torch():
    code = ("import sys\nfrom shapecheck.contract.load import load_contract\n"
            "c = load_contract('docs/examples/nvfp4_quantize.toml')\n"
            "print('torch' in sys.modules, c.paths[0].outputs[0].dtype)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.stdout.split() == ["False", "float4_e2m1fn_x2"], res.stderr[-2000:]


def test_an_alias_is_compared_as_its_dtype(tmp_path):
    arg = '[[args]]\nname = "x"\nkind = "tensor"\nshape = "(N,)"\ndtype = "half"'
    (tmp_path / "k.py").write_text("def kernel(x):\n    return x.new_empty(x.shape)\n")
    path = _contract(tmp_path, arg, '{ shape = "(N,)", dtype = "half" }')
    r = verify_op("sc_kinds::op", contract=str(path), meta=f"{tmp_path / 'k.py'}:kernel", options=Options(jobs=1))
    assert r.verdict == Verdict.PASS, [v.message for v in r.violations]


@pytest.mark.parametrize(("kernel", "verdict", "code"), [
    ("quantize", Verdict.PASS, None), ("quantize_uint8", Verdict.FAIL, "SC017"),
    ("quantize_unpadded", Verdict.FAIL, "SC002")])
def test_an_nvfp4_quantiser_states_its_float4_and_float8_outputs(kernel, verdict, code):
    r = verify_op("mylib::nvfp4_quantize", contract=str(EXAMPLES / "nvfp4_quantize.toml"),
                  meta=f"{EXAMPLES / 'nvfp4_quantize.py'}:{kernel}", options=Options(jobs=1))
    assert r.verdict == verdict
    assert {v.code for v in r.violations} == ({code} if code else set())


# ---------------------------------------------------------------------------------------------------------
# Float lists, and numbers written as strings


def test_a_floats_argument_takes_an_array_of_numbers(tmp_path):
    arg = '[[args]]\nname = "s"\nkind = "floats"\nvalue = [2, 1.5]'
    case = next(iter(load_contract(_contract(tmp_path, arg)).cases()))
    assert case.arg("s").value == (2.0, 1.5) and all(type(v) is float for v in case.arg("s").value)


@pytest.mark.parametrize(("kind", "value", "message"), [
    ("float", '"0.0"', "write the TOML number 0.0 without quotes"),
    ("float", '"-1e-5"', "write the TOML number -1e-5 without quotes"),
    ("floats", '"[2.0, 2.0]"', "write the TOML number [2.0, 2.0] without quotes"),
    ("floats", '[2.0, "x"]', "expected an array of numbers"),
    ("floats", "2.0", "expected an array of numbers"),
])
def test_a_number_written_as_a_string_says_what_to_write(tmp_path, kind, value, message):
    arg = f'[[args]]\nname = "s"\nkind = "{kind}"\nvalue = {value}'
    with pytest.raises(ContractError) as err:
        load_contract(_contract(tmp_path, arg))
    assert "[args.s.value]" in str(err.value) and message in str(err.value), str(err.value)


def test_a_float_list_schema_argument_takes_the_floats_kind(tmp_path):
    from shapecheck.contract.schema import KIND_TYPES, check_schema

    assert KIND_TYPES["floats"] == {"float[]"}
    contract = load_contract(EXAMPLES / "upsample_nearest2d.toml")
    schema = (("input", "Tensor", None, None), ("output_size", "SymInt[]?", None, None),
              ("scale_factors", "float[]?", None, None))
    check_schema(contract, schema, object())  # no error: floats fits float[]?
    bad = load_contract(_contract(tmp_path, '[[args]]\nname = "scale_factors"\nkind = "float"\nvalue = 2.0'))
    with pytest.raises(ContractError) as err:
        check_schema(bad, (("scale_factors", "float[]?", None, None),), object())
    assert 'use kind = "floats"' in str(err.value)


@pytest.mark.slow
def test_interpolate_with_scale_factors_is_proved_at_a_non_integer_scale():
    r = verify_op("aten::upsample_nearest2d.vec", contract=str(EXAMPLES / "upsample_nearest2d.toml"),
                  options=Options(jobs=1))
    assert r.verdict == Verdict.PASS and {p.status for c in r.cases for p in c.paths} == {"proved"}
    # the contract's floor(1.5 * H) is torch's: eager upsampling at a few sizes
    for h in (1, 2, 3, 7):
        out = torch.nn.functional.interpolate(torch.zeros(1, 1, h, h), scale_factor=1.5, mode="nearest")
        assert out.shape[-1] == 3 * h // 2


# ---------------------------------------------------------------------------------------------------------
# Values that decide sizes


def test_values_that_sum_to_a_dim_are_drawn_so(tmp_path):
    arg = ('[[args]]\nname = "r"\nkind = "tensor"\nshape = "(N,)"\ndtype = "int64"\nvalues = { sum = "O" }')
    case = next(iter(load_contract(_contract(tmp_path, arg)).cases()))
    for seed in range(5):
        for n, o in ((1, 0), (3, 7), (5, 64)):
            r = make_arguments(case, {"N": n, "O": o}, seed, "cpu")["r"]
            assert r.shape == (n,) and int(r.sum()) == o and int(r.min()) >= 0


@pytest.mark.parametrize(("args", "message"), [
    ('values = { sum = "O - 1" }', "no values of r (N,) sum to O - 1 at"),
    ('values = { total = "O" }', "unknown key 'total'"),
    ('values = { sum = "O" }\nlow = "0"', "give 'values' or 'low'/'high', not both"),
])
def test_values_that_cannot_be_drawn_are_a_load_error(tmp_path, args, message):
    arg = f'[[args]]\nname = "r"\nkind = "tensor"\nshape = "(N,)"\ndtype = "int64"\n{args}'
    with pytest.raises(ContractError) as err:
        load_contract(_contract(tmp_path, arg))
    assert "[args.r." in str(err.value) and message in str(err.value), str(err.value)


@pytest.mark.slow
def test_repeat_interleave_with_output_size_is_proved_and_checked_on_consistent_inputs(tmp_path):
    contract = load_contract(EXAMPLES / "repeat_interleave.toml")
    r = verify_op("aten::repeat_interleave.Tensor", contract=str(EXAMPLES / "repeat_interleave.toml"),
                  options=Options(jobs=1))
    assert r.verdict == Verdict.PASS
    report = ref_check(contract, examples=12)
    assert report.verdict == "pass" and sum(p.points for p in report.paths) == 12
    # without the values, the runtime refuses every input drawn: the sum is what it checks
    (tmp_path / "ri.toml").write_text((EXAMPLES / "repeat_interleave.toml").read_text().replace(
        'values = { sum = "O" }', ""))
    loose = ref_check(load_contract(tmp_path / "ri.toml"), examples=6)
    assert loose.verdict == "fail" and {f.code for p in loose.paths for f in p.findings} == {"SC014"}


# ---------------------------------------------------------------------------------------------------------
# Export of sizes only int arguments carry


@pytest.mark.slow
def test_adaptive_pooling_exports_with_its_output_size_as_an_input_tensors_size():
    r = verify_op("aten::_adaptive_avg_pool2d", contract=str(EXAMPLES / "adaptive_avg_pool2d.toml"),
                  options=Options(jobs=1, confirm_export=True))
    (case,) = r.cases
    x = case.export
    assert r.verdict == Verdict.PASS and x.ran and x.succeeded and x.agrees
    assert x.ints.startswith("OH, OW, carried by int arguments only, passed as the size of an extra input tensor")


@pytest.mark.slow
def test_a_guard_on_an_int_carried_size_fails_export_as_it_fails_verify(tmp_path):
    (tmp_path / "k.py").write_text(
        "def kernel(self, output_size):\n"
        "    oh, ow = output_size\n"
        "    if oh > 3:\n"
        "        return self.new_empty((self.shape[0], self.shape[1], oh, ow))\n"
        "    return self.new_empty((self.shape[0], self.shape[1], oh, ow))\n")
    r = verify_op("aten::_adaptive_avg_pool2d", contract=str(EXAMPLES / "adaptive_avg_pool2d.toml"),
                  meta=f"{tmp_path / 'k.py'}:kernel", options=Options(jobs=1, confirm_export=True))
    (case,) = r.cases
    assert r.verdict == Verdict.FAIL and {v.code for v in r.violations} == {"SC001"}
    assert case.export.ran and case.export.succeeded is False and case.export.agrees
