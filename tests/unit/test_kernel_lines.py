"""Where a finding points in the kernel: a ``--meta FILE:FUNC`` whose body lies in another file (made there with
``exec``, as a harness loads a PR's kernel), the line that set a data-dependent size's least value, and a
decorated kernel's ``def`` line."""

from __future__ import annotations

from pathlib import Path

import pytest

from shapecheck.findings import Verdict
from tests.conftest import KERNELS, ROOT

NONZERO = """schema = 1
op = "aten::nonzero"

[dims]
N = { min = 1, max = 64 }
D = { min = 1, max = 64 }

[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(N, D)"

[[paths]]
id = "indices"
when = "true"
outputs = [{ shape = "(n, 2)", sizes = { n = { min = "0", max = "N * D" } }, dtype = "int64", layout = "(1, 0)" }]
"""

NEG = """schema = 1
op = "aten::neg"

[dims]
N = { min = 1, max = 64 }
D = { min = 1, max = 64 }

[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(N, D)"

[[paths]]
id = "same"
when = "true"
outputs = [{ shape = "(N, D)", dtype = "float32" }]
"""

# the kernels' bodies: loaded with exec by the --meta file, so their code is this file's, not the --meta file's
BODY = '''import sys
import torch
from torch._guards import detect_fake_mode


def register(fn):
    return fn


@register
def meta_nonzero(self):
    from torch.fx.experimental.symbolic_shapes import constrain_range
    nnz = detect_fake_mode(self).shape_env.create_unbacked_symint()
    constrain_range(nnz, min=2, max=sys.maxsize - 1)
    return self.new_empty_strided((nnz, self.dim()), (1, nnz), dtype=torch.int64)


@register
def meta_neg(self):
    if self.shape[0] == 3:
        return self.new_empty(self.shape)
    wrong = self.new_empty((self.shape[0],))
    return wrong
'''

HARNESS = '''import os
import torch._meta_registrations as _mr

_here = os.path.dirname(os.path.abspath(__file__))
_path = os.path.join(_here, "body.py")
_g = dict(vars(_mr))
exec(compile(open(_path).read(), _path, "exec"), _g)
nonzero = _g["meta_nonzero"]
neg = _g["meta_neg"]
'''


def _files(tmp_path: Path) -> Path:
    (tmp_path / "body.py").write_text(BODY, encoding="utf-8")
    (tmp_path / "harness.py").write_text(HARNESS, encoding="utf-8")
    (tmp_path / "nonzero.toml").write_text(NONZERO, encoding="utf-8")
    (tmp_path / "neg.toml").write_text(NEG, encoding="utf-8")
    return tmp_path


def _line(text: str) -> int:
    return next(i for i, line in enumerate(BODY.splitlines(), 1) if text in line)


@pytest.mark.slow  # about 2.5 s: the rank-2 guard's both sides
def test_a_function_defined_in_another_file_is_the_kernels_own_code(tmp_path):
    from shapecheck.kernel.load import function_kernel
    from shapecheck.prove.verify import Options, verify_op

    d = _files(tmp_path)
    k = function_kernel(str(d / "harness.py"), "neg", "aten::neg")
    assert k.codes and str((d / "body.py").resolve()) in k.located_in
    assert k.definition is not None and k.definition.line == _line("def meta_neg")  # not the decorator's
    r = verify_op("aten::neg", contract=str(d / "neg.toml"), meta=f"{d / 'harness.py'}:neg", options=Options(jobs=1))
    assert r.verdict == Verdict.FAIL
    by_code = {v.code.value: v for v in r.violations}
    # the guard in the body is the kernel's own branch, at its line of body.py
    guard = by_code["SC001"]
    assert guard.location.file.endswith("body.py") and guard.location.line == _line("self.shape[0] == 3")
    # the wrong output is placed at the line that made it, in body.py
    shape = next(v for v in r.violations if v.code.value == "SC002")
    assert shape.location.file.endswith("body.py") and shape.location.line == _line("wrong = ")


def test_a_data_dependent_sizes_least_value_is_located_where_the_kernel_set_it(tmp_path):
    from shapecheck.prove.verify import Options, verify_op

    d = _files(tmp_path)
    r = verify_op("aten::nonzero", contract=str(d / "nonzero.toml"), meta=f"{d / 'harness.py'}:nonzero",
                  options=Options(jobs=1))
    ranged = [v for v in r.violations if v.code.value == "SC020"]
    assert ranged and all(v.counterexample["n"] in (0, 1) for v in ranged)
    assert {v.location.line for v in ranged} == {_line("constrain_range(nnz")}
    assert all("starts at 2" in v.fix and "constrain_range" in v.fix for v in ranged)


@pytest.mark.slow
def test_a_guard_in_a_users_own_helper_module_is_the_kernels_sc001_at_its_line():
    """The same guard gave SC001 at the helper's line where the helper was in the kernel's file, and "SC022
    guard-in-torch-helper ... the guard is torch's" at the caller's line where it was in another module of the
    user's. A module of the user's project (not torch's, not an installed package's) is the kernel's own code."""
    from shapecheck.prove.verify import Options, verify_op

    r = verify_op("aten::new_empty", contract=str(ROOT / "tests" / "golden" / "examples" / "new_empty.toml"),
                  meta=f"{KERNELS / 'user_helper_kernel.py'}:kernel", options=Options(jobs=1))
    (v,) = r.violations
    assert v.code == "SC001" and v.location.file.endswith("user_helpers.py") and v.location.function == "checked_len"
    assert "n > 8" in v.location.text and (v.counterexample["N"] > 8) != (v.witness["N"] > 8)
