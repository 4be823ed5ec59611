"""A guard_or_false/guard_or_true on a size the kernel made from data (``nonzero``'s count, a fake's
``new_dynamic_size()``) is answered by its fallback in torch.export too: that size is unbacked there as well,
so export installs no guard and traces the fallback side for every input. Such a fallback is never a finding
and never leaves the domain unexplored; a guard (an ``if``) on that size still fails, as export does."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from shapecheck.findings import Verdict
from shapecheck.rules import RuleCode

NONZERO = """schema = 1
op = "aten::nonzero"

[dims]
A = { min = 0, max = 4096 }
B = { min = 0, max = 4096 }

[choices]
dtype = ["float32", "bool"]

[[args]]
name = "self"
kind = "tensor"
dtype = "dtype"
shape = "(A, B)"

[[paths]]
id = "all"
when = "true"
outputs = [{ shape = "(n, 2)", dtype = "int64", sizes = { n = { min = "0", max = "A * B" } } }]
"""

# a fake whose output strides read its data-dependent size (as nonzero's do): torch's layout code asks
# guard_or_false(Eq(n, 0)) and guard_or_false(Eq(n, 1)) while it builds the tensor
LIB = torch.library.Library("sc_ddfb", "DEF")  # noqa: TOR901 - the test's own namespace
LIB.define("strided_rows(Tensor x) -> Tensor")
LIB.define("branchy_rows(Tensor x) -> Tensor")


@torch.library.register_fake("sc_ddfb::strided_rows", lib=LIB)
def _strided(x):
    n = torch.library.get_ctx().new_dynamic_size()
    torch._check(n <= x.shape[0])
    return x.new_empty_strided((n, x.shape[1]), (1, n))


@torch.library.register_fake("sc_ddfb::branchy_rows", lib=LIB)
def _branchy(x):
    n = torch.library.get_ctx().new_dynamic_size()
    torch._check(n <= x.shape[0])
    if n == 0:  # a guard on data: export raises a data-dependent error here
        return x.new_empty((0, x.shape[1]))
    return x.new_empty((n, x.shape[1]))


ROWS = """schema = 1
op = "OP"

[dims]
N = { min = 0, max = 100000 }
D = { min = 1, max = 512 }

[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(N, D)"

[[paths]]
id = "rows"
when = "true"
outputs = [{ shape = "(n, D)", sizes = { n = { min = "0", max = "N" } }, dtype = "float32" }]
"""


def _verify(op: str, text: str, tmp_path: Path):
    from shapecheck.prove.verify import Options, verify_op

    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    return verify_op(op, contract=str(path), options=Options(jobs=1))


@pytest.mark.slow
def test_nonzero_passes_as_torch_export_does(tmp_path):
    report = _verify("aten::nonzero", NONZERO, tmp_path)
    assert report.verdict is Verdict.PASS, [v.message for v in report.violations]
    assert [r.traces for r in report.cases] == [1, 1]  # one finished trace each: nothing left unexplored

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.nonzero(x)

    dim = torch.export.Dim("A", min=2, max=4096)
    ep = torch.export.export(M(), (torch.ones(5, 3),), dynamic_shapes=({0: dim, 1: torch.export.Dim("B")},),
                             strict=True)
    assert ep.module()(torch.eye(4, 3)).shape == (3, 2)  # export installs no guard on the count


def test_a_fallback_on_a_data_dependent_size_is_not_a_finding(tmp_path):
    report = _verify("sc_ddfb::strided_rows", ROWS.replace("OP", "sc_ddfb::strided_rows"), tmp_path)
    assert report.verdict is Verdict.PASS, [v.message for v in report.violations]
    assert not any(v.code is RuleCode.INCONCLUSIVE for v in report.violations)


def test_a_guard_on_a_data_dependent_size_still_fails(tmp_path):
    report = _verify("sc_ddfb::branchy_rows", ROWS.replace("OP", "sc_ddfb::branchy_rows"), tmp_path)
    assert report.verdict is not Verdict.PASS
    assert report.violations

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.ops.sc_ddfb.branchy_rows(x)

    with pytest.raises(Exception, match="(?i)data.dependent|guard"):
        torch.export.export(M(), (torch.ones(5, 3),),
                            dynamic_shapes=({0: torch.export.Dim("N"), 1: torch.export.Dim("D")},), strict=True)
