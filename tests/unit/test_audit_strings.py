"""A ``str`` argument is tried at the words the op's own kernels compare it with (``if mode == "both":``), not
only at its default and the audit's guesses: a fake wrong for one mode is found (it was "agree at all points").
An eager kernel that dies where the fake returns is said to lack a check as much as the fake."""

from __future__ import annotations

import pytest

from tests.unit.test_audit_untraced import audit_lib

LIB = '''
import torch
from torch.library import custom_op


@custom_op("strwords::pad_mode", mutates_args=())
def pad_mode(x: torch.Tensor, mode: str = "constant") -> torch.Tensor:
    if mode == "both":
        return x.new_zeros(x.shape[0], x.shape[1] + 2)
    return x.new_zeros(x.shape[0], x.shape[1] + 1)


@pad_mode.register_fake
def _(x, mode="constant"):
    return x.new_empty(x.shape[0], x.shape[1] + 1)  # wrong for mode="both"
'''


@pytest.mark.slow
def test_a_str_argument_is_tried_at_the_kernels_own_words(tmp_path, monkeypatch):
    code, doc = audit_lib(tmp_path, monkeypatch, "strwords_lib", LIB)
    findings = doc["ops"][0]["findings"]
    assert code == 1 and [f["code"] for f in findings] == ["SC038"] and "mode='both'" in findings[0]["expr"]


def test_the_words_come_from_the_fake_and_the_custom_ops_own_function(tmp_path, monkeypatch):
    import importlib

    import torch

    from shapecheck._torch.kernel_code import kernel_strings

    (tmp_path / "strwords_unit.py").write_text('''
import torch
from torch.library import custom_op


@custom_op("strwords::unit", mutates_args=())
def unit(x: torch.Tensor, how: str = "a") -> torch.Tensor:
    return x.clone() if how in ("left", "right") else x.clone()


@unit.register_fake
def _(x, how="a"):
    return x.new_empty(x.shape) if how != "middle" else x.new_empty(x.shape)
''')
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("strwords_unit")
    words = kernel_strings(torch.ops.strwords.unit.default)
    assert {"middle", "left", "right"} <= set(words)


HELPER = '''
import torch
from torch.library import custom_op


def _padded(x, padding):  # the only place that compares the string (tico's _conv2d_with_string_padding)
    if padding == "same":
        return x.new_empty(x.shape[0], x.shape[1] + 2)
    return x.new_empty(x.shape)


@custom_op("strhelper::conv", mutates_args=())
def conv(x: torch.Tensor, padding: str) -> torch.Tensor:
    return _padded(x, padding).clone()


@conv.register_fake
def _(x, padding):
    return x.new_empty(x.shape)  # wrong for padding="same"
'''


def test_the_words_come_from_the_functions_of_its_module_a_kernel_calls(tmp_path, monkeypatch):
    import importlib

    import torch

    from shapecheck._torch.kernel_code import kernel_strings

    (tmp_path / "strhelper_unit.py").write_text(HELPER)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("strhelper_unit")
    assert "same" in kernel_strings(torch.ops.strhelper.conv.default)


@pytest.mark.slow
def test_a_str_a_helper_of_the_kernel_compares_is_tried(tmp_path, monkeypatch):
    code, doc = audit_lib(tmp_path, monkeypatch, "strhelper_lib", HELPER.replace("strhelper::", "strhelper2::"))
    findings = doc["ops"][0]["findings"]
    assert code == 1 and [f["code"] for f in findings] == ["SC038"]  # clean before: 'same' was never tried


CRASHING = '''
import os
import signal

import torch
from torch.library import custom_op


@custom_op("eagerdies::rows", mutates_args=())
def rows(x: torch.Tensor) -> torch.Tensor:
    if x.shape[0] == 1:
        os.kill(os.getpid(), signal.SIGSEGV)  # an eager kernel that reads past a one-row input
    return x.clone()


@rows.register_fake
def _(x):
    return torch.empty_like(x)
'''


@pytest.mark.slow
def test_an_eager_kernel_that_dies_where_the_fake_returns_is_said_to_lack_a_check_too(tmp_path, monkeypatch):
    code, doc = audit_lib(tmp_path, monkeypatch, "eagerdies_lib", CRASHING)
    (finding,) = [f for f in doc["ops"][0]["findings"] if f["code"] == "SC041"]
    assert code == 1 and "where the eager kernel crashes" in finding["expr"]
    assert "a check is missing there, or in the fake, or both" in finding["message"], finding
