"""An assert that fails only on the other side of the kernel's own guard_or_false (``prove.fallback_asserts``): hunt
56's ``_linalg_eigh`` with N from 0 was inconclusive, its storage-bounds assert after ``guard_or_false(N == 0)``
refuted at N = 0, where no run reaches it, while strict torch.export succeeds."""

from __future__ import annotations

import json

import pytest

from tests.conftest import KERNELS, ROOT, invoke

OK_CONTRACT = (KERNELS / "fallback_sides_ok.toml").read_text()


def _verify(name: str, tmp_path, *extra: str):
    contract = tmp_path / f"{name}.toml"
    contract.write_text(OK_CONTRACT.replace('"fbside::cat_ok"', f'"fbside::cat_{name}"'))
    return invoke("verify", "op", f"fbside::cat_{name}", "--import", str(KERNELS / "fallback_sides.py"), "--contract",
                  str(contract), "-j", "1", "--no-cache", "--format", "json", *extra)


@pytest.mark.slow
def test_an_assert_failing_only_on_the_other_side_is_proved_and_export_agrees(tmp_path):
    res = _verify("assert_ok", tmp_path, "--confirm-export")
    assert res.returncode == 0, res.stdout + res.stderr
    doc = json.loads(res.stdout)
    assert doc["verdict"] == "pass" and doc["violations"] == []


@pytest.mark.slow
def test_the_other_side_is_still_run_where_the_assert_is_set_aside(tmp_path):
    res = _verify("assert_bad", tmp_path)
    assert res.returncode == 1, res.stderr
    [v] = json.loads(res.stdout)["violations"]
    assert v["code"] == "SC002" and v["counterexample"]["M"] == 0


@pytest.mark.slow
def test_an_assert_with_no_fallback_before_it_stays_a_finding(tmp_path):
    res = _verify("assert_plain", tmp_path)
    assert res.returncode == 1, res.stderr
    codes = {v["code"] for v in json.loads(res.stdout)["violations"]}
    assert "SC004" in codes


@pytest.mark.slow
def test_linalg_eigh_from_zero_passes_as_strict_export_does(tmp_path):
    contract = tmp_path / "eigh.toml"
    contract.write_text("""schema = 1
op = "aten::_linalg_eigh"

[dims]
B = { min = 1, max = 1024 }
N = { min = 0, max = 2048 }

[[args]]
name = "A"
kind = "tensor"
dtype = "float32"
shape = "(B, N, N)"

[[args]]
name = "UPLO"
kind = "str"
value = "'L'"

[[args]]
name = "compute_v"
kind = "bool"
value = "true"

[[paths]]
id = "eigh"
when = "true"
outputs = [{ shape = "(B, N)", dtype = "float32", layout = "contiguous" },
           { shape = "(B, N, N)", dtype = "float32", strides = "(N * N, 1, N)" }]
""")
    res = invoke("verify", "op", "aten::_linalg_eigh", "--contract", str(contract), "-j", "1", "--no-cache",
                 "--confirm-export", "--format", "json", cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads(res.stdout)["verdict"] == "pass"
