"""A ``X % k == r`` the requires imply without writing it (``B0 == 2 * (A1 // 2)`` with ``A1 == B0``: A1 is even) is
stated to torch.export as the derived Dim ``2 * A1_2``, as a written one is, by both sides of verify that speak for
export: the ranges torch decides guards from (``TorchView``, SC016) and the Dims ``--confirm-export`` and the
export-style run use (``export_dims``). And an equality inside one class of equal dims (``A1 == B0``) is no Dim
derived from itself: such a dim was left out of export's Dims, so export traced it static and agreed with
anything (``aten::group_norm``'s drafted contract: 4 false agreements)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from shapecheck.contract.load import load_contract
from shapecheck.findings import Verdict
from shapecheck.logic import expr as E
from shapecheck.prove import export as X
from shapecheck.prove.torch_decides import TorchView
from shapecheck.prove.verify import make_solver

LIB = torch.library.Library("sc_implied", "DEF")  # noqa: TOR901 - the test's own namespace
LIB.define("halves(Tensor x, Tensor w) -> Tensor")


@torch.library.register_fake("sc_implied::halves", lib=LIB)
def _halves(x, w):
    # a view in two halves: under export's backed sizes torch guards A1 % 2 == 0 unless the Dim says A1 is even
    return x.view(x.shape[0], 2, x.shape[1] // 2).sum(1) + w[: x.shape[1] // 2]


CONTRACT = """schema = 1
op = "sc_implied::halves"

[dims]
A0 = { min = 1, max = 64 }
A1 = { min = 1, max = 64 }
B0 = { min = 1, max = 64 }

[domain]
requires = ["A1 == B0", "B0 == 2 * (A1 // 2)"]

[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(A0, A1)"

[[args]]
name = "w"
kind = "tensor"
dtype = "float32"
shape = "(B0,)"

[[paths]]
id = "all"
when = "True"
outputs = ["(A0, A1 // 2)"]
"""


def _case(tmp_path: Path):
    path = tmp_path / "c.toml"
    path.write_text(CONTRACT, encoding="utf-8")
    contract = load_contract(path)
    return path, contract, make_solver(contract, 10000)


@pytest.mark.slow
def test_an_implied_step_is_a_derived_dim_for_torch_and_for_export(tmp_path):
    _, contract, solver = _case(tmp_path)
    (case,) = contract.cases()
    view = TorchView(case, solver)
    assert view.decides(E.parse("A1 % 2 == 0"), []) is True  # was None: SC016 on a guard export never installs
    specs = X.export_dims(case, solver, X.equal_classes(case, solver), modulo=True)
    # every dim of the class is dynamic, as 2 * A1_2: none left out (a Dim derived from itself was dropped)
    assert {n: (sp.base, sp.a, sp.b) for n, sp in specs.items() if n in ("A1", "B0")} == {
        "A1": ("A1_2", 2, 0), "B0": ("A1_2", 2, 0)}, specs


@pytest.mark.slow
def test_verify_passes_it_and_export_agrees_with_the_dims_dynamic(tmp_path):
    from shapecheck.prove.verify import Options, verify_op

    path, _, _ = _case(tmp_path)
    report = verify_op("sc_implied::halves", contract=str(path), options=Options(jobs=1, confirm_export=True))
    assert report.verdict is Verdict.PASS, [v.message for v in report.violations]
    (result,) = report.cases
    assert result.export is not None and result.export.succeeded is True and result.export.agrees is True
