"""What torch.export does with a condition that holds on the whole domain but that torch cannot prove, and with a
guard of torch's helpers that export accepts: verify's verdict must be export's (issue 22).

- A kernel's ``torch._check`` is a guard where sizes have hints (export's backed sizes; verify's trace defers it
  as a runtime assert): one torch cannot decide over one dim makes export reject the range (SC016).
- A condition over two or more dims that torch cannot decide joins export's multivariate constraints, which
  export accepts: no finding (it was a false SC016).
- unfold_backward's decomposition: ``narrow``'s C++ check ``0 <= A0 - min(I0, A0)`` over the derived Dim
  ``A0 = I0 - 1`` (SC016, export fails at every minimum), and a broadcasting guard over two dims that export
  keeps as a check of its program's inputs, which then refuses sizes eager accepts (SC022 with that point).
"""

from __future__ import annotations

import pytest
import torch

from shapecheck.findings import Verdict
from shapecheck.rules import RuleCode
from tests.unit.test_export_run import _verify

LIB = torch.library.Library("sc_undischarged", "DEF")  # noqa: TOR901 - the test's own namespace
LIB.define("checked(Tensor x) -> Tensor")
LIB.define("two_dims(Tensor x) -> Tensor")


@torch.library.register_fake("sc_undischarged::checked", lib=LIB)
def _checked(x):
    n = x.size(0)
    torch._check(2 * (n // 2) - 2 < n)  # true for every n; torch's value ranges cannot show it
    return x.new_empty((n,))


@torch.library.register_fake("sc_undischarged::two_dims", lib=LIB)
def _two_dims(x):
    n, m = x.size(0), x.size(1)
    if n - torch.sym_min(n, m) >= 0:  # true for every n, m; torch cannot decide it either, over two dims
        return x.new_empty((n,))
    return x.new_empty((n + 1,))


def _contract(op: str, shape: str, out: str) -> str:
    dims = "".join(f"{d} = {{ min = 2, max = 1000 }}\n" for d in shape.strip("(,)").split(", "))
    return f"""schema = 1
op = "{op}"

[dims]
{dims}
[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "{shape}"

[[paths]]
id = "all"
when = "True"
outputs = [{{ shape = "{out}", dtype = "float32" }}]
"""


UNFOLD_BACKWARD = """schema = 1
op = "aten::unfold_backward"

[dims]
A0 = { min = 1 }
A1 = { min = 1 }
I0 = { min = 2 }
I1 = { min = 1 }

[choices]
dim = [0]

[domain]
requires = [%s]

[[args]]
name = "grad_in"
kind = "tensor"
dtype = "float32"
shape = "%s"

[[args]]
name = "input_sizes"
kind = "ints"
value = ["I0", "I1"]

[[args]]
name = "dim"
kind = "int"
value = "dim"

[[args]]
name = "size"
kind = "int"
value = 2

[[args]]
name = "step"
kind = "int"
value = 1

[[paths]]
id = "all"
when = "True"
outputs = [{ shape = "(I0, I1)", dtype = "float32" }]
"""
# the real unfold shape: (I0 - 1 windows, I1, the window of 2)
UNFOLD_REAL = UNFOLD_BACKWARD % ('"A0 == I0 - 1", "A1 == I1"', "(A0, A1, 2)")
# a grad of rank 2 with no relation to input_sizes (as `contract draft` wrote it): eager accepts these
UNFOLD_LOOSE = UNFOLD_BACKWARD % ('"A1 > 1"', "(A0, A1)")


@pytest.mark.slow
def test_a_check_torch_cannot_prove_over_one_dim_fails_as_export_does(tmp_path):
    report = _verify("sc_undischarged::checked", _contract("sc_undischarged::checked", "(N,)", "(N,)"), tmp_path,
                     confirm_export=True)
    assert report.verdict is Verdict.FAIL
    (v,) = report.violations
    assert v.code is RuleCode.GUARD_TORCH_CANNOT_DISCHARGE and v.dims == ("N",) and v.counterexample == {}
    assert v.location is not None and v.location.text.startswith("torch._check(2 * (n // 2) - 2 < n)")
    assert "torch._check" in v.message
    (result,) = report.cases
    assert result.export is not None and result.export.succeeded is False and result.export.agrees is True


def test_a_condition_over_two_dims_torch_cannot_decide_passes_as_export_does(tmp_path):
    report = _verify("sc_undischarged::two_dims", _contract("sc_undischarged::two_dims", "(N, M)", "(N,)"),
                     tmp_path, confirm_export=True)
    assert report.verdict is Verdict.PASS, [v.message for v in report.violations]
    (result,) = report.cases
    assert result.export is not None and result.export.succeeded is True and result.export.agrees is True


@pytest.mark.slow
def test_unfold_backward_fails_on_narrows_check_over_a_derived_dim_as_export_does(tmp_path):
    report = _verify("aten::unfold_backward", UNFOLD_REAL, tmp_path, confirm_export=True)
    assert report.verdict is Verdict.FAIL
    (v,) = report.violations  # the one guard export names; not the broadcasting ones torch decides from 2 up
    # a guard that holds on the whole domain but torch cannot prove: SC016 whoever asked (hunt 57), the helper named
    assert v.code is RuleCode.GUARD_TORCH_CANNOT_DISCHARGE and v.counterexample == {}
    assert "aten.narrow" in v.message and set(v.dims) == {"A0", "I0"}
    (result,) = report.cases
    assert result.export is not None and result.export.succeeded is False and result.export.agrees is True


@pytest.mark.slow
def test_a_helper_guard_export_keeps_in_its_program_is_a_finding_at_a_point_eager_accepts(tmp_path):
    report = _verify("aten::unfold_backward", UNFOLD_LOOSE, tmp_path, confirm_export=True)
    assert report.verdict is Verdict.FAIL
    found = [v for v in report.violations if v.code is RuleCode.GUARD_IN_TORCH_HELPER]
    assert found and all("keeps the guard as a check of the exported program's inputs" in v.message for v in found)
    point = found[0].counterexample
    grad = torch.zeros(point["A0"], point["A1"])
    eager = torch.ops.aten.unfold_backward(grad, [point["I0"], point["I1"]], 0, 2, 1)
    assert tuple(eager.shape) == (point["I0"], point["I1"])  # eager takes the counterexample
    (result,) = report.cases
    # export succeeded, but its program refuses a point of the domain: export's outcome is shapecheck's fail
    assert result.export is not None and result.export.succeeded is True and result.export.agrees is True
    assert "Guard failed" in result.export.explanation  # the exported program refuses it


DIAG_EMBED = """schema = 1
op = "aten::diag_embed"

[dims]
B = { min = 0, max = 1000 }
K = { min = 0, max = 1000 }

[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(B, K)"

[[args]]
name = "offset"
kind = "int"
value = 0

[[args]]
name = "dim1"
kind = "int"
value = 2

[[args]]
name = "dim2"
kind = "int"
value = 0

[[paths]]
id = "all"
when = "True"
outputs = [{ shape = "(K, B, K)", dtype = "float32" }]
"""


@pytest.mark.slow
def test_a_guard_or_true_of_the_kernels_own_line_that_sizes_from_2_decide_passes_as_export_does(tmp_path):
    # diag_embed's decomposition ends in `.contiguous()`, whose C++ contiguity check asks guard_or_true of
    # max(1, B) * max(1, K) != B * K: false from 2 up, true at B = 0 only. The unbacked trace takes the fallback
    # and installs nothing; export decides it from its Dim ranges. It was a false SC001 at B=2, K=2.
    report = _verify("aten::diag_embed", DIAG_EMBED, tmp_path, confirm_export=True)
    assert report.verdict is Verdict.PASS, [v.message for v in report.violations]
    (result,) = report.cases
    assert result.export is not None and result.export.succeeded is True and result.export.agrees is True


PIXEL_UNSHUFFLE = """schema = 1
op = "aten::pixel_unshuffle"

[dims]
N = { min = 0, max = 64 }
C = { min = 0, max = 64 }
h = { min = 0, max = 64 }
w = { min = 1, max = 64 }

[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(N, C, 2 * h, 2 * w)"

[[args]]
name = "downscale_factor"
kind = "int"
value = 2

[[paths]]
id = "all"
when = "True"
outputs = [{ shape = "(N, C * 4, h, w)", dtype = "float32" }]
"""


@pytest.mark.slow
def test_the_exported_program_refusing_the_least_point_is_a_note_and_composite_sizes_are_derived_dims(tmp_path):
    # `2 * h` is exported as the derived Dim 2 * h (it was a static 8), and the exported program refuses the
    # contract's least point: export assumes its Dims from 2, and torch's guards there (`x.size(3) // 2 != 1`)
    # stay in the program. A note, not a finding: no guard restricts the kernel over sizes from 2 up.
    report = _verify("aten::pixel_unshuffle", PIXEL_UNSHUFFLE, tmp_path, confirm_export=True)
    assert report.verdict is Verdict.PASS, [v.message for v in report.violations]
    (result,) = report.cases
    x = result.export
    assert x is not None and x.succeeded is True and x.agrees is True
    assert x.refuses == {"N": 0, "C": 0, "h": 0, "w": 1} and "Guard failed" in x.refusal
    assert "// 2" in x.refusal  # a guard over the derived Dim's size, not a static size's equality
    assert x.to_json()["program_refuses"] == {"at": x.refuses, "error": x.refusal, "from_two": False}
    assert x.refused_from_two is False  # at w = 2 the program runs: export's 0/1 assumption refuses w = 1


MAX_POOL = """
schema = 1
op = "aten::max_pool2d_with_indices"

[dims]
N = { min = 1, max = 64 }
C = { min = 1, max = 64 }
H = { min = 2, max = 1024 }
W = { min = 2, max = 1024 }

[let]
OH = "(H - 1) // 2 + 1"
OW = "(W - 1) // 2 + 1"

[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(N, C, H, W)"

[[args]]
name = "kernel_size"
kind = "ints"
value = [3, 3]

[[args]]
name = "stride"
kind = "ints"
value = [2, 2]

[[args]]
name = "padding"
kind = "ints"
value = [1, 1]

[[paths]]
id = "p"
when = "true"
outputs = [{ shape = "(N, C, OH, OW)", dtype = "float32" }, { shape = "(N, C, OH, OW)", dtype = "int64" }]
"""


@pytest.mark.slow
def test_a_refusal_of_sizes_from_2_up_is_the_kept_guard_not_the_0_1_assumption(tmp_path):
    # the least point N = C = 1, H = W = 2 is refused with N and C at 2 as well: the program's guard
    # (W - 1) // 2 + 1 != 1 (SC022) refuses W = 2, not export's assumption that sizes are at least 2
    report = _verify("aten::max_pool2d_with_indices", MAX_POOL, tmp_path, confirm_export=True)
    (result,) = report.cases
    x = result.export
    assert x is not None and x.refuses is not None and x.refused_from_two is True, x
    assert any(v.code is RuleCode.GUARD_IN_TORCH_HELPER for v in report.violations)
    from shapecheck.render.text import render_text

    text = render_text(report)
    assert "a guard the program keeps refuses it" in text and "assumes every dynamic size" not in text


def test_a_derived_dims_root_is_raised_to_2_before_a_refusal_is_called_a_kept_guard(tmp_path):
    """pixel_unshuffle's ``A2 = 2 * R``: the program refuses A2 = 2 (R = 1, below export's Dims) and accepts
    A2 = 4. Raising A2 alone to 2 left R at 1, and the refusal read as a guard the program keeps (the note said
    the findings name torch's guards, where there were none)."""
    from shapecheck.contract.load import load_contract
    from shapecheck.prove.export import DimSpec, _refused_from_two

    path = tmp_path / "c.toml"
    path.write_text(PIXEL_UNSHUFFLE_LIKE)
    (case,) = load_contract(path).cases()
    seen = []

    def run_at(at):
        seen.append(dict(at))
        return "AssertionError: Guard failed: inputs[0].size()[2] // 2 != 1" if at["A2"] // 2 == 1 else None

    specs = {"A2": DimSpec("A2_2", 1, 1 << 30, base="A2_2", a=2, b=0)}
    assert _refused_from_two(case, {"A0": 1, "A2": 2}, run_at, specs) is False
    assert seen == [{"A0": 2, "A2": 4}]
    seen.clear()
    assert _refused_from_two(case, {"A0": 1, "A2": 2}, run_at) is True  # without the spec: the old reading
    assert seen == [{"A0": 2, "A2": 2}]


PIXEL_UNSHUFFLE_LIKE = """
schema = 1
op = "aten::relu"

[dims]
A0 = { min = 1 }
A2 = { min = 2 }

[domain]
requires = ["A2 % 2 == 0"]

[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(A0, A2)"

[[paths]]
id = "p"
when = "True"
outputs = ["(A0, A2)"]
"""
