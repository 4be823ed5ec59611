"""``--meta-source`` on a file of decompositions (torch/_decomp/decompositions.py, torch/_refs): the function
``register_decomposition`` registers for the op is defined alone in the installed torch module the file stands
for, and put where the registration puts it. Before, such a file had "no function registered" (exit 2), so a PR
to a decomposition (im2col's, upsample_nearest2d's under export) could not be checked before merging."""

import ast
import shutil

import pytest

from shapecheck._torch.namespaces import meta_registration_namespace
from shapecheck.findings import Verdict
from shapecheck.kernel.registrations import find_registration
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import KERNELS

CASE = "rank=4,kernel=3,dilation=1,padding=1,stride=1"


def test_register_decomposition_is_a_registration_and_picks_its_module():
    tree = ast.parse((KERNELS / "decomp_registrations.py").read_text())
    reg = find_registration(tree, "aten::im2col")
    assert reg is not None and reg.fdef.name == "im2col"
    import torch._decomp.decompositions as dd
    import torch._refs as refs

    assert meta_registration_namespace("/x/torch/_decomp/decompositions.py", "register_decomposition")["__name__"] \
        == dd.__name__
    assert meta_registration_namespace("/pr/torch/_refs/__init__.py", "register_decomposition")["__name__"] \
        == refs.__name__
    assert meta_registration_namespace("/elsewhere/mine.py", "register_decomposition")["__name__"] == dd.__name__


@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_copy_whose_path_names_no_torch_module_stands_for_the_module_whose_functions_it_defines(tmp_path):
    """hunt 32: an unmodified copy of torch/_refs/__init__.py saved as refs_copy.py was taken for
    decompositions.py, so its cat read names that module lacks (``any``, ``empty``): SC005 with a false cause."""
    import torch._refs as refs

    copy = tmp_path / "refs_copy.py"
    shutil.copy(refs.__file__, copy)
    assert meta_registration_namespace(str(copy), "register_decomposition")["__name__"] == refs.__name__
    r = verify_op("aten::cat", contract=str(KERNELS / "decomp_cat.toml"), meta_source=str(copy),
                  options=Options(jobs=1))
    assert r.verdict is Verdict.PASS and r.kernel == "refs_copy.py:cat", [v.message for v in r.violations]


def test_a_decomposition_of_a_pr_is_checked_and_its_mistake_found():
    r = verify_op("aten::im2col", meta_source=str(KERNELS / "decomp_registrations.py"),
                  options=Options(cases=(CASE,), jobs=1))
    assert r.verdict is Verdict.FAIL and r.kernel == "decomp_registrations.py:im2col"
    (v,) = r.violations
    assert v.code == "SC002" and v.location.file.endswith("decomp_registrations.py") and "+ 1" in v.expr


@pytest.mark.slow
def test_the_installed_decompositions_file_verifies_as_the_installed_kernel(tmp_path):
    import torch._decomp.decompositions as dd

    copy = tmp_path / "decompositions.py"
    shutil.copy(dd.__file__, copy)
    cases = ("rank=4,kernel=3,dilation=1,padding=1,stride=1", "rank=3,kernel=3,dilation=2,padding=0,stride=2")
    mine = verify_op("aten::im2col", meta_source=str(copy), options=Options(cases=cases, jobs=1))
    theirs = verify_op("aten::im2col", options=Options(cases=cases, jobs=1))
    assert mine.kernel == "decompositions.py:im2col" and mine.verdict is theirs.verdict is Verdict.PASS
    # the second case has torch's helper guards (SC022, accepted by the shipped contract) either way, the same
    # guards at the same lines: the copy's sub-ops run as the installed decomposition's do (FakeTensorMode's
    # decomposition, not the Meta key's kernel under the Python dispatcher: is_contiguous's guard, not expand's)
    def seen(r):
        return {(v.case, v.code, v.expr, v.location.line, v.message.partition(" at ")[0]) for v in r.violations}

    assert {v.case for v in theirs.violations} == {cases[1]}
    assert seen(mine) == seen(theirs)


