"""[[rejects]] (issue 15, point 3): loading, the domain they carve, SC021 from verify (a meta kernel that
accepts a rejected index rank, a symbolic head-dim check, a check on one side of a guard) and from ref check
with the op's eager kernel."""

import re
import textwrap

import pytest

from shapecheck.contract.load import load_contract
from shapecheck.errors import ContractError
from shapecheck.logic import expr as E
from shapecheck.prove.verify import Options, verify_op
from shapecheck.runtime.refcheck import ref_check
from tests.conftest import ROOT

INDEX_SELECT = ROOT / "contracts" / "aten" / "index_select.toml"
KERNELS = ROOT / "tests" / "kernels" / "index_select_kernels.py"


def without_suppressions(text: str) -> str:
    return re.split(r"\n\[\[suppress\]\]", text)[0] + "\n"


@pytest.fixture(scope="module")
def index_select(tmp_path_factory):
    """The shipped index_select contract without its [[suppress]] of SC021 (finding F8)."""
    path = tmp_path_factory.mktemp("rejects") / "index_select.toml"
    path.write_text(without_suppressions(INDEX_SELECT.read_text()))
    return path


# ---------------------------------------------------------------------------------------------------------
# Loading and binding

NEW_EMPTY = '''schema = 1
op = "aten::new_empty"

[dims]
N = {{ min = 1, max = 100000 }}

[choices]
dtype = ["float32", "float16"]

[[args]]
name = "self"
kind = "tensor"
dtype = "dtype"
shape = "(N,)"

[[args]]
name = "size"
kind = "ints"
value = "(N,)"

[[paths]]
id = "only"
when = "true"
outputs = ["(N,)"]

{rejects}
'''


def contract(tmp_path, rejects: str):
    path = tmp_path / "c.toml"
    path.write_text(NEW_EMPTY.format(rejects=textwrap.dedent(rejects)))
    return path


@pytest.mark.parametrize("rejects, key, message", [
    ('[[rejects]]\nid = "x"\n', "[rejects.x]", "needs 'when'"),
    ('[[rejects]]\nid = "x"\nwhen = "N > 3"\nkind = "maybe"\n', "[rejects.x.kind]", "runtime-check, dispatcher-limit"),
    ('[[rejects]]\nid = "x"\ncase = "N > 3"\n', "[rejects.x.case]", "only use choices"),
    ('[[rejects]]\nid = "x"\nwhen = "K > 3"\n', "[rejects.x.when]", "unknown name 'K'"),
    ('[[rejects]]\nid = "x"\nwhen = "N > 3"\nmesage = "typo"\n', "[rejects[0].mesage]", "unknown key"),
    ('[[rejects]]\nid = "x"\nwhen = "N > 3"\n[[rejects]]\nid = "x"\nwhen = "N > 4"\n', "[rejects[1].id]", "duplicate"),
    ('[[rejects]]\nid = "x"\nwhen = "dtype == \'float64\'"\n', "[rejects.x.when]", "not a value of the choice"),
])
def test_a_malformed_reject_is_a_load_error_naming_its_key(tmp_path, rejects, key, message):
    with pytest.raises(ContractError) as err:
        load_contract(contract(tmp_path, rejects))
    assert key in str(err.value) and message in str(err.value)


def test_a_region_inside_a_case_leaves_its_domain_and_a_case_reject_leaves_the_case_set(tmp_path, index_select):
    c = load_contract(contract(tmp_path, '[[rejects]]\nid = "mult"\nwhen = "N % 8 != 0"\ncase = "dtype == \'float16\'"\n'))
    f32, f16 = list(c.cases())
    assert not f32.rejects and [r.id for r in f16.rejects] == ["mult"]
    assert E.evaluate(f16.domain, {"N": 8}) is True and E.evaluate(f16.domain, {"N": 9}) is False
    assert E.evaluate(f32.domain, {"N": 9}) is True
    # a case without when: the whole case is rejected, outside the domain, and explored for its reject only
    c = load_contract(index_select)
    assert len(list(c.cases())) == 32 and all("index_rank=2" not in x.id for x in c.cases())
    excluded = c.excluded_reject_cases()
    assert len(excluded) == 16 and all("index_rank=2" in x.id and x.excluded for x in excluded)
    assert {r.id for x in excluded for r in x.rejects} == {"index-not-a-vector"}


