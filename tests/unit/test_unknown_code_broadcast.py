"""A Python kernel whose code shapecheck does not know (registered with ``torch.library.impl`` before shapecheck
looked, so torch keeps no handle on it): the answers torch's broadcasting gives under unbacked sizes are still
recorded, so that verify explores the sides where a size is 1, and a contract wrong there fails with real
counterexamples rather than passing on the equal-sizes side alone."""

from __future__ import annotations

import sys

import pytest

LIB = '''
import torch

torch.library.define("bcunknown::scaled", "(Tensor w, Tensor s) -> Tensor")


@torch.library.impl("bcunknown::scaled", "default")
def scaled(w, s):
    return s * w
'''

CONTRACT = """schema = 1
op = "bcunknown::scaled"

[dims]
D0 = { min = 1, max = 64 }
D1 = { min = 1, max = 64 }
E0 = { min = 1, max = 64 }
E1 = { min = 1, max = 64 }

[domain]
requires = ["D0 == E0 or D0 == 1 or E0 == 1", "D1 == E1 or D1 == 1 or E1 == 1"]

[[args]]
name = "w"
kind = "tensor"
dtype = "float32"
shape = "(D0, D1)"

[[args]]
name = "s"
kind = "tensor"
dtype = "float32"
shape = "(E0, E1)"

[[paths]]
id = "same"
when = "true"
outputs = [{ shape = "(OUT0, OUT1)", dtype = "float32" }]
"""


@pytest.mark.slow
@pytest.mark.parametrize("formula,verdict", [(("D0", "D1"), "fail"), (("max(D0, E0)", "max(D1, E1)"), "pass")])
def test_broadcasting_sides_of_a_kernel_of_unknown_code_are_explored(tmp_path, monkeypatch, formula, verdict):
    from shapecheck.prove.verify import Options, verify_op

    if "bcunknown" not in sys.modules:  # registered once per process, before shapecheck looks
        (tmp_path / "bcunknown.py").write_text(LIB)
        monkeypatch.syspath_prepend(str(tmp_path))
        import bcunknown  # noqa: F401

    contract = tmp_path / "c.toml"
    contract.write_text(CONTRACT.replace("OUT0", formula[0]).replace("OUT1", formula[1]))
    r = verify_op("bcunknown::scaled", contract=str(contract), options=Options(jobs=1))
    assert r.verdict.value == verdict, [(v.code, v.expr) for v in r.violations]
    assert r.cases[0].traces > 1  # the sides where D0, E0, D1 or E1 is 1 were traced
    for v in r.violations:
        assert v.code.value == "SC002"
        cex = v.counterexample
        assert (cex["D0"], cex["D1"]) != (max(cex["D0"], cex["E0"]), max(cex["D1"], cex["E1"]))  # really wrong there
