"""A kernel's own branch that only sizes with a hint take (``has_guarding_hint(n) and n <= 8``): verify's trace has
unbacked sizes and never takes it, torch.export's backed sizes do and install the guard, so strict export fails;
verify reports it from its export-style run (SC001, with a counterexample on the other side), and its twin
without the branch passes (hunt 47)."""

from __future__ import annotations

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import KERNELS

CONTRACT = str(KERNELS / "embedding_dense_backward.toml")
CASE = "irank=1,padding_idx=-1,scale_grad_by_freq=false"


def _verify(fn: str):
    return verify_op("aten::embedding_dense_backward", contract=CONTRACT,
                     meta=f"{KERNELS / 'hinted_branch.py'}:{fn}", options=Options(jobs=1, cases=(CASE,)))


@pytest.mark.slow
def test_a_branch_only_hinted_sizes_take_is_sc001_and_its_twin_passes():
    r = _verify("branch_where_hinted")
    assert r.verdict is Verdict.FAIL
    (v,) = [v for v in r.violations if not v.suppressed]
    assert v.code.value == "SC001" and v.expr == "NW <= 8" and v.location is not None and v.location.line == 11
    assert v.counterexample["NW"] > 8 and v.witness["NW"] <= 8
    assert _verify("no_branch").verdict is Verdict.PASS


@pytest.mark.slow  # a strict export
def test_strict_export_rejects_the_dim_range_there():
    import importlib

    import torch
    from torch.export import Dim, export

    mod = importlib.import_module("tests.kernels.hinted_branch")
    lib = torch.library.Library("schinted", "DEF")
    lib.define("edb(Tensor g, Tensor i, int nw) -> Tensor")
    lib.impl("edb", lambda g, i, nw: torch.zeros(nw, g.shape[-1]), "CPU")
    torch.library.register_fake("schinted::edb", lambda g, i, nw: mod.branch_where_hinted(g, i, nw, -1, False),
                                lib=lib)

    class M(torch.nn.Module):
        def forward(self, g, i, w):
            return torch.ops.schinted.edb(g, i, w.size(0))

    args = (torch.randn(3, 4), torch.zeros(3, dtype=torch.int64), torch.empty(5))
    with pytest.raises(Exception, match=r"Constraints violated \(NW\)"):
        export(M(), args, dynamic_shapes={"g": {0: Dim("B1")}, "i": {0: Dim("B1")}, "w": {0: Dim("NW", max=65536)}},
               strict=True)


def test_explore_sees_no_break_where_two_dims_are_pinned_to_one_value():
    """``d == 1 and nw == 1`` pins both to 1: the region's output (1, 1) reads as either dim, so it is shown as
    constants and compared with no other path (it was named (D, D), a false shape-polymorphism break)."""
    r = verify_op("aten::embedding_dense_backward", contract=CONTRACT, meta=f"{KERNELS / 'hinted_branch.py'}:pinned_pair",
                  options=Options(jobs=1, cases=(CASE,), explore=True))
    (c,) = r.cases
    pm = c.path_map
    assert pm is not None and len(pm.paths) == 2 and pm.breaks == ()
    assert {p.outputs for p in pm.paths} == {("(1, 1)",), ("(NW, D)",)}
