"""--confirm-export as the contract means it: requires as Dim ranges and derived Dims, the candidate kernel
installed for custom ops too, a sample of passing cases over every choice value, and explanations only
where their cause is established."""

import pytest

from shapecheck.contract.load import load_contract
from shapecheck.findings import Verdict
from shapecheck.prove import export as X
from shapecheck.prove.verify import Options, export_sample, make_solver, verify_op
from tests.conftest import KERNELS, ROOT

ATEN = ROOT / "contracts" / "aten"


def _specs(name: str, case_id: str):
    c = load_contract(ATEN / f"{name}.toml")
    case = next(k for k in c.cases() if k.id == case_id)
    solver = make_solver(c, 10_000)
    return X.export_dims(case, solver, X.equal_classes(case, solver))


def test_an_equality_of_requires_becomes_a_derived_dim():
    specs = _specs("pixel_shuffle", "r=2")
    assert specs["Ci"].base == "C" and (specs["Ci"].a, specs["Ci"].b) == (4, 0)
    assert specs["Ci"].text() == "4 * C" and specs["C"].base is None
    assert _specs("pixel_shuffle", "r=3")["Ci"].a == 9


def test_an_inequality_of_requires_becomes_a_dim_minimum():
    specs = _specs("convolution", "k=3,p=0,s=1")
    assert (specs["H"].lo, specs["W"].lo) == (3, 3) and specs["N"].lo == 1
    assert _specs("convolution", "k=3,p=1,s=1")["H"].lo == 1


@pytest.mark.slow
def test_pixel_shuffle_exports_with_the_derived_dim_and_agrees():
    r = verify_op("aten::pixel_shuffle", contract=str(ATEN / "pixel_shuffle.toml"),
                  options=Options(jobs=1, confirm_export=True))
    assert r.verdict == Verdict.PASS
    for c in r.cases:
        assert c.export.ran and c.export.succeeded and c.export.agrees, c.export.message
        assert c.export.example["C" if "C" in c.export.example else "Ci"] >= 2


def test_the_sample_covers_every_choice_value():
    c = load_contract(ATEN / "convolution.toml")
    cases = list(c.cases())
    chosen = export_sample(cases, 2)
    values = {(k, v) for case in cases if case.id in chosen for k, v in case.values.items()}
    assert values == {(k, v) for case in cases for k, v in case.values.items()}
    assert len(chosen) < len(cases)
    idx = list(load_contract(ATEN / "index_select.toml").cases())
    picked = export_sample(idx, 1)
    # every index rank (the 0-d and the 1-d index, not only 0-d where the dynamic dim is absent) and dtype
    assert {(k, v) for case in idx if case.id in picked for k, v in case.values.items()} \
        >= {(k, v) for case in idx for k, v in case.values.items() if k in ("index_rank", "index_dtype")}


@pytest.mark.slow
def test_a_candidate_for_a_custom_op_is_the_kernel_export_runs():
    import tests.kernels.custom_rows  # noqa: F401 - registers screplay::rows with its guarded fake

    contract = str(KERNELS / "custom_rows.toml")
    good = verify_op("screplay::rows", contract=contract, meta=f"{KERNELS / 'custom_rows.py'}:candidate",
                     options=Options(jobs=1, confirm_export=True))
    assert good.verdict == Verdict.PASS
    x = good.cases[0].export
    assert x.ran and x.succeeded and x.agrees, x.message
    bad = verify_op("screplay::rows", contract=contract, options=Options(jobs=1, confirm_export=True))
    y = bad.cases[0].export
    assert bad.verdict == Verdict.FAIL and y.ran and y.succeeded is False and y.agrees


def test_an_export_failure_without_an_established_cause_is_not_explained():
    c = load_contract(ATEN / "constant_pad_nd.toml")
    case = next(iter(c.cases()))
    why = X.explain(case, [], False, "SomeError: something export said\nmore", make_solver(c, 10_000))
    assert why == "not explained; export said: SomeError: something export said"


