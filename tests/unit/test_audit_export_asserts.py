"""The audit reports an assert that holds for every input but that torch.export cannot prove over one size (SC035):
under unbacked sizes torch defers it and the fake agrees with its eager kernel everywhere, so the op passed, yet
strict export of it fails (hunt 55). Kernels: tests/kernels/audit_export_asserts.py."""

from __future__ import annotations

import pytest
import torch


@pytest.mark.slow  # an audit
def test_an_assert_export_cannot_prove_is_found_and_its_provable_twin_is_clean():
    from shapecheck.audit.run import run_audit

    run = run_audit(("auditasserts::*",), ("tests.kernels.audit_export_asserts",), jobs=1)
    recs = {r["op"].split("::")[1]: r for r in run.records}
    found = recs["back_half.default"]["findings"]
    assert [f["class"] for f in found] == ["undischargeable"], found
    assert "torch.export" in found[0]["message"] and "x_0" in found[0]["expr"]
    assert recs["back_half_ranged.default"]["status"] == "clean", recs["back_half_ranged.default"]


@pytest.mark.slow  # two strict exports
def test_strict_export_agrees_with_the_audit_on_both_fakes():
    import tests.kernels.audit_export_asserts  # noqa: F401 - registers the ops

    class M(torch.nn.Module):
        def __init__(self, op):
            super().__init__()
            self.op = op

        def forward(self, x):
            return self.op(x)

    x = torch.zeros(6, 3)
    dims = {"x": {0: torch.export.Dim("n", min=2, max=4096)}}
    torch.export.export(M(torch.ops.auditasserts.back_half_ranged), (x,), dynamic_shapes=dims, strict=True)
    with pytest.raises(Exception, match="Constraints violated|not in range|guard"):
        torch.export.export(M(torch.ops.auditasserts.back_half), (x,), dynamic_shapes=dims, strict=True)