def test_a_decomposition_registered_from_a_file_runs_where_torch_runs_the_installed_one():
    """``register_decomposition`` puts the function in the decomposition table and (activate_meta) at the Meta
    key, never in the meta table (register_meta's): FakeTensorMode then runs it as it runs the installed
    decomposition. In the meta table it was run at the Meta key, its sub-ops under the Python dispatcher."""
    import torch
    from torch._decomp import meta_table

    from shapecheck._torch import kernels as K

    op = torch.ops.aten.im2col.default

    def fn(*args, **kwargs):
        raise AssertionError("not called")

    installed = K.resolve_kernel(op, K.Mode.FAKE)
    with K.registered_as(op, "register_decomposition", fn):
        assert op not in meta_table
        mine = K.resolve_kernel(op, K.Mode.FAKE)
        assert mine.fn.shapecheck_candidate is fn and (mine.kind, mine.layer) == (installed.kind, installed.layer) == (K.DECOMP, "fake")
        assert op.py_kernels[torch._C.DispatchKey.Meta].shapecheck_candidate is fn
    assert op not in meta_table and K.resolve_kernel(op, K.Mode.FAKE).fn is installed.fn


@pytest.mark.slow
def test_a_decomposition_torch_never_runs_leaves_the_kernel_torch_runs_checked(tmp_path):
    """A hunt: a copy of torch's own decompositions.py failed flash_attention_for_cpu (72 findings), its
    decomposition checked in the meta kernel's place. torch's meta registrations take a decomposition as the
    meta kernel only where the op has no register_meta: this op has one, so the copy verifies as the installed
    torch does, with a note that the file's function is not reached."""
    import torch._decomp.decompositions as dd

    copy = tmp_path / "torch" / "_decomp" / "decompositions.py"
    copy.parent.mkdir(parents=True)
    shutil.copy(dd.__file__, copy)
    op, case = "aten::_scaled_dot_product_flash_attention_for_cpu", "dtype=float32,is_causal=false,mask=none"
    from_copy = verify_op(op, meta_source=str(copy), options=Options(cases=(case,), jobs=1))
    installed = verify_op(op, options=Options(cases=(case,), jobs=1))
    assert from_copy.verdict is installed.verdict is Verdict.PASS
    assert from_copy.kernel.startswith(installed.kernel) and "Python meta registration" in from_copy.kernel
    assert any("(register_decomposition) is not torch's kernel" in n for n in from_copy.notes), from_copy.notes


@pytest.mark.slow
def test_a_decomposition_a_fake_tensor_rule_calls_by_name_is_the_one_checked(tmp_path):
    """FakeTensorMode runs ``native_layer_norm_fake`` for native_layer_norm, and that rule calls
    ``torch._refs.native_layer_norm`` by name: a PR that changes the function changes what torch runs. A copy of
    _refs/__init__.py whose native_layer_norm forgets to cast mean and rstd back on cpu was "not reached" (the
    installed function checked, a pass); its function now stands in the rule's global, and the audit finds the
    wrong dtypes against the eager kernel. The unmodified copy audits clean of them."""
    import json

    import torch._refs as refs
    from click.testing import CliRunner

    from shapecheck.cli.main import cli

    text = open(refs.__file__).read()
    forgets = text.replace('''    if input.device.type in ["cpu", "mtia"]:
        mean = _maybe_convert_to_dtype(mean, input.dtype)''', '''    if False:
        mean = _maybe_convert_to_dtype(mean, input.dtype)''')
    assert forgets != text
    seen = {}
    for label, source in (("mutant", forgets), ("copy", text)):
        path = tmp_path / label / "torch" / "_refs" / "__init__.py"
        path.parent.mkdir(parents=True)
        path.write_text(source)
        res = CliRunner().invoke(cli, ["audit", "--ops", "aten::native_layer_norm.default", "--meta-source",
                                       str(path), "-j", "1", "--no-cache", "--format", "json"])
        (rec,) = json.loads(res.output)["ops"]
        seen[label] = (res.exit_code, rec)
    code, rec = seen["mutant"]
    dtypes = [f for f in rec["findings"] if f["code"] == "SC039"]
    assert code == 1 and dtypes and rec["kernel"] == "_refs/__init__.py:native_layer_norm", rec
    assert all("bfloat16" in f["message"] for f in dtypes)
    code, rec = seen["copy"]
    assert not [f for f in rec["findings"] if f["code"] == "SC039"] and rec["kernel"] == "_refs/__init__.py:native_layer_norm"


