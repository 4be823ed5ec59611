"""A torch.library fake is called through torch's dispatch, which hides the calls that make its outputs from a
torch function mode: its output findings are placed at the line it returned from, not at its ``def``."""

from __future__ import annotations

import inspect

import pytest

from shapecheck.rules import RuleCode
from tests.kernels.fake_lines import half, short
from tests.unit.test_export_run import _verify


def _contract(op: str, shape: str, dtype: str) -> str:
    return f"""schema = 1
op = "{op}"

[dims]
N = {{ min = 1, max = 1000 }}

[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(N,)"

[[paths]]
id = "all"
when = "True"
outputs = [{{ shape = "{shape}", dtype = "{dtype}" }}]
"""


def _return_line(fn) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, t in enumerate(lines) if t.strip().startswith("return"))


@pytest.mark.parametrize("op, shape, dtype, code, fn", [
    ("sc_lines::short", "(N + 1,)", "float32", RuleCode.OUTPUT_SHAPE_MISMATCH, short),
    ("sc_lines::half", "(N,)", "float16", RuleCode.OUTPUT_DTYPE_MISMATCH, half),
])
def test_an_output_finding_of_a_library_fake_is_at_its_return_line(tmp_path, op, shape, dtype, code, fn):
    report = _verify(op, _contract(op, shape, dtype), tmp_path)
    (v,) = [v for v in report.violations if v.code is code]
    assert v.location is not None and v.location.line == _return_line(fn), v.location
    assert v.location.text.startswith("return x.new_empty((n,))")


DOT = """schema = 1
op = "sc_lines::dot"

[dims]
N = { min = 1, max = 1000 }
M = { min = 1, max = 1000 }

[[args]]
name = "a"
kind = "tensor"
dtype = "float32"
shape = "(N,)"

[[args]]
name = "b"
kind = "tensor"
dtype = "float32"
shape = "(M,)"

[[rejects]]
id = "lengths"
when = "N != M"
message = "inconsistent tensor size"

[[paths]]
id = "all"
when = "True"
outputs = [{ shape = "()", dtype = "float32" }]
"""


def test_a_rejected_input_a_library_fake_accepts_is_at_its_return_line(tmp_path):
    from tests.kernels.fake_lines import dot

    report = _verify("sc_lines::dot", DOT, tmp_path)
    (v,) = [v for v in report.violations if v.code is RuleCode.META_ACCEPTS_REJECTED_INPUT]
    assert v.location is not None and v.location.line == _return_line(dot), v.location
