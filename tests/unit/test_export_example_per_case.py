"""The export-style run (``prove/helper_guards``) of each case on its own example and with its own symbols, as
torch.export makes them (hunt 44, ``aten::unfold_backward``, whose input ``grad_in`` is ``(F, M, size)`` with
``F = (D - size) // step + 1``):

- the example sizes were kept per domain, not per input shapes, so the case ``step=2`` took the example of
  ``step=1`` (D = 4, where its F is 1 and no guard shows) and passed beside it, while alone it failed, as
  export's program does at D = 4;
- the screen run gave D one symbol where export's inputs give it two (the derived axis ``D - 2`` and the
  int ``D`` carried by an input of its own): the guard relating them, which torch cannot discharge
  ("Constraints violated (D - 2)"), went unseen and the case passed."""

from __future__ import annotations

import pytest
import torch

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import KERNELS

CONTRACT = str(KERNELS / "unfold_backward_steps.toml")
STEP1, STEP2 = "dtype=float32,dim=0,size=3,step=1", "dtype=float32,dim=0,size=3,step=2"


def _findings(case: str | None = None) -> dict[str, set[str]]:
    r = verify_op("aten::unfold_backward", contract=CONTRACT,
                  options=Options(jobs=1, cases=(case,) if case else ()))
    out: dict[str, set[str]] = {}
    for v in r.violations:
        if not v.suppressed:
            out.setdefault(v.case, set()).add(f"{v.code.value} {v.expr}")
    return out


@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_case_has_the_same_findings_alone_and_beside_a_case_of_the_same_domain():
    both = _findings()
    assert both[STEP2] == _findings(STEP2)[STEP2]
    assert "SC022 min((D - 3) // 2 + 1, (D - 1) // 2) != 1" in both[STEP2]


@pytest.mark.slow
def test_a_guard_between_a_derived_axis_and_its_dims_own_input_is_found():
    found = _findings(STEP1)[STEP1]
    # a helper's guard that holds but torch cannot prove over one dim: SC016 whoever asked (hunt 57)
    assert found and all(f.startswith("SC016 ") for f in found), found
    # (its text is torch's at export's example: min(D - 2, D - 1), or min(D - 1, D - 2) at another example)
    assert any("min(D - 2, D - 1)" in f or "min(D - 1, D - 2)" in f for f in found), found


@pytest.mark.slow  # two strict exports
def test_strict_export_refuses_both_cases_as_verify_says():
    from torch.export import Dim, export

    class M(torch.nn.Module):
        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

        def forward(self, g, d):
            return torch.ops.aten.unfold_backward(g, [d.size(0), g.size(1)], 0, 3, self.step)

    D, Mdim = Dim("D", min=4, max=65536), Dim("M", min=1, max=4096)
    with pytest.raises(Exception, match=r"Constraints violated \(D - 2\)"):
        export(M(1), (torch.randn(5, 2, 3), torch.empty(7)), dynamic_shapes={"g": {0: D - 2, 1: Mdim}, "d": {0: D}},
               strict=True)
    # step 2: F = (D - 3) // 2 + 1 is no Dim of D's; export takes a Dim of its own for it and keeps the guard
    F = Dim("F", min=1, max=32767)
    ep = export(M(2), (torch.randn(3, 2, 3), torch.empty(7)), dynamic_shapes={"g": {0: F, 1: Mdim}, "d": {0: D}},
                strict=True)
    assert M(2)(torch.randn(1, 2, 3), torch.empty(4)).shape == (4, 2)  # eager takes D = 4
    with pytest.raises(Exception, match="Guard failed"):
        ep.module()(torch.randn(1, 2, 3), torch.empty(4))
    r = verify_op("aten::unfold_backward", contract=CONTRACT, options=Options(jobs=1))
    assert r.verdict is Verdict.FAIL and {c.case for c in r.cases if c.verdict is Verdict.FAIL} == {STEP1, STEP2}


@pytest.mark.slow  # a strict export and the program's runs
def test_confirm_export_calls_a_pass_whose_program_refuses_a_domain_point_a_disagreement():
    """Where shapecheck passed a case and the exported program refuses a point of the domain with its sizes from 2
    too (a guard it keeps), --confirm-export said "agrees" and its note blamed findings there were none of: it is a
    disagreement (the step=2 case as the example kept per domain once passed it)."""
    from shapecheck.kernel import sources
    from shapecheck.kernel.load import load_target
    from shapecheck.prove.export import confirm
    from shapecheck.prove.verify import make_solver
    from shapecheck.result.report import CaseResult

    contract, kernel = load_target("aten::unfold_backward", CONTRACT, sources.from_options(None, None))
    case = next(c for c in contract.cases() if c.id == STEP2)
    solver = make_solver(contract, 2_000)
    x = confirm(case, CaseResult(STEP2, Verdict.PASS), [], kernel, torch.ops.aten.unfold_backward.default, solver)
    assert x.succeeded is True and x.refused_from_two is True, x
    assert x.agrees is False and "a guard the program keeps, which shapecheck did not report" in x.explanation, x
    assert x.explanation.startswith("not explained")  # so verify makes it SC005: the run is inconclusive, no pass