def test_an_op_that_returns_a_python_scalar_is_outside_what_export_can_express():
    """``aten::output_nr`` returns an int and ``aten::_has_same_storage_numel`` a bool: strict export refuses
    any such op (a graph break), whatever its kernel does. Found by the seventh export sweep as two unexplained
    disagreements (SC005, exit 3) on ops whose kernels are right."""
    c = load_contract(ATEN / "constant_pad_nd.toml")
    case = next(iter(c.cases()))
    message = ("Unsupported: torch.* op returned non-Tensor\n  Explanation: torch.* ops that return a non-Tensor "
               "cannot be traced into the Dynamo FX graph output\n\n  Developer debug context: example_value type: "
               "bool; op: call_function; target: aten._has_same_storage_numel.default")
    why = X.explain(case, [], False, message, make_solver(c, 10_000))
    assert why.startswith("export cannot express this contract: the op returns a Python bool"), why
    assert not why.startswith("not explained")


def test_an_export_tracing_failure_that_static_export_repeats_is_not_about_the_dims():
    """``aten::_spdiags`` returns a sparse tensor whose nnz is data-dependent: export's tracer refuses it
    ("Pending unbacked symbols {u0} not in returned outputs") with every dim static too. Explained only where the
    static export fails with the same first line, and only for the tracer's own errors."""
    c = load_contract(ATEN / "constant_pad_nd.toml")
    case = next(iter(c.cases()))
    solver = make_solver(c, 10_000)
    message = "PendingUnbackedSymbolNotFound: Pending unbacked symbols {u0} not in returned outputs\nmore"
    calls = []

    def static(first: str):
        def run():
            calls.append(first)
            return False, first + "\nother detail"
        return run

    same = X.explain(case, [], False, message, solver, static=static(message.splitlines()[0]))
    assert same.startswith("export cannot express this contract: its own tracing fails the same way"), same
    other = X.explain(case, [], False, message, solver, static=static("RuntimeError: something else"))
    assert other.startswith("not explained"), other
    kernel = X.explain(case, [], False, "RuntimeError: the kernel raised", solver, static=static("RuntimeError: x"))
    assert kernel.startswith("not explained") and len(calls) == 2  # a kernel's own error: no static retry at all


@pytest.mark.slow
def test_linalg_cross_shared_batch_disagreement_is_explained_by_exports_own_guard():
    r = verify_op("aten::linalg_cross", contract=str(ATEN / "linalg_cross.toml"),
                  options=Options(jobs=1, confirm_export=True))
    shared = next(c for c in r.cases if "shared" in c.case)
    x = shared.export
    assert r.verdict == Verdict.PASS and x.succeeded is False and x.agrees is False
    assert "must always be equal" in x.explanation and "allows them to differ" in x.explanation


@pytest.mark.slow
def test_cases_wholly_rejected_by_a_rejects_table_are_not_exported():
    """index_select's 2-D index cases are a [[rejects]] region with no domain point: no export for them (it
    used to try binding a case of no choices and fail), the others are confirmed."""
    r = verify_op("aten::index_select", contract=str(ATEN / "index_select.toml"),
                  options=Options(jobs=1, confirm_export=True))
    exported = [c for c in r.cases if c.export is not None]
    assert exported and all("index_rank=2" not in c.case for c in exported)
    assert all(c.export.agrees for c in exported if c.export.ran), [c.export.message for c in exported]


def _drafted_contract(tmp_path, op: str, dims: str, requires: str, args: str, output: str, shape: str = ""):
    """A contract as ``contract draft`` writes one: dims from 1, the kernel's asserts as ``requires``
    (comma-separated), ``self`` of shape ``shape`` (default: every dim)."""
    contract = tmp_path / "drafted.toml"
    shape = shape or ", ".join(dims.split())
    contract.write_text(
        f'schema = 1\nop = "{op}"\n[dims]\n' + "".join(f"{d} = {{ min = 1 }}\n" for d in dims.split()) +
        '[choices]\ndtype = ["float32"]\n[domain]\nrequires = [' + ", ".join(f'"{r.strip()}"' for r in
                                                                      requires.split(",")) + ']\n'
        f'[[args]]\nname = "self"\nkind = "tensor"\ndtype = "dtype"\nshape = "({shape})"\n{args}'
        f'[[paths]]\nid = "only"\nwhen = "True"\noutputs = [{{ shape = "{output}" }}]\n')
    return contract


