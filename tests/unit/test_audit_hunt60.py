"""Hunt 60's misreadings of the audit (torchrec 1.9.2), on copies in tests/kernels/audit_hunt60.py."""

from __future__ import annotations

import pytest

from tests.conftest import audit_records

LIBRARY = "tests.kernels.audit_hunt60"


@pytest.fixture(scope="module")
def records():
    return audit_records("audit60::*", LIBRARY, samples=f"{LIBRARY}:samples")


@pytest.mark.slow
def test_a_float_tensor_after_an_index_gets_other_dtypes_too(records):
    found = records["audit60::gather_idx_first.default"]["findings"]
    assert any(f["class"] == "eager-dtype" and "table as bfloat16" in f["expr"] for f in found), found


@pytest.mark.slow
def test_a_size_argument_named_like_an_axis_is_a_size_where_the_kernels_use_it_as_one(records):
    found = records["audit60::cat_dim0.default"]["findings"]
    assert any(f["class"] == "constant-comparison" and f["expr"] == "dim0 > 4" for f in found), found


@pytest.mark.slow
def test_the_hook_sample_that_is_the_first_inputs_is_not_run_again_as_a_variant(records):
    found = records["audit60::rows.default"]["findings"]
    accepts = [f for f in found if f["class"] == "fake-accepts"]
    assert len(accepts) == 1, accepts
    assert not any("sample 1 of the samples hook" in f["expr"] for f in found), found


def test_kernel_size_names_follows_helpers_and_leaves_axes_out():
    import torch

    import tests.kernels.audit_hunt60  # noqa: F401 - registers the ops
    from shapecheck._torch.kernel_code import kernel_size_names

    sized = kernel_size_names(torch.ops.audit60.cat_dim0.default)
    assert {"dim0", "dim1s"} <= sized
    assert "dim" not in kernel_size_names(torch.ops.aten.sum.dim_IntList)  # no Python kernel: nothing read


def test_an_untraced_entry_without_a_reason_is_named(tmp_path, monkeypatch):
    from tests.conftest import invoke

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.shapecheck.audit.untraced]\n"a::b.default" = "fine"\n'
                                             '"a::c.default" = 3\n')
    res = invoke("audit", "--ops", "audit60::rows*", "--import", LIBRARY, "-j", "1", "--no-cache", cwd=tmp_path)
    assert res.returncode == 2 and "[tool.shapecheck.audit.untraced] 'a::c.default'" in res.stderr, res.stderr


def test_an_int_named_for_an_axis_but_ending_in_a_size_word_is_a_size():
    """hunt 59: ``contract draft aten::_fft_c2r`` made ``SymInt last_dim_size`` a choice of [0], so no guard on it
    could be found; the name's last word says what it is."""
    from shapecheck.audit.inputs import constant_int

    assert not constant_int("last_dim_size") and not constant_int("dim_size") and not constant_int("mode_length")
    assert constant_int("dim") and constant_int("squeeze_dims") and constant_int("num_bits") and constant_int("perm")
