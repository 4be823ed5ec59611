"""verify against the SDPA-MPS contract: the installed kernel passes, the regression and every mutant fail
with the right rule, guard-free rewrites pass."""

import pytest

from shapecheck.findings import Verdict
from shapecheck.logic import expr as E
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import KERNELS, SDPA_MPS

K = f"{KERNELS / 'sdpa_kernels.py'}"
CASE4 = "rank=4,mask=bool,is_causal=false,dtype=float32,enable_gqa=false"
SMALL = (CASE4, "rank=3,mask=none,is_causal=false,dtype=float16,enable_gqa=false",
         "rank=5,mask=float,is_causal=true,dtype=bfloat16,enable_gqa=true")


def run(fn=None, cases=SMALL, **kw):
    meta = f"{K}:{fn}" if fn else None
    return verify_op(SDPA_MPS, meta=meta, options=Options(cases=cases, **kw))


def codes(report):
    return {v.code for v in report.violations}


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_installed_meta_kernel_passes_every_case():
    r = verify_op(SDPA_MPS)
    assert r.verdict == Verdict.PASS
    assert len(r.cases) == 108 and not any(c.skipped for c in r.cases)
    assert all(c.traces == 1 and c.meta_paths == 1 for c in r.cases)  # guard-free: one trace per case
    statuses = {s for c in r.cases for s in (p.status for p in c.paths)}
    assert statuses <= {"proved", "unreachable"} and "proved" in statuses


@pytest.mark.slow
def test_reference_kernel_written_here_passes():
    assert run("fixed").verdict == Verdict.PASS


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_regressed_kernel_fails_with_a_guard_on_L_at_its_line():
    r = run("regressed", cases=(CASE4,))
    assert r.verdict == Verdict.FAIL
    src = (KERNELS / "sdpa_kernels.py").read_text().splitlines()
    guard_line = next(i for i, t in enumerate(src, 1) if "(query_seq_len <= 8)" in t)
    on_L = [v for v in r.violations if v.code == "SC001" and v.dims == ("L",) and "8" in v.expr]
    assert on_L, [v.expr for v in r.violations]
    v = on_L[0]
    assert v.location.file.endswith("sdpa_kernels.py") and v.location.line == guard_line
    assert v.counterexample["L"] > 8  # outside the traced (L <= 8) branch
    assert set(v.counterexample) == {"B", "H", "Hk", "L", "S", "E", "Ev"}
    assert "to [1, 8]" in v.restricts
    # every guard is reported, not just the first
    exprs = {v.expr for v in r.violations if v.code == "SC001"}
    assert {"E == Ev", "L <= 8", "L <= S", "S >= 1024"} <= exprs
    assert any("Hk" in e and "L" in e for e in exprs)  # k_size < q_size mixes KV heads with query length
    # the 2-pass branch returns a 4-D output 0 for ... and it is found on the 3-D case too
    r3 = run("regressed", cases=("rank=3,mask=none,is_causal=false,dtype=float32,enable_gqa=false",))
    mism = [v for v in r3.violations if v.code == "SC002"]
    assert mism and all(str(v.path).startswith("vector-2pass") for v in mism)


@pytest.mark.slow
def test_counterexamples_satisfy_the_contract_domain(sdpa_contract):
    from shapecheck.contract.model import bind_case
    from shapecheck.logic import expr as E

    r = run("regressed", cases=(CASE4,))
    values = dict(rank=4, mask="bool", is_causal=False, dtype="float32", enable_gqa=False)
    case = bind_case(sdpa_contract, values)
    for v in r.violations:
        point = v.counterexample
        for d in case.dims:
            assert d.min <= point[d.name] <= d.max
        assert E.evaluate(case.domain, point) is True
        if v.code == "SC001":
            assert E.evaluate(E.parse(v.expr), point) is False
            assert E.evaluate(E.parse(v.expr), v.witness) is True


@pytest.mark.slow
def test_meta_source_takes_only_the_registered_function():
    src = KERNELS / "regressed_registrations.py"
    r = verify_op(SDPA_MPS, meta_source=str(src), options=Options(cases=(CASE4,)))
    assert r.verdict == Verdict.FAIL
    line = next(i for i, t in enumerate(src.read_text().splitlines(), 1) if "(query_seq_len <= 8)" in t)
    hits = [v for v in r.violations if v.code == "SC001" and v.expr == "L <= 8"]
    assert hits and hits[0].location.line == line and hits[0].location.file.endswith("regressed_registrations.py")