@pytest.mark.slow
def test_a_divisibility_requirement_becomes_a_multiple_of_a_root_dim_of_its_own(tmp_path):
    """``A0 % 4 == 0`` (what ``contract draft`` writes from the kernel's assert) is export's ``4 * A0_4``:
    exported with a plain Dim, export refused the range it cannot state ("Constraints violated (A0)"), an
    unexplained disagreement with shapecheck's pass."""
    contract = _drafted_contract(tmp_path, "aten::pixel_shuffle", "A0 A1 A2", "A0 % 4 == 0",
                                   '[[args]]\nname = "upscale_factor"\nkind = "int"\nvalue = "2"\n',
                                   "(A0 // 4, 2 * A1, 2 * A2)")
    c = load_contract(contract)
    [case] = list(c.cases())
    solver = make_solver(c, 10_000)
    specs = X.export_dims(case, solver, X.equal_classes(case, solver), modulo=True)
    assert (specs["A0"].base, specs["A0"].a, specs["A0"].b) == ("A0_4", 4, 0) and specs["A0_4"].lo == 1
    assert X.export_dims(case, solver, X.equal_classes(case, solver))["A0"].base is None
    r = verify_op("aten::pixel_shuffle", contract=str(contract), options=Options(jobs=1, confirm_export=True))
    assert r.verdict == Verdict.PASS
    [c0] = r.cases
    assert c0.export.succeeded and c0.export.agrees, c0.export.message
    assert c0.export.example["A0"] % 4 == 0 and c0.export.example["A0"] >= 8


@pytest.mark.slow
def test_torch_s_own_view_of_a_divisibility_is_the_derived_dim_export_gets(tmp_path):
    """glu asserts ``A1 % 2 == 0`` and splits A1 in halves: ``2 * (A1 // 2) <= A1`` is decided by torch once A1
    is ``2 * A1_2`` (as export states it), so it is no SC016, and the helper's guard ``A1 // 2 != 1`` is
    export's 0/1 rule on A1_2, no SC022: shapecheck passes, as export does."""
    from shapecheck.prove.torch_decides import TorchView

    contract = _drafted_contract(tmp_path, "aten::glu", "A0 A1", "A1 % 2 == 0",
                                   '[[args]]\nname = "dim"\nkind = "int"\nvalue = "-1"\n', "(A0, A1 // 2)")
    c = load_contract(contract)
    [case] = list(c.cases())
    view = TorchView(case, make_solver(c, 10_000))
    assert view.quotients == {"A1_2": ("A1", 2, 0)} and view.ranges()["A1_2"][0] == 2
    r = verify_op("aten::glu", contract=str(contract), options=Options(jobs=1, confirm_export=True))
    assert r.verdict == Verdict.PASS, [v.code for v in r.violations]
    [c0] = r.cases
    assert c0.export.succeeded and c0.export.agrees, c0.export.message


@pytest.mark.slow
def test_a_minimum_export_raises_through_a_relation_dims_cannot_state_is_explained(tmp_path):
    """reflection_pad1d asserts ``padding < A1``: export traces the paddings at 2 or more and asks
    ``Dim('A1', min=3)``, while the contract allows A1 = 2 with padding 1. The cause is established (export's
    suggested minimum, and z3 on both halves), so the pass stands and the disagreement is explained."""
    contract = _drafted_contract(tmp_path, "aten::reflection_pad1d", "A0 A1 padding0 padding1",
                                 "padding0 < A1, padding1 < A1",
                                 '[[args]]\nname = "padding"\nkind = "ints"\nvalue = ["padding0", "padding1"]\n',
                                 "(A0, A1 + padding0 + padding1)", shape="A0, A1")
    r = verify_op("aten::reflection_pad1d", contract=str(contract), options=Options(jobs=1, confirm_export=True))
    assert r.verdict == Verdict.PASS
    [c0] = r.cases
    assert c0.export.ran and c0.export.succeeded is False and not c0.export.agrees
    assert c0.export.explanation.startswith("export asks Dim('A1', min=3): the contract relates A1 to padding0")
    assert "A1=2, padding0=1" in c0.export.explanation
