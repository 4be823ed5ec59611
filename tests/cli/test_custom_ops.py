"""Custom ops from torch.library, as their authors write them: `--import` registers the op, its fake kernel is
verified through the dispatcher and findings land on the fake's own lines; `--meta-source` reads
register_fake / custom_op registrations without running the file."""

import ast
import textwrap

import pytest

from shapecheck.kernel.registrations import find_registration
from tests.conftest import invoke

OPS = textwrap.dedent('''
    import torch

    @torch.library.custom_op("{ns}::decode", mutates_args=())
    def decode(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return q.clone()

    @decode.register_fake
    def _(q, k):
        {body}
''')
COPIES = "return q.new_empty(q.shape)"
BRANCHES = "if q.size(1) <= 8:  # the runtime's decode heuristic, copied into the fake\n        return q.new_empty(q.shape)\n    return q.new_empty(q.shape)"

CONTRACT = '''schema = 1
op = "{ns}::decode"

[dims]
B = {{ min = 1 }}
L = {{ min = 1 }}
D = {{ min = 1 }}

[choices]
dtype = ["float32"]

[[args]]
name = "q"
kind = "tensor"
dtype = "dtype"
shape = "(B, L, D)"

[[args]]
name = "k"
kind = "tensor"
dtype = "dtype"
shape = "(B, L, D)"

[[paths]]
id = "any"
when = "True"
outputs = ["(B, L, D)"]
'''


def project(tmp_path, ns: str, body: str):
    (tmp_path / "mylib_ops.py").write_text(OPS.format(ns=ns, body=body))
    (tmp_path / "decode.toml").write_text(CONTRACT.format(ns=ns))
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize("how", ["import", "meta-source"])
def test_a_fake_that_branches_on_the_sequence_length_is_sc001_at_its_own_line(tmp_path, how):
    p = project(tmp_path, f"sc_{how.replace('-', '_')}", BRANCHES)
    ns = f"sc_{how.replace('-', '_')}"
    extra = ["--meta-source", "mylib_ops.py"] if how == "meta-source" else []
    res = invoke("verify", "op", f"{ns}::decode", "--import", "mylib_ops.py", *extra, "--contract", "decode.toml",
                 "--format", "json", "-j", "1", cwd=p)
    assert res.returncode == 1, res.stderr
    import json

    doc = json.loads(res.stdout)
    (v,) = [v for v in doc["violations"] if v["code"] == "SC001"]
    line = next(i for i, t in enumerate((p / "mylib_ops.py").read_text().splitlines(), 1) if "q.size(1) <= 8" in t)
    assert v["expr"] == "L <= 8" and v["counterexample"]["L"] == 9
    assert v["location"]["file"].endswith("mylib_ops.py") and v["location"]["line"] == line
    if how == "import":
        assert doc["kernel"].startswith(f"{ns}::decode fake kernel, mylib_ops.py:")


@pytest.mark.slow  # over 0.5 s on an idle core
def test_the_fixed_fake_passes(tmp_path):
    p = project(tmp_path, "sc_fixed", COPIES)
    res = invoke("verify", "op", "sc_fixed::decode", "--import", "mylib_ops.py", "--contract", "decode.toml", "-j", "1",
                 cwd=p)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("PASS: sc_fixed::decode")


@pytest.mark.slow
def test_the_same_from_pyproject_with_no_flags(tmp_path):
    p = project(tmp_path, "sc_config", BRANCHES)
    (p / "pyproject.toml").write_text('[tool.shapecheck]\nimports = ["mylib_ops.py"]\n')
    res = invoke("verify", "op", "sc_config::decode", "--contract", "decode.toml", "-j", "1", cwd=p)
    assert res.returncode == 1 and "SC001" in res.stdout, res.stdout + res.stderr