HELPER_FILE = """\
import torch
from torch._meta_registrations import register_meta

aten = torch.ops.aten
raise RuntimeError("importing this file must not happen")


def _to_4d(x):
    if x.dim() == 3:
        return x.unsqueeze(0), 3
    if x.dim() == 5:
        return x.reshape(x.size(0) * x.size(1), x.size(2), x.size(3), x.size(4)), 5
    return x, 4


def _out_shapes(q_, v_):
    b, h, lq, _ = q_.shape
    rows = {rows}
    return (b, h, rows, v_.size(-1))


def _from_4d(t, query, rank):
    if rank == 4:
        return t
    return t.view(list(query.shape[:-1]) + [t.size(-1)])


def _annotated_with_a_name_torch_lacks(x: SomethingNew):
    return x


@register_meta([aten._scaled_dot_product_attention_math_for_mps])
def meta__scaled_dot_product_attention_math_for_mps(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, scale=None,
    enable_gqa=False
):
    if query.dim() == 9:
        _annotated_with_a_name_torch_lacks(query)
    q_, rank = _to_4d(query)
    k_, _ = _to_4d(key)
    v_, _ = _to_4d(value)
    out = q_.new_empty(_out_shapes(q_, v_))
    attn = q_.new_empty((q_.size(0), q_.size(1), q_.size(2), k_.size(2)))
    return _from_4d(out, query, rank), _from_4d(attn, query, rank)
"""


@pytest.mark.slow
@pytest.mark.parametrize("rows,verdict", [("lq", Verdict.PASS), ("lq if lq <= 8 else 8", Verdict.FAIL)])
def test_meta_source_brings_the_files_own_helpers(tmp_path, rows, verdict):
    """A PR may change a helper with the kernel: the file's plain helpers that the registered function
    reaches are defined from the file; nothing else runs. A guard in such a helper is the helper's (SC022,
    as for the installed torch's helpers): at the kernel's line that calls it, naming the helper's line."""
    src = tmp_path / "_meta_registrations.py"
    src.write_text(HELPER_FILE.format(rows=rows))
    cases = (CASE4, "rank=3,mask=none,is_causal=false,dtype=float16,enable_gqa=false",
             "rank=5,mask=float,is_causal=true,dtype=bfloat16,enable_gqa=true")
    r = verify_op(SDPA_MPS, meta_source=str(src), options=Options(cases=cases))
    assert r.verdict == verdict, [(v.code, v.expr) for v in r.violations]
    if verdict == Verdict.FAIL:
        lines = src.read_text().splitlines()
        line = next(i for i, t in enumerate(lines, 1) if "rows = lq if" in t)
        call = next(i for i, t in enumerate(lines, 1) if "new_empty(_out_shapes(" in t)
        hit = next(v for v in r.violations if v.code == "SC022")
        assert hit.expr == "L <= 8" and hit.location.line == call and hit.counterexample["L"] == 9
        assert f"_out_shapes at {src}:{line}" in hit.message


@pytest.mark.slow
@pytest.mark.parametrize("fn,cases", [
    ("out_uses_query_head_dim", (CASE4,)),
    ("out_rank_not_restored", ("rank=3,mask=none,is_causal=false,dtype=float32,enable_gqa=false",
                               "rank=5,mask=none,is_causal=false,dtype=float32,enable_gqa=false")),
    ("out_padded_length", (CASE4,)),
    ("out_min_length", (CASE4,)),
])
def test_output_zero_mistakes_are_shape_mismatches(fn, cases):
    r = run(fn, cases=cases)
    assert r.verdict == Verdict.FAIL
    assert codes(r) == {"SC002"}
    for v in r.violations:
        assert v.counterexample and v.path
    if fn == "out_rank_not_restored":
        assert {v.case.split(",")[0] for v in r.violations} == {"rank=3", "rank=5"}


@pytest.mark.slow
@pytest.mark.parametrize("fn,code,dims", [
    ("guard_on_S", "SC001", ("S",)),
    ("guard_on_E", "SC001", ("E",)),
    ("guard_on_BH", "SC001", ("B", "H")),
    ("guard_L_mod_8", "SC001", ("L",)),
    ("guard_L_eq_1", "SC001", ("L",)),
    ("specialize_int_L", "SC003", ("L",)),
    ("check_L_le_4096", "SC004", ("L",)),
])
def test_guards_specialisations_and_asserts_fail(fn, code, dims):
    r = run(fn, cases=(CASE4,))
    assert r.verdict == Verdict.FAIL
    hits = [v for v in r.violations if v.code == code]
    assert hits, [(v.code, v.expr) for v in r.violations]
    assert hits[0].dims == dims
    assert hits[0].location is not None and hits[0].location.file.endswith("sdpa_kernels.py")
    if fn == "check_L_le_4096":
        assert hits[0].counterexample["L"] == 4097
    if fn == "guard_L_eq_1":
        # the 0/1 trap: size 1 is modelled, so both sides are reachable
        assert {hits[0].counterexample["L"], hits[0].witness["L"]} >= {1}


