"""An int argument that the schema types ``SymInt`` (a ``torch.library.custom_op``'s Python ``int``) is a dim of
the audit: traced as one formula for every value, and compared with the eager kernel at drawn points. Those points
give it 2 and 3 besides 0, 1 and past the example: a fake that floors (``D // stride``) where the kernel takes the
ceiling agrees with it at 0, 1 and at 3 for a size of 3, and the audit said its formulas agreed. In-process; the
library is a small file written here."""

from __future__ import annotations

import json

import pytest

from shapecheck.audit.explore import AuditExplorer
from shapecheck.audit.inputs import OpInputs
from shapecheck.audit.points import draw_points
from tests.conftest import invoke

SUBSAMPLE = '''
import torch
from torch.library import custom_op, register_fake


@custom_op("auditsymint::subsample", mutates_args=())
def subsample(x: torch.Tensor, stride: int = 1) -> torch.Tensor:  # schema: SymInt stride=1
    return x[..., ::stride].clone()


@register_fake("auditsymint::subsample")
def _(x, stride=1):
    return x.new_empty(*x.shape[:-1], x.shape[-1] // stride)  # eager: ceil(D / stride)
'''


def test_an_int_argument_made_a_dim_is_drawn_at_2_and_3():
    inputs = OpInputs("x::y", "schema", (("x", False, ("tensor", ("x_0", "x_1"), (3, 3), "float32")),
                                         ("stride", False, ("sym", "stride", 1))))
    points = draw_points(inputs, [], AuditExplorer(None, inputs).near, [])  # type: ignore[arg-type]
    for v in (0, 2, 3):
        assert {"x_0": 3, "x_1": 3, "stride": v} in points, points
    # a tensor's sizes are not: 2 is neither 0, 1 nor past the example
    assert {"x_0": 3, "x_1": 2, "stride": 1} not in points, points


@pytest.mark.slow
def test_a_fake_that_floors_a_symint_stride_is_sc038_at_stride_2(tmp_path):
    (tmp_path / "auditsymint.py").write_text(SUBSAMPLE)
    res = invoke("audit", "--import", str(tmp_path / "auditsymint.py"), "--format", "json", "-j", "1", "--no-cache",
                 "--variants", "0")
    (rec,) = json.loads(res.stdout)["ops"]
    shape = [f for f in rec["findings"] if f["class"] == "eager-shape"]
    # at stride 2: x_1 = 3 drawn for the SymInt, or x_1 = 1 where the fake's formula x_1 // stride is 0
    point = shape[0]["counterexample"] if shape else {}
    assert point.get("stride") == 2 and point["x_1"] % 2 == 1, rec["findings"]
    d = point["x_1"]
    assert f"eager kernel returns [3, {(d + 1) // 2}], the fake [3, {d // 2}]" in shape[0]["message"], shape[0]
    assert "agree" not in (rec["eager"]["evidence"] or ""), rec["eager"]
    assert res.returncode == 1, res.stderr