@pytest.mark.parametrize("module, expected", [
    ("no_such_module_here", "ModuleNotFoundError: No module named 'no_such_module_here'"),
    ("broken.py", "broken.py:2: ValueError: bad config"),
    ("missing.py", "--import missing.py: no such file"),
    # torchaudio 2.11's wheel re-raises its extension's load failure and drops the line that says why
    ("chained.py", "OSError: Could not load this library: _lib.so (caused by OSError: libc10_cuda.so: cannot open "
                   "shared object file)"),
])
def test_an_import_that_fails_is_bad_input_with_its_own_error_line(tmp_path, module, expected):
    (tmp_path / "broken.py").write_text("import torch\nraise ValueError('bad config')\n")
    (tmp_path / "chained.py").write_text("try:\n    raise OSError('libc10_cuda.so: cannot open shared object file')\n"
                                         "except OSError as e:\n    raise OSError('Could not load this library: "
                                         "_lib.so') from e\n")
    (tmp_path / "decode.toml").write_text(CONTRACT.format(ns="sc_broken"))
    res = invoke("verify", "op", "sc_broken::decode", "--import", module, "--contract", "decode.toml", cwd=tmp_path)
    assert res.returncode == 2 and expected in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("command", [("audit", "--ops", "x::*"), ("gate",), ("fuzz", "op", "x::y"),
                                     ("ref", "check", "x::y"), ("verify", "op", "x::y")])
def test_debug_is_an_option_of_every_command_that_runs_kernels(tmp_path, command, monkeypatch):
    """``--debug`` after the command, as after ``shapecheck``: set before ``--import`` runs."""
    monkeypatch.setenv("SHAPECHECK_DEBUG", "")  # --debug sets it in this process: put back after the test
    res = invoke(*command, "--debug", "--import", "missing.py", cwd=tmp_path)
    assert res.returncode == 2 and "--import missing.py: no such file" in res.stderr, res.stderr
    assert "No such option" not in res.stderr


FAKES = textwrap.dedent('''
    import torch
    from torch.library import register_fake, impl_abstract

    @torch.library.custom_op("mylib::a", mutates_args=())
    def a(x: torch.Tensor) -> torch.Tensor:
        return x

    @a.register_fake
    def a_fake(x): ...

    @torch.library.register_fake("mylib::b")
    def b_fake(x): ...

    @impl_abstract("mylib::c.out")
    def c_fake(x): ...

    @register_fake("mylib::d", lib=None)
    def d_fake(x): ...
''')


@pytest.mark.parametrize("op, function", [("mylib::a", "a_fake"), ("mylib::b", "b_fake"), ("mylib::c.out", "c_fake"),
                                          ("mylib::d", "d_fake")])
def test_meta_source_finds_torch_library_registrations(op, function):
    reg = find_registration(ast.parse(FAKES), op)
    assert reg is not None and reg.fdef.name == function


def test_meta_source_finds_no_registration_for_another_custom_op():
    assert find_registration(ast.parse(FAKES), "mylib::e") is None
    assert find_registration(ast.parse(FAKES), "mylib::c") is None  # only .out is registered


@pytest.mark.slow
def test_a_meta_file_imports_its_sibling_modules_as_a_script_would(tmp_path):
    """`--meta FILE:FUNC` puts the file's folder on sys.path: a fake kernel file that imports the library's
    helpers next to it works (it said "No module named ..." before)."""
    lib = tmp_path / "lib"  # not the current directory, which Python puts on sys.path anyway
    lib.mkdir()
    (lib / "shape_helpers.py").write_text("def out_shape(q):\n    return tuple(q.shape)\n")
    (lib / "fakes.py").write_text("from shape_helpers import out_shape\n\n\n"
                                  "def decode_fake(q, k):\n    return q.new_empty(out_shape(q))\n")
    p = project(tmp_path, "sc_sibling", COPIES)
    res = invoke("verify", "op", "sc_sibling::decode", "--import", "mylib_ops.py", "--meta", "lib/fakes.py:decode_fake",
                 "--contract", "decode.toml", "-j", "1", cwd=p)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("PASS: sc_sibling::decode") and "kernel: fakes.py:decode_fake" in res.stdout


def test_contract_check_checks_the_schema_and_notes_an_op_not_imported(tmp_path):
    p = project(tmp_path, "sc_check", COPIES)
    res = invoke("contract", "check", "decode.toml", cwd=p)
    assert res.returncode == 0 and res.stdout.splitlines()[0].startswith("ok: decode.toml: sc_check::decode")
    assert res.stdout.splitlines()[1].startswith("note: decode.toml: sc_check::decode is not registered")
    res = invoke("contract", "check", "decode.toml", "--import", "mylib_ops.py", cwd=p)
    assert res.returncode == 0 and "note:" not in res.stdout
    (p / "bad.toml").write_text((p / "decode.toml").read_text().replace('name = "k"', 'name = "kk"'))
    res = invoke("contract", "check", "bad.toml", "--import", "mylib_ops.py", cwd=p)
    assert res.returncode == 2 and "bad.toml: [args.kk]: sc_check::decode" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