@pytest.mark.slow
def test_a_meta_source_copy_checks_the_kernel_plain_fake_tensor_mode_runs_too(tmp_path):
    """constant_pad_nd: torch.export runs the Python meta registration, plain FakeTensorMode the C++ composite
    kernel, which specialises N (SC003, accepted by the shipped contract). An unmodified copy of the registrations
    file is the installed torch: both kernels checked, the same findings (the copy's run had left the plain-mode
    kernel out: 374 findings accepted against 377 in the shipped gate)."""
    import torch

    copy = tmp_path / "_meta_registrations.py"
    shutil.copy(torch._meta_registrations.__file__, copy)
    one = Options(jobs=1)
    installed = verify_op("aten::constant_pad_nd", options=one)
    copied = verify_op("aten::constant_pad_nd", meta_source=str(copy), options=one)
    assert len(copied.kernel_modes) == 2 and "C++" in copied.kernel_modes[1].kernel, copied.kernel_modes
    def accepted(report):
        return [(v.code, v.case) for v in report.violations if v.suppressed]

    assert accepted(copied) == accepted(installed) != []


@pytest.mark.slow  # a verify and two audits of upsample_nearest2d
def test_a_meta_source_copy_reached_only_by_plain_fake_tensor_mode_leaves_exports_kernel_deciding(tmp_path):
    """upsample_nearest2d: torch.export runs a decomposition, plain FakeTensorMode the meta registration. An
    unmodified copy of the registrations file is the installed torch: export's kernel decides, the file's function
    is checked beside it, and the audit's findings are the installed's (hunt 32: the copy's run checked the file's
    function alone, and the audit lost the two SC041 of the kernel export runs)."""
    import torch

    copy = tmp_path / "_meta_registrations.py"
    shutil.copy(torch._meta_registrations.__file__, copy)
    copied = verify_op("aten::upsample_nearest2d", contract=str(KERNELS / "fallback_layouts.toml"),
                       meta_source=str(copy), options=Options(jobs=1))
    assert [m.kernel for m in copied.kernel_modes][1] == "_meta_registrations.py:upsample_nearest2d"
    assert "decompositions.py" in copied.kernel_modes[0].kernel and copied.verdict is Verdict.PASS
    from shapecheck.audit.run import AuditOptions, audit_op
    from shapecheck.kernel.sources import MetaSource

    def findings(rec):
        return sorted((f["code"], f["expr"], f["location"]["line"]) for f in rec["findings"])

    installed = audit_op("aten::upsample_nearest2d.default", None, AuditOptions(cache=False))
    mine = audit_op("aten::upsample_nearest2d.default", MetaSource(str(copy)), AuditOptions(cache=False))
    assert findings(mine) == findings(installed) != []


@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_meta_kernel_a_fake_tensor_rule_calls_at_the_meta_key_is_the_files(tmp_path):
    """convolution's kernel under FakeTensorMode is FakeTensor's rule ``fake_impls.conv``, which calls the op at the
    Meta key: under the Python dispatcher, as torch.export runs it, that is the registrations file's ``meta_conv``.
    A PR whose meta_conv raises at N = 7 passed: the installed kernel was checked instead (hunt 21)."""
    import torch

    text = open(torch._meta_registrations.__file__).read()
    head = "def meta_conv(\n"
    start = text.index(head)
    body = text.index("):\n", start) + 3
    sentinel = "    if input_tensor.size(0) == 7:  # the PR's mistake\n        raise RuntimeError('size 7')\n"
    copy = tmp_path / "_meta_registrations.py"
    copy.write_text(text[:body] + sentinel + text[body:])
    line = text[:body].count("\n") + 1
    report = verify_op("aten::convolution", meta_source=str(copy), options=Options(jobs=1))
    assert report.verdict is Verdict.FAIL, report.verdict
    assert any(v.location is not None and v.location.file == str(copy) and v.location.line == line
               for v in report.violations if not v.suppressed), [(v.code, v.location) for v in report.violations]
    assert "meta_conv registered" in report.kernel


def test_a_rule_that_imports_the_meta_kernel_in_its_body_reads_it_by_name():
    """fake_impls' index_tensor and embedding_bag run ``from torch._meta_registrations import meta_index_Tensor``
    in their bodies: the module's name is read at each call, so a PR's function bound there is what they run."""
    import torch
    from torch._subclasses import fake_impls

    from shapecheck._torch.namespaces import reads_global

    meta = torch._meta_registrations
    assert reads_global(fake_impls.index_tensor, meta, "meta_index_Tensor")
    assert reads_global(fake_impls.embedding_bag, meta, "meta_embedding_bag")
    assert not reads_global(fake_impls.index_tensor, meta, "meta_embedding_bag")


