"""A case's least point on concrete sizes (prove.least): torch simplifies a symbolic ``(n * d) // n`` to ``d``, as
if ``n`` were never 0, so the symbolic trace passes a kernel that raises ZeroDivisionError at N = 0 under
FakeTensorMode on concrete sizes. The least point of the domain is run; a raise there is SC007."""

from __future__ import annotations

import pytest
import torch

from shapecheck.findings import Verdict
from shapecheck.rules import RuleCode
from tests.unit.test_export_run import _verify

LIB = torch.library.Library("sc_least", "DEF")  # noqa: TOR901 - the test's own namespace
LIB.define("rows(Tensor x) -> Tensor")
LIB.define("rows_ok(Tensor x) -> Tensor")
LIB.define("unbiased(Tensor x) -> Tensor")


@torch.library.register_fake("sc_least::rows", lib=LIB)
def _rows(x):
    n, d = x.shape
    return x.new_empty((n, (n * d) // n))  # (N, D) for N >= 1; ZeroDivisionError at N == 0


@torch.library.register_fake("sc_least::rows_ok", lib=LIB)
def _rows_ok(x):
    n, d = x.shape
    return x.new_empty((n, d))


@torch.library.register_fake("sc_least::unbiased", lib=LIB)
def _unbiased(x):
    n, d = x.shape
    x.unbiased_factor = n / (n - 1)  # batch norm's unbiased variance: ZeroDivisionError at N == 1, concretely
    return x.new_empty((n, d))


def _contract(op: str, nmin: int) -> str:
    return f"""schema = 1
op = "{op}"

[dims]
N = {{ min = {nmin}, max = 1000 }}
D = {{ min = 1, max = 1000 }}

[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(N, D)"

[[paths]]
id = "all"
when = "True"
outputs = [{{ shape = "(N, D)", dtype = "float32" }}]
"""


@pytest.mark.slow
def test_a_division_by_a_size_that_torch_simplifies_away_fails_at_the_least_point(tmp_path):
    report = _verify("sc_least::rows", _contract("sc_least::rows", 0), tmp_path)
    assert report.verdict is Verdict.FAIL
    (v,) = report.violations
    assert v.code is RuleCode.KERNEL_ERROR and v.counterexample == {"N": 0, "D": 1}
    assert v.expr.startswith("ZeroDivisionError") and v.location is not None
    assert v.location.text.startswith("return x.new_empty((n, (n * d) // n))")


@pytest.mark.slow
@pytest.mark.parametrize("op, nmin", [("sc_least::rows", 1), ("sc_least::rows_ok", 0)])
def test_no_finding_where_the_least_point_runs(tmp_path, op, nmin):
    report = _verify(op, _contract(op, nmin), tmp_path)
    assert report.verdict is Verdict.PASS, [v.message for v in report.violations]


@pytest.mark.slow
def test_a_divisor_made_of_sizes_that_is_0_at_a_size_of_1_fails_at_the_least_point(tmp_path):
    """hunt 30: native_batch_norm(training=True)'s decomposition divides by ``n - 1``; the unbacked trace's
    symbolic division raises nothing, FakeTensorMode on concrete sizes raises at N * H * W == 1."""
    report = _verify("sc_least::unbiased", _contract("sc_least::unbiased", 1), tmp_path)
    assert report.verdict is Verdict.FAIL, [v.message for v in report.violations]
    (v,) = report.violations
    assert v.code is RuleCode.KERNEL_ERROR and v.counterexample == {"N": 1, "D": 1}
    assert v.expr.startswith("ZeroDivisionError") and "n / (n - 1)" in v.message