@pytest.mark.slow
@pytest.mark.parametrize("fn", ["uses_sym_max", "static_rank_and_dtype_branches"])
def test_guard_free_rewrites_pass(fn):
    r = run(fn)
    assert r.verdict == Verdict.PASS, [(v.code, v.expr, v.message) for v in r.violations]


@pytest.mark.slow
def test_old_signature_skips_cases_it_cannot_express():
    r = run("regressed", cases=("enable_gqa=true",), max_traces=4)
    assert r.cases and all(c.skipped for c in r.cases)
    assert r.verdict == Verdict.INCONCLUSIVE  # nothing was checked, so nothing passes


@pytest.mark.slow
def test_exploration_bound_is_reported():
    r = run("regressed", cases=(CASE4,), max_traces=3)
    assert r.cases[0].truncated and r.cases[0].traces == 3


@pytest.mark.slow
def test_guard_or_false_in_the_kernel_is_a_guard():
    """Unbacked, torch answers guard_or_false(L > 8) with False and the trace finishes on one side; the call
    is found at the kernel's line, both sides are explored, and the wrong side's output shape is caught."""
    r = run("branch_with_guard_or_false")
    assert r.verdict == Verdict.FAIL
    g = [v for v in r.violations if v.code == "SC001"]
    assert g and all(v.expr == "L > 8" and v.dims == ("L",) for v in g)
    line = next(i for i, t in enumerate(open(f"{K}").read().splitlines(), 1) if "guard_or_false(lq > 8)" in t)
    assert g[0].location.line == line and "guard_or_false" in g[0].message
    assert g[0].counterexample["L"] <= 8 < g[0].witness["L"]
    assert any(v.code == "SC002" and v.counterexample["L"] > 8 for v in r.violations)


@pytest.mark.slow
def test_guard_or_calls_the_domain_settles_pass():
    r = run("settled_guard_or_true")
    assert r.verdict == Verdict.PASS and all(c.traces == 1 for c in r.cases)


@pytest.mark.slow
def test_sym_ite_outputs_are_proved_per_branch():
    """torch.sym_ite leaves no guard; its Piecewise output is translated, so a wrong branch is a shape
    mismatch with a counterexample on that branch, and a right one passes."""
    bad = run("rows_by_sym_ite")
    mism = [v for v in bad.violations if v.code == "SC002"]
    assert bad.verdict == Verdict.FAIL and mism and not any(v.code == "SC005" for v in bad.violations)
    assert all(v.counterexample["L"] > 8 and v.counterexample["S"] != v.counterexample["L"] for v in mism)
    assert run("attn_cols_by_sym_ite").verdict == Verdict.PASS


@pytest.mark.slow
def test_untranslated_asserts_and_outputs_are_refuted_at_real_points(sdpa_contract):
    """z3 cannot take torch's float expressions, but evaluating them at points of the domain finds where
    an assert fails or an output differs: real counterexamples, said to be evaluated, not proved."""
    r = run("assert_on_a_float", cases=(CASE4,))
    v = next(v for v in r.violations if v.code == "SC004")
    assert r.verdict == Verdict.FAIL and v.dims == ("L",) and not v.counterexample["L"] / 3 < 100
    assert "evaluated" in v.message
    r = run("rows_from_a_float", cases=(CASE4,))
    v = next(v for v in r.violations if v.code == "SC002")
    lv = v.counterexample["L"]
    assert r.verdict == Verdict.FAIL and int(1.1 * lv) != lv and "evaluated" in v.message
    case = next(c for c in sdpa_contract.cases() if c.id == CASE4)
    assert E.evaluate(case.domain, v.counterexample) is True


@pytest.mark.slow
def test_untranslatable_guard_is_inconclusive_not_pass():
    r = run("constant_float_guard", cases=(CASE4,))
    assert r.verdict == Verdict.INCONCLUSIVE and r.exit_code == 3
    v = r.violations[0]
    assert v.code == "SC005" and "L" in v.expr and "u" not in v.expr.replace("IntTrueDiv", "")