# ---------------------------------------------------------------------------------------------------------
# verify: SC021


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_meta_accepting_a_2d_index_is_sc021_and_its_fixed_twin_passes(index_select):
    bad = verify_op("aten::index_select", contract=str(index_select), meta=f"{KERNELS}:accepts_matrix_index",
                    options=Options(jobs=1))
    assert bad.verdict.value == "fail"
    found = [v for v in bad.violations if not v.suppressed]
    assert {v.code for v in found} == {"SC021"} and len(found) == 16
    v = found[0]
    assert v.path == "rejects.index-not-a-vector" and "index_rank=2" in v.case
    assert "Index is supposed to be a vector" in v.message and "accepts the input" in v.message
    assert v.counterexample and all(k in ("A", "B", "C", "N", "M") for k in v.counterexample)
    good = verify_op("aten::index_select", contract=str(index_select), meta=f"{KERNELS}:fixed",
                     options=Options(jobs=1))
    assert good.verdict.value == "pass" and not good.violations


@pytest.mark.slow
def test_a_symbolic_check_is_proved_on_the_region_and_a_missing_one_gives_a_point_of_it(tmp_path):
    c = contract(tmp_path, '[[rejects]]\nid = "mult"\nwhen = "N % 8 != 0"\n')
    kernels = tmp_path / "k.py"
    kernels.write_text(textwrap.dedent('''
        import torch

        def checks(self, size):
            torch._check(size[0] % 8 == 0, lambda: "N must be a multiple of 8")
            return self.new_empty(size)

        def forgets(self, size):
            return self.new_empty(size)

        def only_above_64(self, size):
            if size[0] > 64:
                torch._check(size[0] % 8 == 0)
            return self.new_empty(size)

        def only_up_to_64(self, size):
            if size[0] <= 64:
                torch._check(size[0] % 8 == 0)
            return self.new_empty(size)
    '''))
    ok = verify_op("aten::new_empty", contract=str(c), meta=f"{kernels}:checks", options=Options(jobs=1))
    assert ok.verdict.value == "pass", ok.violations
    bad = verify_op("aten::new_empty", contract=str(c), meta=f"{kernels}:forgets", options=Options(jobs=1))
    assert {v.code for v in bad.violations} == {"SC021"} and bad.violations[0].counterexample == {"N": 1}
    # the guard splits the region; the side N <= 64 accepts: the least such point of the region
    half = verify_op("aten::new_empty", contract=str(c), meta=f"{kernels}:only_above_64",
                     options=Options(jobs=1))
    sc021 = [v for v in half.violations if v.code == "SC021"]
    assert sc021 and all(v.counterexample["N"] <= 64 and v.counterexample["N"] % 8 for v in sc021)
    # it raises at the region's least point (N=1), so the symbolic exploration finds where it accepts
    upper = verify_op("aten::new_empty", contract=str(c), meta=f"{kernels}:only_up_to_64", options=Options(jobs=1))
    sc021 = [v for v in upper.violations if v.code == "SC021"]
    assert sc021 and sc021[0].counterexample == {"N": 65} and "(N,)" in sc021[0].message
    # a dispatcher limit puts no obligation on the meta kernel
    d = contract(tmp_path, '[[rejects]]\nid = "mult"\nkind = "dispatcher-limit"\nwhen = "N % 8 != 0"\n')
    assert verify_op("aten::new_empty", contract=str(d), meta=f"{kernels}:forgets",
                     options=Options(jobs=1)).verdict.value == "pass"


def test_case_selection_reaches_a_reject_only_case(index_select):
    r = verify_op("aten::index_select", contract=str(index_select), meta=f"{KERNELS}:accepts_matrix_index",
                  options=Options(jobs=1, cases=("rank=1,dim=0,index_rank=2,index_dtype=int64",)))
    assert r.verdict.value == "fail" and [v.code for v in r.violations] == ["SC021"]


# ---------------------------------------------------------------------------------------------------------
# ref check with the op's eager kernel


def test_ref_check_samples_the_reject_region_on_the_real_kernel(index_select):
    report = ref_check(load_contract(index_select), examples=4, seed=0)
    runs = {r.path: r for r in report.paths}
    assert runs["index-select"].points == 4 and not runs["index-select"].findings
    region = runs["rejects.index-not-a-vector"]
    assert region.points == 4 and {f.code for f in region.findings} == {"SC021"}
    assert all(f.sizes and "index_rank=2" in f.case for f in region.findings)
    assert report.verdict == "fail" and report.exit_code == 1