@pytest.mark.slow
def test_a_decomposition_that_py_impl_makes_a_python_kernel_is_checked_from_the_file(tmp_path):
    """torch's decompositions.py makes ``_upsample_nearest_vec`` the CompositeImplicitAutograd and Autograd kernel of
    upsample_nearest2d.vec with ``py_impl``: defining it again re-ran those decorators, torch refused the second
    registration, and the op was never run (hunt 21). The copy's function is checked, as torch runs it."""
    import json

    import torch._decomp.decompositions as dd

    from tests.conftest import invoke

    copy = tmp_path / "torch" / "_decomp" / "decompositions.py"
    copy.parent.mkdir(parents=True)
    shutil.copy(dd.__file__, copy)
    res = invoke("audit", "--meta-source", copy, "--ops", "aten::upsample_nearest2d.vec", "-j", "1", "--no-cache",
                 "--variants", "0", "--format", "json")
    (rec,) = json.loads(res.stdout)["ops"]
    assert rec["kernel"] == "decompositions.py:_upsample_nearest_vec", rec["kernel"]
    assert rec["status"] != "not-run" and rec["traces"] > 0, rec["notes"]


@pytest.mark.slow
def test_a_registered_function_the_kernel_calls_is_defined_from_the_file(tmp_path):
    """torch 2.4's decompositions.py registers ``split_with_sizes``, which its ``split_with_sizes_copy`` calls and
    torch 2.13 no longer has: only undecorated helpers were defined, so the call raised NameError (hunt 21)."""
    source = '''import torch
from torch._meta_registrations import register_meta

aten = torch.ops.aten


@register_meta(aten.pixel_shuffle.default)
def meta_pixel_shuffle(self, upscale_factor):
    return _shuffled_in_an_older_torch(self, upscale_factor)


@register_meta(aten.an_op_this_torch_lacks.default)
def _shuffled_in_an_older_torch(self, upscale_factor):
    *batch, c, h, w = self.shape
    r = upscale_factor
    return self.new_empty((*batch, c // (r * r), h * r, w * r))
'''
    path = tmp_path / "_meta_registrations.py"
    path.write_text(source)
    report = verify_op("aten::pixel_shuffle", meta_source=str(path), options=Options(jobs=1))
    assert not any("NameError" in v.message for v in report.violations), [v.message for v in report.violations]
    assert report.kernel.endswith(":meta_pixel_shuffle") and report.verdict is Verdict.PASS, report.verdict


def test_a_file_helper_reached_through_a_decorated_function_runs_installed_and_is_found():
    """A kernel that reaches a decorated function (not defined from the file, as torch's ``_upsample_linear``
    under ``@pw_cast_for_opmath``: the installed one runs) runs what that function calls as installed too, a
    plain helper the kernel also calls directly included; a function it never reaches is not listed."""
    from shapecheck.kernel.registrations import installed_helpers

    tree = ast.parse('''
def wrap(f):
    return f

@register_decomposition(aten.x)
def kernel(a):
    return direct(a) + through(a)

def direct(a):
    return a

@wrap
def through(a):
    return deeper(a)

def deeper(a):
    return direct(a)

def unrelated(a):
    return a
''')
    fdef = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "kernel")
    # the decorator too, where the file defines it: it runs as installed
    assert [n.name for n in installed_helpers(tree, fdef)] == ["wrap", "direct", "through", "deeper"]


def test_a_binding_to_an_expression_is_followed_and_a_local_name_is_not():
    """``pw_cast_for_opmath = partial(type_casts, ...)``: a decorator bound by an assignment is the installed
    module's, so ``type_casts`` runs as installed; ``meta_index_Tensor``'s local ``nonzero`` is no call of the
    module's ``nonzero`` (that made index.Tensor's audit inconclusive for a change to meta nonzero)."""
    from shapecheck.kernel.registrations import installed_helpers

    tree = ast.parse('''
def type_casts(f, mode):
    return f

cast = partial(type_casts, mode=1)

def nonzero(x):
    return x

@cast
def helper(a):
    return a

@register_decomposition(aten.x)
def kernel(a, index):
    nonzero = index.nonzero()
    return helper(nonzero)
''')
    fdef = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "kernel")
    assert [n.name for n in installed_helpers(tree, fdef)] == ["type_casts", "helper"]