@pytest.mark.slow
def test_untranslatable_guard_is_refuted_by_two_real_points(sdpa_contract):
    """z3 cannot take `L / 3 > 2.5`, but torch's expression evaluated at two points of the domain where it
    differs proves the branch: SC001, both points real, and the expression really differs there."""
    r = run("guard_on_true_division", cases=SMALL)
    assert r.verdict == Verdict.FAIL and r.exit_code == 1
    hits = [v for v in r.violations if v.code == "SC001"]
    assert len(hits) == len(SMALL) and {v.case for v in hits} == set(SMALL)
    for v in hits:
        assert v.expr == "(IntTrueDiv(L, 3)) > 2.5" and v.dims == ("L",) and v.location.line > 0
        assert (v.counterexample["L"] / 3 > 2.5) is False and (v.witness["L"] / 3 > 2.5) is True
        case = next(c for c in sdpa_contract.cases() if c.id == v.case)
        for point in (v.counterexample, v.witness):
            assert E.evaluate(case.domain, point) is True


@pytest.mark.slow
def test_solver_unknown_is_inconclusive(monkeypatch):
    from shapecheck.logic import solver as S

    real = S.Solver._satisfiable  # every query goes through it, each of a question's strategies included

    def unknown_for_outputs(self, conds, ways):
        if any("Ev" in S.E.to_text(c) and "==" in S.E.to_text(c) for c in conds):
            return S.SatResult(S.Sat.UNKNOWN, reason="timeout")
        return real(self, conds, ways)

    monkeypatch.setattr(S.Solver, "_satisfiable", unknown_for_outputs)
    r = verify_op(SDPA_MPS, meta=f"{K}:out_uses_query_head_dim", options=Options(cases=(CASE4,)))
    assert r.verdict == Verdict.INCONCLUSIVE, [(v.code, v.expr) for v in r.violations]
    assert {v.code for v in r.violations} == {"SC005"}


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_meta_source_on_the_installed_torch_file_as_a_pr_would_change_it(tmp_path):
    """The real torch/_meta_registrations.py (thousands of registrations, imports the candidate must not
    run): unchanged it passes; with the seed's branch put back into the SDPA-MPS kernel, the guard is
    found at the changed line."""
    import torch._meta_registrations as mr

    text = open(mr.__file__, encoding="utf-8").read()
    anchor = "    return sdpa_general_mps()\n"
    if text.count(anchor) != 1:
        pytest.skip("the installed torch's SDPA-MPS meta kernel is not the 2.13 one this test patches")
    same = tmp_path / "_meta_registrations.py"
    same.write_text(text)
    assert verify_op(SDPA_MPS, meta_source=str(same), options=Options(cases=SMALL)).verdict == Verdict.PASS
    pr = tmp_path / "pr" / "_meta_registrations.py"
    pr.parent.mkdir()
    pr.write_text(text.replace(anchor, "    if q_size <= 8:\n        return sdpa_general_mps()\n" + anchor))
    r = verify_op(SDPA_MPS, meta_source=str(pr), options=Options(cases=SMALL))
    line = pr.read_text().splitlines().index("    if q_size <= 8:") + 1
    hits = [v for v in r.violations if v.code == "SC001"]
    assert r.verdict == Verdict.FAIL and hits
    assert all(v.expr == "L <= 8" and v.location.line == line and v.counterexample["L"] == 9 for v in hits)


@pytest.mark.slow
def test_a_name_the_installed_torch_lacks_is_inconclusive_not_a_failure(tmp_path):
    """A candidate from another torch imports a helper the installed torch lacks; the import is not run
    (nothing but the registered function and its file-local helpers is), so the name is missing."""
    src = tmp_path / "_meta_registrations.py"
    src.write_text(HELPER_FILE.format(rows="lq").replace(
        "    q_, rank = _to_4d(query)\n", "    _check_sdpa_args_new_in_2_15(query, key, value)\n    q_, rank = _to_4d(query)\n")
        .replace("aten = torch.ops.aten\n", "aten = torch.ops.aten\nfrom torch._prims_common import _check_sdpa_args_new_in_2_15\n"))
    r = verify_op(SDPA_MPS, meta_source=str(src), options=Options(cases=(CASE4,)))
    assert r.verdict == Verdict.INCONCLUSIVE and r.exit_code == 3
    assert {v.code for v in r.violations} == {"SC005"}
    assert any("_check_sdpa_args_new_in_2_15" in v.message for v in r.violations)