def test_ref_check_notes_a_runtime_message_the_reject_does_not_name(tmp_path, index_select):
    wrong = tmp_path / "index_select.toml"
    wrong.write_text(index_select.read_text().replace('message = "Index is supposed to be a vector"',
                                                      'message = "index must be 1-D"'))
    report = ref_check(load_contract(wrong), examples=2, seed=0)
    region = next(r for r in report.paths if r.path == "rejects.index-not-a-vector")
    assert "Index is supposed to be a vector" in region.note and "(not 'index must be 1-D')" in region.note


def test_an_index_bound_must_be_an_integer_expression(tmp_path):
    bad = tmp_path / "index_select.toml"
    bad.write_text(INDEX_SELECT.read_text().replace('high = "D"', 'high = "(D, 1)"'))
    with pytest.raises(ContractError) as err:
        load_contract(bad)
    assert "[args.index.high]" in str(err.value) and "integer expression" in str(err.value)


# ---------------------------------------------------------------------------------------------------------
# A shapecheck error is never the kernel refusing (issue 21: exit 4, not "the kernel rejects")


@pytest.mark.slow
def test_an_error_of_ours_while_calling_the_kernel_on_a_region_is_the_cases_internal_error(index_select, monkeypatch):
    """Never taken for the kernel rejecting the region: the case stops with SC023 (exit 4), the message kept."""
    import shapecheck.prove.replay as R  # the region's concrete runs bind their arguments there
    from shapecheck.errors import InternalError

    def broken(*args, **kwargs):
        raise InternalError("a bug while binding the arguments")

    monkeypatch.setattr(R, "call_args", broken)
    r = verify_op("aten::index_select", contract=str(index_select), meta=f"{KERNELS}:accepts_matrix_index",
                  options=Options(jobs=1))
    bugs = [v for v in r.violations if v.code == "SC023"]
    assert bugs and all("a bug while binding" in v.message for v in bugs), [(v.code, v.message) for v in r.violations]
    assert r.exit_code == 4 and not any(v.code == "SC021" for v in r.violations)


def test_ref_check_tells_the_meta_kernel_refusing_from_an_error_of_ours(index_select, monkeypatch):
    from dataclasses import replace

    import shapecheck.kernel.resolved as KR
    import shapecheck.trace.run as TR
    from shapecheck.errors import InternalError
    from shapecheck.runtime.ref_findings import MetaRefuses, meta_outputs

    contract = load_contract(index_select)
    case = next(c for c in [*contract.cases(), *contract.excluded_reject_cases()] if "index_rank=2" in c.id)
    sizes = {d.name: d.min for d in case.dims}
    assert meta_outputs(case, sizes)  # torch 2.13's meta kernel accepts a 2-D index (SC021)

    installed = KR.installed_kernel

    def refusing(op):
        def refuses(*args, **kwargs):
            raise RuntimeError("the meta kernel says no")

        return replace(installed(op), fn=refuses)

    monkeypatch.setattr(KR, "installed_kernel", refusing)
    with pytest.raises(MetaRefuses) as refusal:
        meta_outputs(case, sizes)
    assert isinstance(refusal.value.error, RuntimeError)
    monkeypatch.setattr(KR, "installed_kernel", installed)

    def broken(*args, **kwargs):
        raise InternalError("a bug while making the arguments")

    monkeypatch.setattr(TR, "call_args", broken)
    with pytest.raises(InternalError):
        meta_outputs(case, sizes)


@pytest.mark.parametrize("module", ["refcheck", "refcheck_rejects"])
def test_ref_check_never_takes_an_error_of_ours_for_the_meta_kernel_refusing(index_select, monkeypatch, module):
    import importlib

    from shapecheck.errors import InternalError

    def broken(case, sizes):
        raise InternalError("a bug in the meta call")

    # before: a path's check made it SC007 (the meta kernel raises), a region's check "the meta kernel refuses too"
    monkeypatch.setattr(importlib.import_module(f"shapecheck.runtime.{module}"), "meta_outputs", broken)
    with pytest.raises(InternalError, match="a bug in the meta call"):
        ref_check(load_contract(index_select), examples=2, seed=0)


