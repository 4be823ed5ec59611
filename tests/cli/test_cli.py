import json

import pytest

from tests.conftest import KERNELS, invoke, run_cli

OP = "aten._scaled_dot_product_attention_math_for_mps"
CASE4 = "rank=4,mask=bool,is_causal=false,dtype=float32,enable_gqa=false"


@pytest.mark.slow
def test_verify_installed_passes_text():
    """In a fresh process, as a user runs it (``python -m shapecheck``: the console script's own exit path)."""
    res = run_cli("verify", "op", OP, "--case", "rank=4,mask=bool")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0].startswith("PASS: aten::_scaled_dot_product_attention_math_for_mps")


@pytest.mark.slow
def test_verify_regressed_json_schema_and_exit_1():
    res = invoke("verify", "op", "aten::_scaled_dot_product_attention_math_for_mps", "--meta",
                 f"{KERNELS / 'sdpa_kernels.py'}:regressed", "--case", CASE4, "--format", "json")
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    assert doc["op"] == "aten::_scaled_dot_product_attention_math_for_mps" and doc["verdict"] == "fail"
    assert isinstance(doc["seconds"], float) and doc["cases"]
    v = next(v for v in doc["violations"] if v["expr"] == "L <= 8")
    assert set(v) >= {"kind", "case", "path", "expr", "dims", "location", "counterexample"}
    assert v["kind"] == "guard-on-dynamic-dim" and v["dims"] == ["L"] and v["counterexample"]["L"] > 8
    assert v["location"]["file"].endswith("sdpa_kernels.py") and v["location"]["line"] > 0
    # files as docs/cli.md names them in every report: relative to the repository root (or site-packages)
    assert (v["location"]["file"], v["location"]["base"]) == ("tests/kernels/sdpa_kernels.py", "SRCROOT")
    assert doc["contract"] == "contracts/aten/_scaled_dot_product_attention_math_for_mps.toml"


@pytest.mark.slow
def test_regressed_text_shows_source_context():
    res = invoke("verify", "op", OP, "--meta", f"{KERNELS / 'sdpa_kernels.py'}:regressed", "--case", CASE4)
    assert res.returncode == 1
    assert res.stdout.startswith("FAIL:")
    assert "SC001 guard-on-dynamic-dim" in res.stdout and "counterexample:" in res.stdout
    assert "(query_seq_len <= 8)" in res.stdout


@pytest.mark.slow
def test_bad_inputs_exit_2_without_traceback(tmp_path):
    bad_py = tmp_path / "broken.py"
    bad_py.write_text("def f(:\n")
    for args in (["verify", "op", "aten._no_such_op_xyz", "--contract",
                  "contracts/aten/_scaled_dot_product_attention_math_for_mps.toml"],
                 ["verify", "op", "not an op"],
                 ["verify", "op", OP, "--meta", f"{bad_py}:f"],
                 ["verify", "op", OP, "--meta-source", str(bad_py)],
                 ["verify", "op", OP, "--meta", f"{KERNELS / 'sdpa_kernels.py'}:no_such_function"],
                 ["verify", "op", OP, "--format", "yaml"]):
        res = invoke(*args)
        assert res.returncode == 2, (args, res.stderr)
        assert "Traceback" not in res.stderr
        assert len(res.stderr.strip().splitlines()) <= 3, res.stderr


def test_missing_meta_kernel_is_a_target_error(tmp_path):
    contract = tmp_path / "c.toml"
    contract.write_text("""schema = 1
op = "aten::_fused_moving_avg_obs_fq_helper_functional"
[dims]
N = { min = 1 }
[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(N,)"
[[paths]]
id = "only"
when = "true"
outputs = ["(N,)"]
""")
    res = invoke("verify", "op", "aten._fused_moving_avg_obs_fq_helper_functional", "--contract", contract)
    assert res.returncode in (2,), res.stderr
    assert "Traceback" not in res.stderr


UNFOLD_COPY_OUT = """schema = 1
op = "aten::unfold_copy.out"
[dims]
A0 = { min = 2 }
A1 = { min = 1 }
B0 = { min = 1 }
B1 = { min = 1 }
[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(A0, A1)"
[[args]]
name = "dimension"
kind = "int"
value = 0
[[args]]
name = "size"
kind = "int"
value = 2
[[args]]
name = "step"
kind = "int"
value = 2
[[args]]
name = "out"
kind = "tensor"
dtype = "float32"
shape = "(B0, B1)"
keyword = true
[[paths]]
id = "p"
when = "true"
outputs = ["(A0 // 2, A1, 2)"]
"""


@pytest.mark.slow
def test_a_guard_of_a_cpp_kernel_is_never_placed_in_shapecheck_callers_code(tmp_path):
    """A hunt's finding: a guard the C++ out= kernel installs, with no Python frame of the kernel on the stack, was
    said to be "called from invoke at .../click/core.py": the frames beyond shapecheck's call are its caller's."""
    path = tmp_path / "unfold_copy_out.toml"
    path.write_text(UNFOLD_COPY_OUT)
    res = invoke("verify", "op", "aten::unfold_copy.out", "--contract", path, "-j", "1", "--no-cache",
                 "--format", "json")
    doc = json.loads(res.stdout)
    found = [v for v in doc["violations"] if "C++ kernel of aten.unfold_copy.out" in v["message"]]
    assert res.returncode == 1 and found
    assert not any("click" in v["message"] or "invoke at" in v["message"] for v in doc["violations"])
