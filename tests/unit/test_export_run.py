"""verify runs the kernel once more as torch.export runs it (backed sizes at the export example, ``prove.helper_guards``)
and that run must be export's own: a size only an int argument carries is an extra input's size there, as
``--confirm-export`` passes it; a ``X % k == 0`` requires makes a derived Dim; the dims export does not make
dynamic stay at the example's value; and a raise in that run is the kernel's error (FakeTensor's conv rule checks
stride lengths only when sizes have hints). Each of these made verify pass where strict export fails."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from shapecheck.findings import Verdict
from shapecheck.render.text import render_text
from shapecheck.rules import RuleCode

LIB = torch.library.Library("sc_backed", "DEF")  # noqa: TOR901 - the test's own namespace
LIB.define("grouped(Tensor x, Tensor w, SymInt C) -> Tensor")
LIB.define("quads(Tensor x) -> Tensor")


@torch.library.register_fake("sc_backed::grouped", lib=LIB)
def _grouped(x, w, C):
    torch._check(C % 2 == 0)
    torch._check(w.numel() == C)
    # a 2-D weight viewed as (2, C // 2): torch's reshape helper asks guard_or_false(B0 % 2 == 0) and the like,
    # which unbacked sizes answer by their fallback and backed sizes (export's) install as guards
    groups = torch.reshape(w, [2, C // 2])
    return x.new_empty((x.shape[0], 2)) + groups.sum(1)


@torch.library.register_fake("sc_backed::quads", lib=LIB)
def _quads(x):
    torch._check(x.shape[0] % 4 == 0)
    # backed, torch's reshape asks A == 4 (the quotient A // 4 is 1): export's derived Dim 4 * A_4 has its
    # root from 2 up, so export never asks it
    return x.reshape(4, x.shape[0] // 4, x.shape[1]).transpose(0, 1).contiguous()


QUADS = """schema = 1
op = "sc_backed::quads"

[dims]
A = { min = 4, max = 4096 }
B = { min = 1, max = 64 }

[domain]
requires = ["A % 4 == 0"]