@pytest.mark.slow  # over 0.5 s on an idle core
def test_torch_refusing_a_region_of_a_reject_is_inconclusive_not_an_internal_error(index_select, monkeypatch):
    """torch refusing a region's assumptions (``AssumptionRejected``) where z3 finds points is not checked
    (SC005, exit 3), as in the case's own exploration: never a crash of the case (SC023), never a pass."""
    import shapecheck.prove.rejects as R
    from shapecheck._torch.core import AssumptionRejected

    def refused(*args, **kwargs):
        raise AssumptionRejected("Invalid ranges [2:1]")

    monkeypatch.setattr(R, "trace_case", refused)
    r = verify_op("aten::index_select", contract=str(index_select), meta=f"{KERNELS}:fixed", options=Options(jobs=1))
    codes = {v.code for v in r.violations if not v.suppressed}
    assert "SC023" not in codes and "SC005" in codes, [(v.code, v.message) for v in r.violations]
    assert any("torch refuses to assume the region" in v.message for v in r.violations)
    assert r.verdict.value == "inconclusive" and r.exit_code == 3


CONV_T_BIAS = """\
schema = 1
op = "aten::convolution"
[dims]
Co = { min = 1, max = 64 }
Cb = { min = 1, max = 64 }
[[args]]
name = "input"
kind = "tensor"
dtype = "float32"
shape = "(1, 1, 4, 4)"
[[args]]
name = "weight"
kind = "tensor"
dtype = "float32"
shape = "(1, Co, 3, 3)"
[[args]]
name = "bias"
kind = "tensor"
dtype = "float32"
shape = "(Cb,)"
[[args]]
name = "stride"
kind = "ints"
value = [1, 1]
[[args]]
name = "padding"
kind = "ints"
value = [1, 1]
[[args]]
name = "dilation"
kind = "ints"
value = [1, 1]
[[args]]
name = "transposed"
kind = "bool"
value = true
[[args]]
name = "output_padding"
kind = "ints"
value = [0, 0]
[[args]]
name = "groups"
kind = "int"
value = 1
[[rejects]]
id = "bias-size"
when = "Cb != Co"
message = "expected bias to be 1-dimensional with"
[[paths]]
id = "conv-t"
when = "true"
outputs = ["(1, Co, 4, 4)"]
"""


def test_a_check_that_needs_concrete_sizes_is_never_a_false_sc021(tmp_path):
    """FakeTensor's convolution rule checks the bias length only where sizes have values: the unbacked trace
    accepts the region, FakeTensorMode (and export) at the region's least point reject it, as eager does. The
    meta device's kernel, which shapecheck once ran there, accepts it: not the kernel torch runs. Not a
    counterexample (no SC021), and not a proof either (SC005, exit 3)."""
    import torch

    contract = tmp_path / "convolution.toml"
    contract.write_text(CONV_T_BIAS)
    r = verify_op("aten::convolution", contract=str(contract), options=Options(jobs=1))
    assert not any(v.code == "SC021" for v in r.violations), [(v.code, v.message) for v in r.violations]
    why = [v for v in r.violations if v.code == "SC005"]
    assert r.exit_code == 3 and why and "run as FakeTensorMode runs it" in why[0].message
    assert "Co=1, Cb=2" in why[0].message
    # the ground truth at that point: FakeTensorMode raises as eager does; only the meta device accepts
    args = lambda device: (torch.empty(1, 1, 4, 4, device=device), torch.empty(1, 1, 3, 3, device=device),  # noqa: E731
                           torch.empty(2, device=device), [1, 1], [1, 1], [1, 1], True, [0, 0], 1)
    for run in (lambda: torch.ops.aten.convolution(*args("cpu")), lambda: _under_fake_mode(args)):
        with pytest.raises(RuntimeError, match="expected bias to be 1-dimensional"):
            run()
    assert torch.ops.aten.convolution(*args("meta")).shape == (1, 1, 4, 4)


def _under_fake_mode(args):
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        return torch.ops.aten.convolution(*args("cpu"))


def test_a_region_the_dims_ranges_leave_empty_is_sc006():
    """hunt 42: a [[rejects]] region ``C == 0`` with C from 1 was accepted in silence (a path no case reaches is
    SC006): its check proves nothing."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        c = contract(Path(d), '[[rejects]]\nid = "never"\nwhen = "N < 0"\n')
        r = verify_op("aten::new_empty", contract=str(c), options=Options(jobs=1))
    [v] = [v for v in r.violations if v.code.value == "SC006"]
    assert v.path == "rejects.never" and "holds for no input of any case" in v.message
    assert r.verdict.value == "pass"  # a note: the contract's smell, not the kernel's