@pytest.mark.slow
def test_a_changed_helper_the_installed_torch_runs_in_its_place_makes_the_verdict_inconclusive(tmp_path):
    """A PR that changes ``_compute_scale`` (reached by upsample_bilinear2d.vec's decomposition only through the
    decorated ``_upsample_linear``): the installed ``_compute_scale`` is what runs, so nothing of the file's is
    proved. Before, the audit reported the installed helper's results as the file's (a helper that raises on
    every call passed unseen)."""
    import torch._decomp.decompositions as dd

    from shapecheck.kernel.load import load_kernel
    from shapecheck.kernel.sources import MetaSource
    from tests.conftest import invoke

    copy = tmp_path / "torch" / "_decomp" / "decompositions.py"
    copy.parent.mkdir(parents=True)
    text = open(dd.__file__).read()
    head = "def _compute_scale(in_size, out_size, align_corners, scale=None):\n"
    assert text.count(head) == 1
    copy.write_text(text.replace(head, head + "    raise RuntimeError('broken helper')\n"))
    kernel = load_kernel(MetaSource(str(copy)), "aten::upsample_bilinear2d.vec")
    assert [loc.function for loc, _ in kernel.caveats] == ["_compute_scale"]
    res = invoke("audit", "--meta-source", copy, "--ops", "aten::upsample_bilinear2d.vec", "-j", "1", "--no-cache",
                 "--format", "json")
    import json

    (rec,) = json.loads(res.stdout)["ops"]
    assert rec["partial"] and any(n.startswith("not verified:") and "_compute_scale" in n for n in rec["notes"])
    # an unmodified copy: no caveat, the installed kernel's record
    shutil.copy(dd.__file__, copy)
    assert load_kernel(MetaSource(str(copy)), "aten::upsample_bilinear2d.vec").caveats == ()


def test_a_function_only_py_impl_registers_is_the_registration_of_its_overload():
    """decompositions.py makes ``matmul`` and ``one_hot`` (and ``_upsample_linear_vec`` for upsample_linear1d.vec,
    which its register_decomposition does not name) Python kernels by ``py_impl`` alone: such a function was no
    registration, and ``--meta-source`` checked the installed torch's kernel in its place (hunt 27: a copy whose
    ``_upsample_linear_vec`` raised passed the gate)."""
    from shapecheck.kernel.registrations import py_impl_keys

    tree = ast.parse(
        "import torch\nfrom torch._C import DispatchKey\naten = torch.ops.aten\n"
        "@register_decomposition(aten.upsample_bilinear2d.vec)\n"
        "@aten.upsample_linear1d.vec.py_impl(DispatchKey.CompositeImplicitAutograd)\n"
        "@aten.upsample_linear1d.vec.py_impl(DispatchKey.Autograd)\n"
        "@aten.upsample_bilinear2d.vec.py_impl(DispatchKey.Autograd)\n"
        "def vec(x, output_size, align_corners, scale_factors):\n    return x\n"
        "@torch.ops.aten.matmul.default.py_impl(DispatchKey.CompositeImplicitAutograd)\n"
        "def mm(a, b):\n    return a\n")
    linear = find_registration(tree, "aten::upsample_linear1d.vec")
    assert linear is not None and linear.fdef.name == "vec" and linear.decorator.func.attr == "py_impl"
    assert py_impl_keys(tree, linear.fdef, "aten::upsample_linear1d.vec") == ("CompositeImplicitAutograd", "Autograd")
    bilinear = find_registration(tree, "aten::upsample_bilinear2d.vec")  # its register_decomposition, as before
    assert bilinear is not None and bilinear.decorator.func.id == "register_decomposition"
    mm = find_registration(tree, "aten::matmul")
    assert mm is not None and mm.fdef.name == "mm"
    assert find_registration(tree, "aten::matmul.out") is None and find_registration(tree, "aten::mm") is None


