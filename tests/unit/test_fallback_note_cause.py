"""An SC002 at a point where a guard_or_* fallback took the side its condition does not have there is blamed on the
fallback only where the output is right on the fallback's own side; an output wrong on both sides is moved to a
point of that side, with no word of the fallback (hunt 56: triangular_solve's ignored batch broadcast was said to
come from a helper's ``guard_or_false(N == 0)`` at N = 0)."""

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode

CONTRACT = """schema = 1
op = "aten::new_empty"

[dims]
N = { min = 0, max = 4096 }

[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(N,)"

[[args]]
name = "size"
kind = "ints"
value = "(N,)"

[[paths]]
id = "only"
when = "true"
outputs = ["(N,)"]
"""

KERNELS = """import torch
from torch.fx.experimental.symbolic_shapes import guard_or_false


def wrong_everywhere(self, size):
    if guard_or_false(size[0] == 0):
        return self.new_empty((0,))
    return self.new_empty((size[0] + 1,))


def wrong_at_zero(self, size):
    if guard_or_false(size[0] == 0):
        return self.new_empty((0,))
    return self.new_empty((torch.sym_max(size[0], 1),))
"""


@pytest.mark.slow
def test_a_wrong_output_on_both_sides_is_not_blamed_on_the_fallback_and_one_wrong_only_there_is(tmp_path):
    (tmp_path / "c.toml").write_text(CONTRACT)
    (tmp_path / "k.py").write_text(KERNELS)

    def run(kernel):
        r = verify_op("aten::new_empty", contract=str(tmp_path / "c.toml"), meta=f"{tmp_path / 'k.py'}:{kernel}",
                      options=Options(jobs=1))
        assert r.verdict is Verdict.FAIL
        return [v for v in r.violations if v.code is RuleCode.OUTPUT_SHAPE_MISMATCH]

    (v,) = run("wrong_everywhere")
    assert v.counterexample["N"] != 0 and "fallback" not in v.message, v.message
    (v,) = run("wrong_at_zero")
    assert v.counterexample["N"] == 0 and "takes its fallback side" in v.message, v.message
