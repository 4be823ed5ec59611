"""Issue 22, as found: the kernel verified is the one torch runs (FakeTensor's own rules, upsample_nearest2d's two
kernels, candidates in torch's slot), guards torch's helpers install under export are SC022 and a helper's
guard_or_false export settles is not, fuzz runs fakes as torch does (data-dependent fakes), and the smaller
items: findings never located in the caller (click), torch files relative to site-packages, SC020's fix for
the side of the range that is wrong, an export explanation naming the output it is about."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

from shapecheck.findings import Verdict
from tests.conftest import KERNELS, ROOT

TORCH_FILE = "torch/_meta_registrations.py"


def _verify(op, contract, **kw):
    from shapecheck.prove.verify import Options, verify_op

    options = kw.pop("options", Options(jobs=1))
    return verify_op(op, contract=str(contract), options=options, **kw)


def _contract(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


UPSAMPLE = """schema = 1
op = "aten::upsample_nearest2d"

[dims]
N = { min = 0, max = 64 }
C = { min = 1, max = 64 }
H = { min = 1, max = 64 }
W = { min = 1, max = 64 }

[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(N, C, H, W)"

[[args]]
name = "output_size"
kind = "ints"
value = "(8, 8)"

[[paths]]
id = "all"
when = "true"
outputs = ["(N, C, 8, 8)"]
"""

MASKED_SELECT = """schema = 1
op = "aten::masked_select"

[dims]
A = { min = 1, max = 64 }
B = { min = 1, max = 64 }

[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(A, B)"

[[args]]
name = "mask"
kind = "tensor"
dtype = "bool"
shape = "(A, B)"

[[paths]]
id = "all"
when = "true"
outputs = [{ shape = "(n,)", sizes = { n = { min = "0", max = "A * B" } } }]
"""

REPEAT_INTERLEAVE = """schema = 1
op = "aten::repeat_interleave.Tensor"

[dims]
N = { min = 1, max = 64 }

[[args]]
name = "repeats"
kind = "tensor"
dtype = "int64"
shape = "(N,)"
low = "0"
high = "4"

[[paths]]
id = "all"
when = "true"
outputs = [{ shape = "(n,)", sizes = { n = { min = "0", max = "3 * N" } } }]
"""


# ---------------------------------------------------------------------------------------------------------
# Which kernel


def test_an_op_whose_fake_is_a_fake_tensor_rule_is_verified_and_named(tmp_path):
    r = _verify("aten::masked_select", _contract(tmp_path, "m.toml", MASKED_SELECT))
    assert r.verdict.value == "pass", [v.message for v in r.violations]
    assert "FakeTensor rule fake_impls.masked_select at torch/_subclasses/fake_impls.py:" in r.kernel


@pytest.mark.slow
def test_upsample_nearest2d_both_kernels_are_checked_and_export_decides_the_exit_code(tmp_path):
    contract = _contract(tmp_path, "u.toml", UPSAMPLE)
    r = _verify("aten::upsample_nearest2d", contract)
    assert r.verdict.value == "pass" and r.exit_code == 0
    export, fake = r.kernel_modes
    assert "decomposition" in export.kernel and "torch/_decomp/decompositions.py" in export.kernel
    assert export.verdict is Verdict.PASS and "torch.export" in export.runs
    assert "Python meta registration" in fake.kernel and fake.verdict is Verdict.FAIL and "plain" in fake.runs
    raised = [v for v in r.violations if v.code == "SC007"]
    assert raised and all(v.mode == "fake" and v.suppressed and "TypeError" in v.expr for v in raised)
    assert all(v.counterexample.get("N") == 0 for v in raised)

    from shapecheck.prove.verify import Options

    both = _verify("aten::upsample_nearest2d", contract, options=Options(jobs=1, both_modes=True))
    assert both.verdict.value == "fail" and both.exit_code == 1


@pytest.mark.slow
def test_meta_source_on_a_copy_of_torchs_file_checks_the_registration_where_torch_runs_it(tmp_path):
    """The copy's register_meta is what plain FakeTensorMode runs, not what export runs: it is checked there and
    fails at N = 0 as the installed kernel does, while export's kernel (the installed decomposition) decides, as
    for the installed torch; the report says export runs another kernel."""
    import torch

    copy = tmp_path / "_meta_registrations.py"
    copy.write_text((Path(torch.__file__).parent / "_meta_registrations.py").read_text(encoding="utf-8"))
    r = _verify("aten::upsample_nearest2d", _contract(tmp_path, "u.toml", UPSAMPLE), meta_source=str(copy))
    assert r.verdict.value == "pass"
    export, fake = r.kernel_modes
    assert "decompositions.py" in export.kernel and fake.kernel == "_meta_registrations.py:upsample_nearest2d"
    assert fake.verdict is Verdict.FAIL
    assert any(v.code == "SC007" and "TypeError" in v.expr and v.suppressed for v in r.violations)
    assert any("torch.export" in n and "is not reached there" in n for n in r.notes), r.notes


@pytest.mark.slow
def test_a_candidate_that_calls_its_own_op_reaches_torchs_kernel_for_the_inner_call():
    r = _verify("aten::new_empty", ROOT / "tests" / "golden" / "examples" / "new_empty.toml",
                meta=f"{ROOT / 'tests' / 'golden' / 'examples' / 'sc001_guard_on_dynamic_dim.py'}:kernel")
    assert [v.code for v in r.violations] == ["SC001"]


@pytest.mark.slow
def test_export_reaches_a_candidate_in_its_slot(tmp_path):
    from shapecheck.prove.verify import Options

    r = _verify("aten::new_empty", ROOT / "tests" / "golden" / "examples" / "new_empty.toml",
                meta=f"{ROOT / 'tests' / 'golden' / 'examples' / 'sc022_guard_in_torch_helper.py'}:kernel",
                options=Options(jobs=1, confirm_export=True))
    (case,) = r.cases
    assert case.export.ran and case.export.succeeded is False and case.export.agrees is True


# ---------------------------------------------------------------------------------------------------------
# Guards torch's helpers install


@pytest.mark.slow
def test_native_group_norm_passes_and_export_agrees():
    """should_expand's guard_or_false(N != 1) is torch's and export settles it: no SC001 (issue 22, item 3)."""
    from shapecheck.prove.verify import Options

    r = _verify("aten::native_group_norm", KERNELS / "native_group_norm.toml",
                options=Options(jobs=1, confirm_export=True))
    assert r.verdict.value == "pass", [(v.code, v.expr) for v in r.violations]
    assert all(c.export.agrees is True for c in r.cases)


@pytest.mark.parametrize(("case", "verdict"), [("rank=4,kernel=3,dilation=1,padding=0,stride=1", "fail"),
                                              ("rank=4,kernel=1,dilation=1,padding=0,stride=2", "fail"),
                                              ("rank=4,kernel=1,dilation=1,padding=0,stride=1", "pass"),
                                              ("rank=3,kernel=3,dilation=2,padding=1,stride=2", "fail"),
                                              ("rank=3,kernel=1,dilation=2,padding=1,stride=1", "pass")])
@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_im2col_fails_on_torchs_helper_guards_exactly_where_export_fails(case, verdict):
    from shapecheck.prove.verify import Options

    r = _verify("aten::im2col", ROOT / "contracts" / "aten" / "im2col.toml",
                options=Options(jobs=1, cases=(case,), confirm_export=True))
    (result,) = r.cases
    # the shipped contract accepts these guards ([[suppress]] of SC022 with its reason), so the verdict is a
    # pass; the findings under it are what must match export
    helper = [v for v in r.violations if v.code == "SC022"]
    assert bool(helper) == (verdict == "fail"), [(v.code, v.expr) for v in r.violations]
    assert all(v.suppressed for v in helper) and r.verdict.value == "pass", [(v.code, v.expr) for v in r.violations]
    assert result.export.ran and result.export.agrees is True, result.export
    # a z3 give-up on an output formula (SC005, the machine loaded) is not what this test is about; any other
    # finding than torch's helpers' guards is
    codes = {v.code for v in r.violations if not (v.code == "SC005" and "z3 could not" in v.message)}
    assert codes <= {"SC022"}, [(v.code, v.expr, v.message) for v in r.violations]
    if verdict == "fail":
        found = [v for v in r.violations if v.code == "SC022"]
        assert all(v.location.file.endswith("decompositions.py") and "torch's helper" in v.message
                   or "C++ kernel" in v.message for v in found)


def test_an_unexplained_disagreement_with_export_is_inconclusive(monkeypatch):
    """--confirm-export: export's verdict contradicting shapecheck's with no established cause is SC005."""
    from shapecheck.prove import export as X
    from shapecheck.prove.verify import Options

    monkeypatch.setattr(X, "run_export", lambda *a, **k: (False, "RuntimeError: something else entirely", ""))
    r = _verify("aten::new_empty", ROOT / "tests" / "golden" / "examples" / "new_empty.toml",
                options=Options(jobs=1, confirm_export=True))
    assert r.verdict.value == "inconclusive" and r.exit_code == 3
    assert any(v.code == "SC005" and v.expr == "torch.export disagrees" for v in r.violations)


# ---------------------------------------------------------------------------------------------------------
# fuzz runs fakes as torch does


@pytest.mark.slow
def test_fuzz_runs_a_data_dependent_fake_rule(tmp_path):
    from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op

    for op, text in (("aten::repeat_interleave.Tensor", REPEAT_INTERLEAVE), ("aten::masked_select", MASKED_SELECT)):
        report = fuzz_op(op, contract=_contract(tmp_path, "c.toml", text), options=FuzzOptions(examples=15, seed=0))
        assert report.verdict == "pass", [f.message for f in report.failures]


@pytest.mark.slow
def test_fuzz_runs_a_fake_that_asks_for_a_dynamic_size_and_replays_with_its_import():
    import tests.kernels.filter_ops  # noqa: F401 - registers the ops
    from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op

    fixed = fuzz_op("sc_filter::keep_positive_fixed", contract=str(KERNELS / "filter_ops_fixed.toml"),
                    options=FuzzOptions(examples=15, seed=0))
    assert fixed.verdict == "pass", [f.message for f in fixed.failures]
    bad = fuzz_op("sc_filter::keep_positive", contract=str(KERNELS / "filter_ops.toml"),
                  options=FuzzOptions(examples=15, seed=0))
    (failure,) = [f for f in bad.failures if f.code == "SC020"]
    assert "--import tests/kernels/filter_ops.py" in failure.replay and "--import" in bad.replay


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_the_pytest_entry_passes_correct_data_dependent_fakes_and_fails_the_wrong_one():
    """The pytest entry runs the fake as torch does too: a fake asking for a dynamic size and FakeTensor's own
    rule for masked_select pass; the fake whose size starts at 2 (create_unbacked_symint) fails."""
    from hypothesis import settings

    import tests.kernels.filter_ops  # noqa: F401 - registers the ops
    from shapecheck import fuzz_test

    quick = settings(max_examples=15, database=None, deadline=None)
    op = "sc_filter::keep_positive_fixed"
    quick(fuzz_test(op, contract=str(KERNELS / "filter_ops_fixed.toml"), verify_examples=False))(op=op)
    bad = "sc_filter::keep_positive"
    with pytest.raises(Exception) as info:
        quick(fuzz_test(bad, contract=str(KERNELS / "filter_ops.toml"), verify_examples=False))(op=bad)
    assert "SC020" in str(info.value) and "--import tests/kernels/filter_ops.py" in str(info.value)


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_fuzz_sees_the_guard_verify_reports_on_a_kernel_with_right_outputs():
    """branches_on_query_length returns the right output 0 on both sides of L <= 8 (it used to pass fuzzing)."""
    from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op
    from tests.conftest import SDPA_CONTRACT, SDPA_MPS

    report = fuzz_op(SDPA_MPS, contract=str(SDPA_CONTRACT), meta=f"{KERNELS / 'fuzz_mutants.py'}:branches_on_query_length",
                     options=FuzzOptions(examples=10, seed=0, cases=("rank=4,mask=none,is_causal=false,dtype=float32,"
                                                                     "enable_gqa=false",), verify_examples=False))
    assert any(f.check == "guard" and f.code == "SC001" and "L <= 8" in f.got for f in report.failures)


# ---------------------------------------------------------------------------------------------------------
# The smaller items


def test_a_finding_without_a_kernel_frame_is_never_located_in_the_caller():
    """SC004 was located at click/core.py:911: the innermost frame outside torch and shapecheck, above the
    call. Frames above shapecheck's own call are the caller's, never the kernel's."""
    from shapecheck._torch import core as C

    frames = [traceback.FrameSummary("/site/click/core.py", 911, "invoke", line="x"),
              traceback.FrameSummary(str(Path(C.SHAPECHECK_DIR) / "trace" / "run.py"), 10, "trace_case", line="x"),
              traceback.FrameSummary(str(Path(C.TORCH_DIR) / "_ops.py"), 5, "__call__", line="x")]
    assert C.kernel_frame(frames, set()) is None
    mine = traceback.FrameSummary("/home/me/helpers.py", 3, "helper", line="x")
    assert C.kernel_frame(frames[:2] + [mine] + frames[2:], set()).file == "/home/me/helpers.py"


def test_a_raise_while_handling_the_kernels_own_error_is_located_at_the_kernels_line():
    """hunt 39: FakeTensorMode raises UnsupportedOperatorException in its dispatch while handling the kernel's own
    error (a data-dependent index); only the handled error's traceback holds the kernel's line."""
    from shapecheck._torch import core as C

    def kernel():
        raise NotImplementedError("nonzero")  # the kernel's own line

    def dispatch():
        try:
            kernel()
        except NotImplementedError:
            raise RuntimeError("UnsupportedOperatorException")  # noqa: B904 - as FakeTensorMode raises it

    try:
        dispatch()
    except RuntimeError as err:
        here = C.kernel_frame(C.exception_frames(err), {__file__})
        assert here is not None and here.function == "kernel", here
    try:
        try:
            kernel()
        except NotImplementedError:
            raise RuntimeError("told apart") from None
    except RuntimeError as err:  # ``from None``: the handled error is not this one's story
        assert all(f.name != "kernel" for f in C.exception_frames(err))


def test_a_package_init_kernel_file_is_labelled_with_its_folder():
    """hunt 39: a copy of torch's ``_refs/nn/functional/__init__.py`` was labelled ``__init__.py:glu``."""
    from shapecheck.kernel.load import _file_label

    assert _file_label(Path("k/_refs/nn/functional/__init__.py")) == "functional/__init__.py"
    assert _file_label(Path("k/regressed_registrations.py")) == "regressed_registrations.py"


def test_torch_files_are_shown_relative_to_site_packages(tmp_path, monkeypatch):
    import torch

    from shapecheck.paths import relpath

    monkeypatch.chdir(tmp_path)
    assert relpath(str(Path(torch.__file__).parent / "_meta_registrations.py")) == TORCH_FILE
    monkeypatch.chdir(Path(torch.__file__).parent.parent.parent)  # a folder above site-packages
    assert relpath(str(Path(torch.__file__).parent / "_meta_registrations.py")) == TORCH_FILE


def test_sc020_fix_names_the_maximum_when_the_maximum_is_wrong(tmp_path):
    import tests.kernels.filter_ops  # noqa: F401 - registers the ops

    text = (KERNELS / "filter_ops_fixed.toml").read_text().replace('max = "N"', 'max = "N + 1"')
    r = _verify("sc_filter::keep_positive_fixed", _contract(tmp_path, "f.toml", text))
    (v,) = [v for v in r.violations if v.code == "SC020"]
    assert "maximum" in v.fix and "minimum" not in v.fix
    low = _verify("sc_filter::keep_positive", KERNELS / "filter_ops.toml")
    (w,) = [v for v in low.violations if v.code == "SC020"]
    assert "new_dynamic_size()" in w.fix and "starts at 2" in w.fix and "maximum" not in w.fix


def test_an_export_explanation_names_the_output_of_the_finding():
    from shapecheck.contract.load import load_contract
    from shapecheck.findings import Violation
    from shapecheck.logic import expr as E
    from shapecheck.prove.export import explain
    from shapecheck.prove.verify import make_solver

    c = load_contract(str(ROOT / "tests" / "golden" / "examples" / "new_empty.toml"))
    case = next(iter(c.cases()))
    v = Violation(code="SC002", case=case.id, path="only", expr="output 1 = (N + 1,), contract (N,)",
                  counterexample={"N": 1}, message="", expected=E.TupleE((E.Var("N"),)))
    text = explain(case, [v], True, "export succeeded", make_solver(c, 2000))
    assert "output 1 should be" in text and "output 0" not in text


def test_an_sc020_finding_explains_an_export_that_succeeds():
    """A data-dependent size whose fake range misses the runtime's: export traces the fake's range and succeeds;
    that disagreement has a cause (the exported program's runtime assertion), so it is no SC005."""
    from shapecheck.contract.load import load_contract
    from shapecheck.findings import Violation
    from shapecheck.prove.export import explain
    from shapecheck.prove.verify import make_solver

    c = load_contract(str(KERNELS / "filter_ops.toml"))
    case = next(iter(c.cases()))
    v = Violation(code="SC020", case=case.id, path="all", expr="output 0's data-dependent size n",
                  counterexample={"N": 2, "n": 0}, message="")
    text = explain(case, [v], True, "export succeeded", make_solver(c, 2000))
    assert text.startswith("SC020 on all") and "not explained" not in text and "'n': 0" in text
    assert explain(case, [], True, "export succeeded", make_solver(c, 2000)).startswith("not explained")


def test_a_kernel_registered_as_a_functools_partial_is_named_at_its_function():
    """torch's prims register ``partial(_prim_elementwise_meta, ...)`` as their meta: the partial's function
    is the kernel (it crashed the audit of a library whose import loads the prims)."""
    import functools

    import torch
    import torch._prims  # noqa: F401 - registers the prims

    from shapecheck._torch import audit as CA
    from shapecheck._torch.kernels import Mode, definition, resolve_kernel

    op = torch.ops.prims.log.default
    assert isinstance(op.prim_meta_impl, functools.partial)
    loc = definition(op.prim_meta_impl)
    assert loc is not None and loc.function == op.prim_meta_impl.func.__name__
    assert loc.file.endswith(str(Path("torch", "_prims", "__init__.py")))
    assert CA.fake_reachable(op)
    assert resolve_kernel(op, Mode.FAKE) is not None


def test_a_python_meta_kernel_registered_through_a_library_is_named_and_its_lines_located():
    # Library.impl(name, fn, "Meta") keeps no handle on fn (torch.ao's quantized_decomposed ops): the finding must
    # still name the kernel's line, and the label must not call it a C++ kernel
    import tests.kernels.library_meta  # noqa: F401 - registers sclibmeta::rows

    report = _verify("sclibmeta::rows", KERNELS / "library_meta.toml")
    assert report.verdict == Verdict.FAIL
    assert "Python Meta kernel registered through torch.library" in report.kernel and "C++" not in report.kernel
    guard = next(v for v in report.violations if v.code.value == "SC001")
    assert guard.location is not None and Path(guard.location.file).name == "library_meta.py"
    line = (KERNELS / "library_meta.py").read_text().splitlines()[guard.location.line - 1]
    assert "x.size(0) <= 8" in line


def test_the_audit_names_a_library_registered_python_meta_kernel_as_python():
    import tests.kernels.library_meta  # noqa: F401 - registers sclibmeta::rows
    from shapecheck.audit.run import AuditOptions, audit_op

    rec = audit_op("sclibmeta::rows", options=AuditOptions(differential=False, variants=0))
    assert rec["kernel_kind"] == "python" and "C++" not in rec["kernel"], rec["kernel"]
    assert any(f["location"] and f["location"]["file"].endswith("library_meta.py") for f in rec["findings"]), rec


def test_a_meta_kernel_registered_by_qualified_name_is_never_located_in_torchs_library_file():
    # torch.library.impl("ns::op", "Meta") records torch/library.py as where it was registered: that file is
    # torch's, never the kernel's own, so no finding may be located there
    import tests.kernels.library_meta  # noqa: F401 - registers sclibmeta::rows_by_name

    report = _verify("sclibmeta::rows_by_name", KERNELS / "library_meta_by_name.toml")
    # the guard is found at the innermost frame outside torch, and its replay follows that file's lines
    assert report.verdict == Verdict.FAIL
    guard = next(v for v in report.violations if v.code.value == "SC001")
    assert guard.location is not None and Path(guard.location.file).name == "library_meta.py"
    assert "Python Meta kernel registered through torch.library" in report.kernel and "library.py" not in report.kernel
    assert all(v.location is None or not v.location.file.endswith("torch/library.py") for v in report.violations)


@pytest.mark.parametrize("op, words", [
    ("aten::as_strided.default", "C++ Meta kernel"),  # structured C++ meta: "[kernel]" at the Meta key
    ("aten::_fused_sgd.default", "C++ composite kernel at the Meta key"),  # CompositeExplicitAutograd serves Meta
    ("aten::_aminmax.default", "C++ eager kernel (no meta kernel: FakeTensorMode runs it only through its fallback"),
])
def test_the_audit_names_a_cpp_kernel_as_the_meta_key_has_it(op, words):
    """The audit called all 313 C++ kernels of torch 2.13 "C++ Meta kernel": 195 have none (torch's Meta
    fallback; FakeTensorMode runs the CPU kernel at static sizes only) and 97 are composites at the Meta key."""
    from shapecheck._torch import audit as CA
    from shapecheck._torch import core as C

    assert CA.kernel_origin(C.resolve_op(op))[0].startswith(words)


def test_a_fast_rule_is_named_by_its_own_function():
    """FakeTensor's fast rules are named by their function and line: the binary ops' closure, detach's (and
    torch 2.14's fast_alias), not one name for all of them."""
    import torch

    from shapecheck._torch import kernels as K

    add = K.resolve_kernel(torch.ops.aten.add.Tensor, K.Mode.FAKE)
    detach = K.resolve_kernel(torch.ops.aten.detach.default, K.Mode.FAKE)
    assert add.kind == detach.kind == K.FAST
    assert add.label.startswith("FakeTensor fast rule fake_impls.fast_binary_impl at torch/_subclasses/fake_impls.py:")
    assert detach.label.startswith("FakeTensor fast rule fake_impls.fast_detach at torch/_subclasses/fake_impls.py:")