@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_helper_the_file_cannot_define_is_never_silently_the_installed_one(tmp_path):
    """The file changes torch's own helper ``device_hint``, with a default the installed torch lacks: it
    cannot be defined here, and the installed (different) one would run instead. That is not a proof about the
    file's kernel: inconclusive, at the helper's line."""
    helper = 'def device_hint(tensor, kind=torch.no_such_device_kind) -> "str":\n    return "cpu"\n\n\n'
    src = tmp_path / "_meta_registrations.py"
    src.write_text(HELPER_FILE.format(rows="lq").replace("@register_meta(", helper + "@register_meta(", 1)
                   .replace("    q_, rank = _to_4d(query)\n", "    device_hint(query)\n    q_, rank = _to_4d(query)\n"))
    r = verify_op(SDPA_MPS, meta_source=str(src), options=Options(cases=(CASE4,)))
    line = src.read_text().splitlines().index('def device_hint(tensor, kind=torch.no_such_device_kind) -> "str":') + 1
    assert r.verdict == Verdict.INCONCLUSIVE and r.exit_code == 3
    hits = [v for v in r.violations if v.code == "SC005"]
    assert [(v.location.line, "device_hint" in v.message) for v in hits] == [(line, True)]
    # the same file without the unknown default defines its helper and passes
    src.write_text(src.read_text().replace(", kind=torch.no_such_device_kind", ""))
    assert verify_op(SDPA_MPS, meta_source=str(src), options=Options(cases=(CASE4,))).verdict == Verdict.PASS


@pytest.mark.slow
def test_shapecheck_errors_raised_under_a_trace_are_not_kernel_failures(tmp_path):
    """An error of shapecheck's own (here an InternalError raised while the kernel runs) is never reported as
    SC007 (the kernel raised): it is the case's internal error (SC023, exit 4)."""
    k = tmp_path / "k.py"
    k.write_text("from shapecheck.errors import InternalError\n\n\ndef kernel(query, key, value, *a, **kw):\n"
                 "    raise InternalError('a broken invariant')\n")
    report = verify_op(SDPA_MPS, meta=f"{k}:kernel", options=Options(cases=(CASE4,)))
    assert report.verdict is Verdict.ERROR and report.exit_code == 4
    assert codes(report) == {"SC023"}
    assert "InternalError: a broken invariant" in report.violations[0].message


def test_an_import_error_of_a_meta_file_names_its_line(tmp_path):
    from shapecheck.errors import TargetError

    k = tmp_path / "k.py"
    k.write_text("import math\n\n\ndef helper():\n    return 1 / 0\n\n\nVALUE = helper()\n")
    with pytest.raises(TargetError, match=r"k\.py:5: importing it raised ZeroDivisionError"):
        verify_op(SDPA_MPS, meta=f"{k}:helper", options=Options(cases=(CASE4,)))


@pytest.mark.slow
def test_im2col_output_is_proved_whatever_the_spelling():
    """Issue 22: tests/kernels/im2col.toml spells the block count (H + 2 * p - 3) // 2 + 1; the traced
    decomposition computes it as ceil((H + 2 * p - 2) / 2) and multiplies the two spatial counts. z3 alone gave
    up on that product (SC005 after 132 s at a 60 s timeout); in normal form the two sides are one term, so a
    2 s timeout proves it."""
    r = verify_op("aten::im2col", contract=str(KERNELS / "im2col.toml"),
                  options=Options(jobs=1, timeout_ms=2000, cases=("p=0",)))
    assert not any(v.code == "SC005" for v in r.violations), [(v.code, v.expr) for v in r.violations]
    assert [p.status for c in r.cases for p in c.paths] == ["proved"]


@pytest.mark.slow
def test_a_case_whose_only_findings_are_suppressed_passes_as_the_run_does():
    # index_select's shipped contract accepts F8 (SC021: the meta kernel never checks the index rank) in 16
    # cases: the run passes, and so does each of those cases (its JSON verdict read "fail")
    report = verify_op("aten::index_select")
    assert report.verdict is Verdict.PASS
    accepted = {v.case for v in report.violations if v.suppressed}
    assert accepted and not [v for v in report.violations if not v.suppressed]
    by_case = {c.case: c.verdict for c in report.cases}
    assert all(by_case[c] is Verdict.PASS for c in accepted)
