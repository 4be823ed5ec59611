"""torch.export records each output's metadata (its contiguity in each memory format), which with backed sizes
guards an output size against 1; the example that run takes must give every output size 2 or more, or the record
is left out. constant_pad_nd with negative pads (hunt 42): every dim from 16 gave the width W - PL - PR = 0, and
the guards export keeps (the program refuses a width of 1) went unreported."""

from __future__ import annotations

import pytest
import torch

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import KERNELS

pytestmark = pytest.mark.slow  # a strict export besides the verify


def test_the_guard_export_keeps_on_a_cropped_width_of_1_is_found_and_the_program_refuses_it():
    r = verify_op("aten::constant_pad_nd", contract=str(KERNELS / "constant_pad_negative.toml"), options=Options(jobs=1))
    assert r.verdict is Verdict.FAIL and {v.code.value for v in r.violations if not v.suppressed} == {"SC022"}
    [v] = [v for v in r.violations if v.expr == "W + -PL + -PR != 1"]
    p = v.counterexample
    assert p["W"] - p["PL"] - p["PR"] == 1
    from torch.export import Dim, export

    class M(torch.nn.Module):
        def forward(self, x, pl, pr):
            return torch.ops.aten.constant_pad_nd(x, [-pl.size(0), -pr.size(0)], 0.0)

    dims = {"x": {0: Dim("N", min=1, max=4096), 1: Dim("H", min=1, max=16384), 2: Dim("W", min=4, max=16384)},
            "pl": {0: Dim("PL", min=0, max=1024)}, "pr": {0: Dim("PR", min=0, max=1024)}}
    ep = export(M(), (torch.zeros(2, 20, 30), torch.zeros(3), torch.zeros(4)), dynamic_shapes=dims, strict=True)
    x, pl, pr = torch.zeros(p["N"], p["H"], p["W"]), torch.zeros(p["PL"]), torch.zeros(p["PR"])
    assert M()(x, pl, pr).shape[2] == 1  # eager takes it
    with pytest.raises(Exception, match="Guard failed"):
        ep.module()(x, pl, pr)