[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(A, B)"

[[paths]]
id = "all"
when = "true"
outputs = [{ shape = "(A // 4, 4, B)", dtype = "float32" }]
"""

GROUPED = """schema = 1
op = "sc_backed::grouped"

[dims]
N = { min = 1, max = 4096 }
B0 = { min = 1, max = 4096 }
B1 = { min = 1, max = 4096 }
C = { min = 2, max = 4096 }

[domain]
requires = ["C % 2 == 0", "B0 * B1 == C"]

[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(N, 3)"

[[args]]
name = "w"
kind = "tensor"
dtype = "float32"
shape = "(B0, B1)"

[[args]]
name = "C"
kind = "int"
value = "C"

[[paths]]
id = "all"
when = "true"
outputs = [{ shape = "(N, 2)", dtype = "float32" }]
"""

# aten::native_group_norm drafted without a sample call: weight and bias 2-D, their sizes tied to C by
# requires, and N, C and HxW carried by int arguments only
GROUP_NORM = """schema = 1
op = "aten::native_group_norm"

[dims]
A0 = { min = 1 }
A1 = { min = 1 }
B0 = { min = 1 }
B1 = { min = 1 }
C0 = { min = 1 }
C1 = { min = 1 }
N = { min = 1 }
C = { min = 1 }
HxW = { min = 1 }

[choices]
has_weight = [true, false]
has_bias = [true, false]

[domain]
requires = ["C % 2 == 0", "B0 * B1 == C", "C0 * C1 == C", "A1 == C", "A0 * A1 == N * HxW * C", "A0 == N"]

[[args]]
name = "input"
kind = "tensor"
dtype = "float32"
shape = "(A0, A1)"

[[args]]
name = "weight"
kind = "tensor"
dtype = "float32"
shape = "(B0, B1)"
present = "has_weight"

[[args]]
name = "bias"
kind = "tensor"
dtype = "float32"
shape = "(C0, C1)"
present = "has_bias"

[[args]]
name = "N"
kind = "int"
value = "N"

[[args]]
name = "C"
kind = "int"
value = "C"

[[args]]
name = "HxW"
kind = "int"
value = "HxW"

[[args]]
name = "group"
kind = "int"
value = 2

[[args]]
name = "eps"
kind = "float"
value = 1.0

[[paths]]
id = "all"
when = "True"
outputs = [{ shape = "(A0, A1)", dtype = "float32" }, { shape = "(N, 2)", dtype = "float32" }, { shape = "(N, 2)", dtype = "float32" }]
"""

# aten::convolution with a rank-3 input (a 1-D convolution) and two-element stride, padding and dilation lists
CONV1D = """schema = 1
op = "aten::convolution"

[dims]
N = { min = 1, max = 64 }
Cin = { min = 1, max = 64 }
L = { min = 1, max = 4096 }
Cout = { min = 1, max = 64 }
K = { min = 1, max = 16 }

[domain]
requires = ["K <= L"]

[[args]]
name = "input"
kind = "tensor"
dtype = "float32"
shape = "(N, Cin, L)"

[[args]]
name = "weight"
kind = "tensor"
dtype = "float32"
shape = "(Cout, Cin, K)"

[[args]]
name = "bias"
kind = "none"

[[args]]
name = "stride"
kind = "ints"
value = [1, 1]

[[args]]
name = "padding"
kind = "ints"
value = [0, 0]

[[args]]
name = "dilation"
kind = "ints"
value = [1, 1]

[[args]]
name = "transposed"
kind = "bool"
value = false

[[args]]
name = "output_padding"
kind = "ints"
value = [0, 0]

[[args]]
name = "groups"
kind = "int"
value = 1

[[paths]]
id = "all"
when = "true"
outputs = [{ shape = "(N, Cout, L - K + 1)", dtype = "float32" }]
"""


def _verify(op: str, text: str, tmp_path: Path, **options):
    from shapecheck.prove.verify import Options, verify_op

    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    return verify_op(op, contract=str(path), options=Options(jobs=1, **options))


@pytest.mark.slow  # over 0.5 s on an idle core
def test_guards_of_torch_reshape_on_a_derived_dim_and_an_int_only_size_fail_as_export_does(tmp_path):
    report = _verify("sc_backed::grouped", GROUPED, tmp_path, confirm_export=True)
    assert report.verdict is Verdict.FAIL
    helper = [v for v in report.violations if v.code is RuleCode.GUARD_IN_TORCH_HELPER]
    assert {v.expr for v in helper} >= {"B0 != 2"}, [v.message for v in report.violations]
    assert all(v.dims == ("B0",) for v in helper)
    (result,) = report.cases
    assert result.export is not None and result.export.succeeded is False and result.export.agrees is True
    assert "B0" in result.export.message


@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_guard_only_a_derived_dims_root_of_1_meets_is_not_export_s(tmp_path):
    report = _verify("sc_backed::quads", QUADS, tmp_path, confirm_export=True)
    assert report.verdict is Verdict.PASS, [v.message for v in report.violations]
    (result,) = report.cases
    assert result.export is not None and result.export.succeeded is True and result.export.agrees is True


@pytest.mark.slow
def test_inputs_are_built_as_export_builds_them_only_where_the_screen_sees_a_helper_guard(tmp_path, monkeypatch):
    # the export-style run screens each case with inputs made from backed sizes directly; from_tensor's inputs
    # (export's own, the run that is reported) are built only where the screen sees a guard of torch's helpers
    # that restricts a dim
    from shapecheck._torch import backed as B

    built: list[str] = []
    real = B.BackedRun.tensor

    def tensor(self, name, *args, **kwargs):
        built.append(name)
        return real(self, name, *args, **kwargs)

    monkeypatch.setattr(B.BackedRun, "tensor", tensor)
    report = _verify("sc_backed::quads", QUADS, tmp_path)
    assert report.verdict is Verdict.PASS and built == []
    report = _verify("sc_backed::grouped", GROUPED, tmp_path)
    assert {v.expr for v in report.violations if v.code is RuleCode.GUARD_IN_TORCH_HELPER} >= {"B0 != 2"}
    assert set(built) >= {"x", "w"}


@pytest.mark.slow
def test_native_group_norm_agrees_with_export_on_every_case(tmp_path):
    report = _verify("aten::native_group_norm", GROUP_NORM, tmp_path, confirm_export=True)
    by_case = {c.case: c for c in report.cases}
    # with a weight: torch's reshape of the 2-D weight guards B0 under export
    weighted = [c for c in by_case if "has_weight=true" in c]
    assert weighted and all(by_case[c].verdict is Verdict.FAIL for c in weighted)
    assert any(v.code is RuleCode.GUARD_IN_TORCH_HELPER and "B0" in v.dims for v in report.violations)
    # neither weight nor bias: the requires over their dims are no facts of this case (was SC005: KeyError B0)
    bare = by_case["has_weight=false,has_bias=false"]
    assert bare.verdict is Verdict.PASS
    assert not [v for v in report.violations if v.case == bare.case]
    exported = [c.export for c in report.cases if c.export is not None and c.export.agrees is not None]
    assert len(exported) == 4 and all(x.agrees for x in exported), [x.explanation for x in exported]


def test_a_kernel_that_raises_only_with_backed_sizes_is_a_kernel_error(tmp_path):
    report = _verify("aten::convolution", CONV1D, tmp_path)
    assert report.verdict is Verdict.FAIL
    (err,) = [v for v in report.violations if v.code is RuleCode.KERNEL_ERROR]
    assert "expected stride to be a single integer value" in err.expr
    assert "as torch.export runs it" in err.message
    assert err.counterexample and 1 <= err.counterexample["K"] <= err.counterexample["L"]
    # eager rejects the same call, so the finding is the op's, not the fake's alone
    with pytest.raises(RuntimeError, match="expected stride"):
        torch.ops.aten.convolution(torch.ones(2, 3, 8), torch.ones(4, 3, 3), None, [1, 1], [0, 0], [1, 1], False,
                                   [0, 0], 1)


CDIST = """schema = 1
op = "aten::cdist"

[dims]
A = { min = 1 }
B = { min = 1 }
D = { min = 1 }

[[args]]
name = "x1"
kind = "tensor"
dtype = "float32"
shape = "(A, D)"

[[args]]
name = "x2"
kind = "tensor"
dtype = "float32"
shape = "(B, D)"

[[args]]
name = "p"
kind = "float"
value = 2.0

[[args]]
name = "compute_mode"
kind = "none"

[[paths]]
id = "all"
when = "true"
outputs = [{ shape = "(A, B)", dtype = "float32" }]
"""


@pytest.mark.slow
def test_a_cpp_kernels_own_guard_is_the_kernels_not_a_helper_of_the_caller(tmp_path):
    # cdist's C++ composite branches on rows > 25 (its mm path): no Python frame lies between that guard and
    # shapecheck's call, so the frames beyond (pytest's, click's) are no "torch helper" that asked it
    report = _verify("aten::cdist", CDIST, tmp_path)
    assert report.verdict is Verdict.FAIL
    assert {v.expr for v in report.violations if v.code is RuleCode.GUARD_ON_DYNAMIC_DIM} == {"A > 25", "B > 25"}
    assert not [v for v in report.violations if v.code is RuleCode.GUARD_IN_TORCH_HELPER], \
        [v.message for v in report.violations]
    assert not any("pytest" in v.message or "click" in v.message for v in report.violations)


SPLIT = """schema = 1
op = "aten::split.Tensor"

[dims]
A = { min = 1 }
B = { min = 1 }
S = { min = 1 }

[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(A, B)"

[[args]]
name = "split_size"
kind = "int"
value = "S"

[[args]]
name = "dim"
kind = "int"
value = 0

[[paths]]
id = "all"
when = "true"
outputs = ["unspecified"]
"""


@pytest.mark.slow
def test_a_guard_export_keeps_as_a_check_of_its_program_explains_its_success(tmp_path):
    # split's decomposition makes its number of chunks an int (guard_int): strict export succeeds, yet the
    # program it returns asserts that number on its inputs and fails at another split; shapecheck's SC003 stands,
    # and export's outcome is no disagreement (it was "not explained", SC005; then "DISAGREES", explained): the
    # program it returns refuses a point of the contract's domain, as shapecheck's fail says
    report = _verify("aten::split.Tensor", SPLIT, tmp_path, confirm_export=True)
    assert report.verdict is Verdict.FAIL
    assert [v.code for v in report.violations] == [RuleCode.VALUE_SPECIALIZATION]
    (result,) = report.cases
    assert result.export is not None and result.export.succeeded is True and result.export.agrees is True
    assert "agrees with shapecheck's fail" in render_text(report)
    assert "kept the guard as a check of the exported program's inputs" in result.export.explanation
    assert "Guard failed" in result.export.explanation


GLU_OUT = """schema = 1
op = "aten::glu.out"
[dims]
N = { min = 1, max = 512 }
H = { min = 1, max = 512 }
[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(N, 2 * H)"
[[args]]
name = "dim"
kind = "int"
value = "-1"
[[args]]
name = "out"
kind = "tensor"
dtype = "float32"
shape = "(N, H)"
keyword = true
[[paths]]
id = "p"
when = "true"
outputs = ["(N, H)"]
"""


@pytest.mark.slow
def test_an_axis_written_k_times_a_dim_is_exports_derived_dim(tmp_path):
    """A hunt's false SC022: in the export-style run the axis ``2 * H`` was a constant (6 at H = 3), so glu.out's
    ``same_shape`` guarded ``H == 3`` against the dynamic H of ``out``. torch.export, given the derived Dim
    ``2 * H`` as --confirm-export gives it, guards nothing and its program runs at every size tried."""
    from shapecheck.prove.verify import Options, verify_op

    path = tmp_path / "glu_out.toml"
    path.write_text(GLU_OUT)
    r = verify_op("aten::glu.out", contract=str(path), options=Options(jobs=1))
    assert r.verdict == Verdict.PASS and not r.violations

    class Glu(torch.nn.Module):
        def forward(self, x, out):
            return torch.ops.aten.glu.out(x, -1, out=out)

    N, H = torch.export.Dim("N", min=1, max=512), torch.export.Dim("H", min=1, max=512)
    program = torch.export.export(Glu(), (torch.randn(2, 6), torch.empty(2, 3)),
                                  dynamic_shapes=({0: N, 1: 2 * H}, {0: N, 1: H}), strict=True)
    for n, h in ((2, 2), (5, 7), (3, 64)):
        x = torch.randn(n, 2 * h)
        assert program.module()(x, torch.empty(n, h)).shape == torch.nn.functional.glu(x, -1).shape


CHUNK = """schema = 1
op = "aten::chunk"
[dims]
A0 = { min = 1, max = 4096 }
A1 = { min = 1, max = 4096 }
[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(A0, A1)"
[[args]]
name = "chunks"
kind = "int"
value = 2
[[paths]]
id = "p"
when = "true"
outputs = ["unspecified"]
"""


@pytest.mark.slow
def test_a_guard_proved_from_2_up_says_so(tmp_path):
    """A hunt's finding: chunk's ``(A0 + (A0 + 1) // 2 - 1) // ((A0 + 1) // 2) == 2`` was said to hold "for every
    size of A0 in the contract", which starts at 1, where it is 1 (eager gives one chunk): it holds from 2 up,
    the sizes torch.export traces, and the message says that."""
    from shapecheck.prove.verify import Options, verify_op

    path = tmp_path / "chunk.toml"
    path.write_text(CHUNK)
    r = verify_op("aten::chunk", contract=str(path), options=Options(jobs=1))
    proved = [v for v in r.violations if "proved by z3" in v.message]
    assert proved and all("wherever A0 >= 2" in v.message and "every size of A0" not in v.message for v in proved)
    assert len(torch.chunk(torch.empty(1, 3), 2)) == 1  # the claim is false at A0 = 1


@pytest.mark.slow
def test_an_output_record_guard_that_always_holds_is_no_finding_and_export_agrees():
    """A hunt: a guard-free ceil-mode pooling kernel (``torch.sym_ite``) failed with an SC022 "torch.export
    rejects the Dim range", from export's record of the output (``(L + 1) // 2 != 1``, true for every L >= 4).
    The record runs after export's constraint check: it rejects no range. Strict export succeeds, and so does
    verify, with --confirm-export agreeing."""
    from shapecheck.prove.verify import Options, verify_op
    from tests.conftest import KERNELS

    r = verify_op("aten::avg_pool1d", contract=str(KERNELS / "avg_pool1d_ceil.toml"),
                  meta=f"{KERNELS / 'sym_ite_pool.py'}:avg_pool1d_symite",
                  options=Options(jobs=1, confirm_export=True))
    assert r.verdict == Verdict.PASS, [(v.code, v.message) for v in r.violations]
    (case,) = r.cases
    assert case.export is not None and case.export.succeeded and case.export.agrees