@pytest.mark.slow
def test_a_broken_py_impl_only_kernel_of_a_file_is_found_and_an_unmodified_one_is_the_installed_ones(tmp_path):
    """The function runs where its py_impl puts it (export's CompositeImplicitAutograd kernel): a matmul that
    raises is found; the unmodified copy is checked from the file and finds what the installed kernel does."""
    import json

    import torch._decomp.decompositions as dd

    from tests.conftest import invoke

    copy = tmp_path / "torch" / "_decomp" / "decompositions.py"
    copy.parent.mkdir(parents=True)
    shutil.copy(dd.__file__, copy)

    def record(*extra):
        res = invoke("audit", *extra, "--ops", "aten::matmul", "-j", "1", "--no-cache", "--variants", "0",
                     "--format", "json")
        (rec,) = json.loads(res.stdout)["ops"]
        return res.returncode, rec

    theirs, mine = record(), record("--meta-source", copy)
    assert mine[1]["kernel"] == "decompositions.py:matmul" and "installed torch" in theirs[1]["kernel"]
    assert mine[0] == theirs[0] and mine[1]["status"] == theirs[1]["status"]
    assert sorted(f["code"] for f in mine[1]["findings"]) == sorted(f["code"] for f in theirs[1]["findings"])
    text = copy.read_text()
    head = "def matmul(tensor1, tensor2, *, is_out=False):\n"
    assert text.count(head) == 1
    copy.write_text(text.replace(head, head + "    raise RuntimeError('broken matmul')\n"))
    code, rec = record("--meta-source", copy)
    assert code == 1 and any("broken matmul" in json.dumps(f) for f in rec["findings"]), rec


@pytest.mark.slow
def test_a_decomposition_that_calls_its_own_op_reaches_itself_as_with_the_file_installed(tmp_path):
    """_refs' roll calls ``torch.roll`` on the flattened tensor: with the file installed that call runs the file's
    roll again. It ran torch's installed roll instead (torch's kernel was back in the slot while the candidate
    ran, and a replay called the candidate without its registration), so a copy without the ``numel() == 0``
    return, which divides by the size 0 there, passed over A0, A1 >= 0 (hunt 28)."""
    import torch._refs as refs

    copy = tmp_path / "torch" / "_refs" / "__init__.py"
    copy.parent.mkdir(parents=True)
    text = open(refs.__file__).read()
    early = ("    # Avoid modulo by zero\n    if a.numel() == 0:\n        # Keeping this as ref for now as FakeTensor runs "
             "into some issues with complex tensors\n        return a.clone()\n")
    assert text.count(early) == 1
    copy.write_text(text.replace(early, ""))
    contract = str(KERNELS / "roll_min0.toml")
    broken = verify_op("aten::roll", meta_source=str(copy), contract=contract, options=Options(jobs=1))
    assert broken.verdict is Verdict.FAIL, broken.violations
    (v,) = broken.violations
    assert v.code == "SC007" and "ZeroDivisionError" in v.expr and 0 in (v.counterexample["A0"], v.counterexample["A1"])
    copy.write_text(text)  # the unmodified file: its branch on the empty size, with a fix that keeps it
    clean = verify_op("aten::roll", meta_source=str(copy), contract=contract, options=Options(jobs=1))
    (g,) = clean.violations
    assert g.code == "SC001" and "holds only where a size is 0" in g.fix


@pytest.mark.slow
def test_the_shipped_im2col_contract_rejects_sizes_with_no_sliding_block(tmp_path):
    """A copy of decompositions.py whose im2col lacks its "blocks >= 1" check returns an empty output where the
    runtime raises; the shipped contract stated those sizes as requires only and passed it (hunt 28). Its
    [[rejects]] region makes that SC021; the installed kernel raises there and passes."""
    import torch._decomp.decompositions as dd

    copy = tmp_path / "torch" / "_decomp" / "decompositions.py"
    copy.parent.mkdir(parents=True)
    text = open(dd.__file__).read()
    start = text.index("    torch._check(\n        all(c > 0 for c in output_size),", text.index("def im2col("))
    end = text.index("\n    )\n", start) + len("\n    )\n")
    copy.write_text(text[:start] + text[end:])
    case = ("rank=3,kernel=3,dilation=2,padding=0,stride=2",)
    broken = verify_op("aten::im2col", meta_source=str(copy), options=Options(cases=case, jobs=1))
    assert broken.verdict is Verdict.FAIL and "SC021" in {v.code for v in broken.violations}, broken.violations
    installed = verify_op("aten::im2col", options=Options(cases=case, jobs=1))
    assert installed.verdict is Verdict.PASS and not [v for v in installed.violations if v.code == "SC021"]
