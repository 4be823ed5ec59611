"""Hunt 62's misreadings of the audit and of its input checks (amd-quark 0.13), on copies in
tests/kernels/audit_hunt62.py."""

from __future__ import annotations

import pytest

from tests.conftest import audit_records, invoke

LIBRARY = "tests.kernels.audit_hunt62"


@pytest.fixture(scope="module")
def records():
    return audit_records("audit62::*", LIBRARY, samples=f"{LIBRARY}:samples")


@pytest.mark.slow
def test_a_float8_input_is_laid_out_otherwise_as_a_float32_one_is(records):
    for op in ("audit62::deq_f32.default", "audit62::deq_f8.default"):
        found = records[op]["findings"]
        assert any(f["class"] == "eager-strides" and "x transposed" in f["expr"] for f in found), (op, found)


@pytest.mark.slow
def test_a_sample_whose_kwargs_key_is_no_name_is_left_out_with_a_note(records):
    record = records["audit62::deq_f8.default"]
    assert any("its kwargs have the key 1, not an argument's name" in n for n in record["notes"]), record["notes"]
    assert record["status"] != "not run"


def test_float8_gets_the_other_float8_format_as_its_dtype_variant():
    from shapecheck.audit.variants import OTHER_DTYPE, floating

    assert OTHER_DTYPE["float8_e4m3fn"] == "float8_e5m2" and OTHER_DTYPE["float8_e5m2"] == "float8_e4m3fn"
    assert floating("float8_e5m2") and floating("bfloat16") and not floating("int8")


def test_an_unknown_key_of_the_audit_table_lists_the_keys_that_table_takes(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.shapecheck.audit]\nbogus = 1\n")
    res = invoke("audit", "--import", LIBRARY, "-q", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    known = res.stderr.split("(known: ")[1].rstrip(")\n").split(", ")
    assert "samples" in known and "max-traces" in known and "untraced" in known
    assert not {"seed", "timeout-ms", "contracts", "era"} & set(known), known
    for key, value in (("seed", "1"), ("timeout-ms", "5")):  # each refused in turn, as listed
        (tmp_path / "pyproject.toml").write_text(f"[tool.shapecheck.audit]\n{key} = {value}\n")
        assert invoke("audit", "--import", LIBRARY, "-q", cwd=tmp_path).returncode == 2


@pytest.mark.slow
def test_import_of_a_folder_imports_its_package_or_says_it_is_none(tmp_path):
    (tmp_path / "plain").mkdir()
    res = invoke("audit", "--import", str(tmp_path / "plain"), "-q", cwd=tmp_path)
    assert res.returncode == 2 and "a directory with no __init__.py" in res.stderr, res.stderr
    package = tmp_path / "pkg62"
    package.mkdir()
    (package / "__init__.py").write_text("import torch\n"
                                         "torch.library.define('pkg62::twice', '(Tensor x) -> Tensor')\n"
                                         "@torch.library.register_fake('pkg62::twice')\n"
                                         "def _fake(x):\n    return torch.empty_like(x)\n")
    res = invoke("audit", "--import", str(package), "--ops", "pkg62::*", "--no-eager", "-q", "--no-cache",
                 cwd=tmp_path)
    assert res.returncode in (0, 3), res.stderr  # imported and audited (no eager kernel: not compared)
    assert "No module named" not in res.stderr
