"""``contract draft`` writes the requires a kernel's check gave as a ``[[rejects]]`` region too, where the eager
kernel raises there and the meta kernel is proved to raise on all of it: a later kernel that drops the check
fails the drafted contract (SC021) instead of passing it (hunt 28 b10)."""

import textwrap
import tomllib

import pytest
import torch

from shapecheck.audit.draft_rejects import _message, _proved, reject_regions
from shapecheck.audit.schema_draft import draft_contract
from shapecheck.contract.load import load_contract
from shapecheck.kernel.load import function_kernel, installed_kernel
from shapecheck.prove.verify import Options, verify_contract

# cdist's meta kernel as torch 2.13 has it, less the column check (the historical bug hunt 28 rebuilt)
NO_COLUMN_CHECK = '''
import torch


def cdist_no_column_check(x1, x2, p, compute_mode):
    torch._check(x1.dim() >= 2, lambda: "cdist only supports at least 2D tensors")
    torch._check(x2.dim() >= 2, lambda: "cdist only supports at least 2D tensors")
    r1, r2 = x1.size(-2), x2.size(-2)
    batch = torch.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    return x1.new_empty(list(batch) + [r1, r2])
'''


@pytest.mark.slow
def test_a_check_of_the_kernel_is_a_rejects_region_that_fails_a_kernel_without_it(tmp_path):
    text = draft_contract("aten::_cdist_forward")
    doc = tomllib.loads(text)
    assert doc["domain"]["requires"] == ["A1 == B1"]
    (region,) = doc["rejects"]
    assert region["id"] == "kernel-check-1" and region["when"] == "A1 != B1"
    assert region["message"] == "X1 and X2 must have the same number of columns. X1" and "eager kernel raises at" in region["source"]
    path = tmp_path / "cdist.toml"
    path.write_text(text)
    contract = load_contract(path)
    op = "aten::_cdist_forward"
    assert verify_contract(contract, installed_kernel(op), Options(jobs=1)).verdict.value == "pass"
    broken = tmp_path / "broken.py"
    broken.write_text(NO_COLUMN_CHECK)
    report = verify_contract(contract, function_kernel(str(broken), "cdist_no_column_check", op), Options(jobs=1))
    assert report.verdict.value == "fail"
    assert {(v.code.value, str(v.path)) for v in report.violations} == {("SC021", "rejects.kernel-check-1")}


@pytest.mark.slow
def test_a_guard_s_side_is_no_check_and_gets_no_region():
    """bmm: the batch and inner sizes are checks (regions); a draft with none has no [[rejects]] table at all."""
    doc = tomllib.loads(draft_contract("aten::bmm"))
    assert sorted(r["when"] for r in doc["rejects"]) == ["A0 != B0", "A2 != B1"]
    assert "rejects" not in tomllib.loads(draft_contract("aten::index_select"))


@torch.library.custom_op("sc_draftrej::pair", mutates_args=())
def _pair(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.cat([x.reshape(-1), y.reshape(-1)])  # the eager kernel takes any two sizes


@_pair.register_fake
def _(x, y):
    torch._check(x.size(1) == y.size(1), lambda: "the fake wants equal columns")
    return x.new_empty((x.numel() + y.numel(),))


def test_a_check_the_eager_kernel_does_not_make_is_a_todo_and_no_region():
    text = draft_contract("sc_draftrej::pair")
    assert "rejects" not in tomllib.loads(text)
    assert "the eager kernel accepts" in text and "where the fake raises: the requires A1 == B1 is the fake's alone" in text


@torch.library.custom_op("sc_draftrej::half", mutates_args=())
def _half(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if x.size(1) != y.size(1):
        raise RuntimeError("columns differ")
    return x.clone()


@_half.register_fake
def _(x, y):
    torch._check(x.size(1) <= y.size(1), lambda: "columns differ")  # half the eager kernel's check
    return x.new_empty(x.shape)


def test_a_region_the_meta_kernel_refuses_only_in_part_is_not_proved(tmp_path):
    path = tmp_path / "half.toml"
    path.write_text(textwrap.dedent('''\
        schema = 1
        op = "sc_draftrej::half"
        [dims]
        A0 = { min = 1 }
        A1 = { min = 1 }
        B0 = { min = 1 }
        B1 = { min = 1 }
        [domain]
        requires = ["A1 == B1"]
        [[rejects]]
        id = "kernel-check-1"
        when = "A1 != B1"
        source = "a test"
        [[args]]
        name = "x"
        kind = "tensor"
        dtype = "float32"
        shape = "(A0, A1)"
        [[args]]
        name = "y"
        kind = "tensor"
        dtype = "float32"
        shape = "(B0, B1)"
        [[paths]]
        id = "p"
        when = "True"
        outputs = ["(A0, A1)"]
        '''))
    from shapecheck.audit.draft_rejects import DraftReject

    region = DraftReject("kernel-check-1", "A1 != B1", "", "a test")
    assert _proved(load_contract(path), installed_kernel("sc_draftrej::half"), [region]) == []
    # the drafted one is the fake's own check, which it proves
    doc = tomllib.loads(draft_contract("sc_draftrej::half"))
    assert [r["when"] for r in doc["rejects"]] == ["A1 > B1"], doc.get("rejects")


@pytest.mark.parametrize("error, message", [
    ("RuntimeError: X1 and X2 must have the same number of columns. X1: 1 X2: 2",
     "X1 and X2 must have the same number of columns. X1"),
    ("RuntimeError: size mismatch, got input (3), mat (3x4), vec (5)", "size mismatch, got input"),
    ("RuntimeError: shape '[2, 3]' is invalid for input of size 5", "is invalid for input of size"),
    ("ValueError: 3 != 4 (x)", ""),
    ("Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].",
     "Expected size for first two dimensions of batch2 tensor to be"),
    ("RuntimeError: shape '[2, 3]' is invalid", ""),
    # a number inside a word (hunt 39: col2im's drafted message kept "input.size(1)=5 and kernel_size=(2")
    ("RuntimeError: Expected size of input's first non-batch dimension to be divisible by the product of "
     "kernel_size, but got input.size(1)=5 and kernel_size=(2, 2)",
     "Expected size of input's first non-batch dimension to be divisible by the product of kernel_size, but got"),
])
def test_a_message_is_the_error_s_longest_stretch_without_a_number(error, message):
    assert _message(error) == message


def test_reject_regions_without_requires_changes_nothing():
    from shapecheck.audit.draft_outputs import Traced

    traced = Traced()
    assert reject_regions("aten::mm", lambda t: "", lambda s: None, lambda v: None, traced, None) is False
    assert traced.rejects == [] and traced.todos == []
