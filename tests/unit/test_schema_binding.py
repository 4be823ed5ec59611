"""`--meta FILE:FUNC` binds by the op's schema (positional order and keyword-only names, not the contract's
names), a fake that asks `torch.library.get_ctx()` gets a fake-mode context as through the dispatcher, and a
file whose import registers ops already registered is loaded once or refused with one clear line."""

import inspect
import json
import textwrap

import pytest

from shapecheck.contract.load import load_contract
from shapecheck.kernel.binding import SchemaArg, Unbindable, bind
from shapecheck.kernel.load import function_kernel
from shapecheck.prove.verify import Options, verify_contract
from tests.conftest import beyond_output_record, invoke, run_cli

TORCH_META = inspect.getsourcefile(__import__("torch._meta_registrations", fromlist=["x"]))

SCHEMA = (SchemaArg("self", "Tensor", False, False), SchemaArg("kernel_size", "int[2]", False, False),
          SchemaArg("stride", "int[2]", False, True, []), SchemaArg("ceil_mode", "bool", False, True, False),
          SchemaArg("scale", "float?", True, True, None))


def _sig(fn):
    return inspect.signature(fn)


def test_positional_by_schema_order_whatever_the_parameters_are_called():
    def kernel(inp, ks, st=(7,), ceil=False, *, scale=None):
        ...

    args, kwargs = bind(SCHEMA, _sig(kernel), {"self": "T", "kernel_size": [2, 2], "ceil_mode": True},
                        lambda n: False)
    assert args == ["T", [2, 2], (7,), True] and kwargs == {}  # the gap keeps the kernel's own default


def test_a_gap_without_a_kernel_default_takes_the_schemas_and_keyword_only_binds_by_name_or_rename():
    def kernel(inp, ks, st, ceil, *, s=None):
        ...

    args, kwargs = bind(SCHEMA, _sig(kernel), {"self": "T", "kernel_size": [3], "ceil_mode": False, "scale": 0.5},
                        lambda n: False)
    assert args == ["T", [3], [], False] and kwargs == {"s": 0.5}


def test_a_positional_schema_argument_the_kernel_takes_by_keyword_only_goes_by_keyword():
    def kernel(inp, ks, *, ceil_mode=False):
        ...

    assert bind(SCHEMA, _sig(kernel), {"self": "T", "kernel_size": [2], "ceil_mode": True}, lambda n: False) == \
        (["T", [2]], {"ceil_mode": True})


def test_a_value_the_kernel_has_no_place_for_is_unbindable_unless_it_may_be_left_out():
    def kernel(inp):
        ...

    with pytest.raises(Unbindable, match="takes no argument 'kernel_size'.*case needs kernel_size=\\[2\\]"):
        bind(SCHEMA, _sig(kernel), {"self": "T", "kernel_size": [2]}, lambda n: False)
    assert bind(SCHEMA, _sig(kernel), {"self": "T", "kernel_size": [2]}, lambda n: True) == (["T"], {})


AVG_POOL = '''schema = 1
op = "aten::avg_pool2d"
[dims]
N = { min = 1, max = 64 }
C = { min = 1, max = 64 }
H = { min = 2, max = 4096 }
W = { min = 2, max = 4096 }
[choices]
ceil_mode = [false, true]
[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(N, C, H, W)"
[[args]]
name = "kernel_size"
kind = "ints"
value = [2, 2]
[[args]]
name = "ceil_mode"
kind = "bool"
value = "ceil_mode"
keyword = true
[[paths]]
id = "floor"
when = "not ceil_mode"
outputs = ["(N, C, (H - 2) // 2 + 1, (W - 2) // 2 + 1)"]
[[paths]]
id = "ceil"
when = "ceil_mode"
outputs = ["(N, C, (H - 1) // 2 + 1, (W - 1) // 2 + 1)"]
'''


@pytest.mark.slow
def test_torchs_own_meta_avg_pool2d_under_a_contract_that_says_self(tmp_path):
    """meta_avg_pool2d(input, kernel_size, stride=(), padding=(0,), ceil_mode=False, ...): `self` goes to
    `input` by position and the stride/padding gap keeps the kernel's defaults (it was inconclusive: "the
    kernel takes no argument 'self'")."""
    (tmp_path / "c.toml").write_text(AVG_POOL)
    kernel = function_kernel(TORCH_META, "meta_avg_pool2d", "aten::avg_pool2d")
    report = verify_contract(load_contract(tmp_path / "c.toml"), kernel, Options(jobs=1))
    # bound: both cases run to a verdict; the ceil case's only findings are torch's own dead ceil branch (SC016,
    # kernel 2, stride 2, padding 0: torch.export fails there too), no inconclusive binding; both cases have F13's
    # output record (H // 2 can be 1 from H = 2: export's program refuses it)
    assert [c.verdict.value for c in report.cases] == ["fail", "fail"]  # both run to a verdict
    assert {(v.code, v.case) for v in beyond_output_record(report.violations)} == {("SC016", "ceil_mode=true")}


OPS = textwrap.dedent('''
    import torch

    lib = torch.library.Library("{ns}", "DEF")
    lib.define("dilate(Tensor x, int dilation_h, int dilation_w, *, int pad=0) -> Tensor")
    lib.define("nonzero_rows(Tensor x) -> Tensor")


    def dilate_fake(x, dil_h, dil_w, *, p=0):  # a third-party fake: its own parameter names
        return x.new_empty((x.size(0) * dil_h + p, x.size(1) * dil_w))


    def dilate_short(x):
        return x.new_empty(x.shape)


    def nonzero_fake(x):
        n = torch.library.get_ctx().new_dynamic_size()
        return x.new_empty((n, x.size(1)))
''')

DILATE = '''schema = 1
op = "{ns}::dilate"
[dims]
N = {{ min = 1, max = 1000 }}
D = {{ min = 1, max = 1000 }}
[choices]
dh = [1, 3]
[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(N, D)"
[[args]]
name = "dilation_h"
kind = "int"
value = "dh"
[[args]]
name = "dilation_w"
kind = "int"
value = 2
[[args]]
name = "pad"
kind = "int"
value = 5
keyword = true
[[paths]]
id = "any"
when = "True"
outputs = ["(N * dh + 5, D * 2)"]
'''

NONZERO = '''schema = 1
op = "{ns}::nonzero_rows"
[dims]
N = {{ min = 1 }}
D = {{ min = 1 }}
[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(N, D)"
[[paths]]
id = "any"
when = "True"
outputs = ["{out}"]
'''


def _project(tmp_path, ns, out="unspecified"):
    (tmp_path / "ops.py").write_text(OPS.format(ns=ns))
    (tmp_path / "dilate.toml").write_text(DILATE.format(ns=ns))
    (tmp_path / "nonzero.toml").write_text(NONZERO.format(ns=ns, out=out))
    return tmp_path


@pytest.mark.slow
def test_a_third_party_fake_with_its_own_parameter_names_binds_by_position_and_renamed_keyword(tmp_path):
    p = _project(tmp_path, "bind_rename")
    res = invoke("verify", "op", "bind_rename::dilate", "--meta", "ops.py:dilate_fake", "--contract", "dilate.toml",
                 "-j", "1", "--confirm-export", cwd=p)
    assert res.returncode == 0 and res.stdout.startswith("PASS: bind_rename::dilate"), res.stdout + res.stderr
    assert "2 cases checked, 0 skipped" in res.stdout
    # torch.export calls the op by its schema; the dispatcher's call reaches the fake rebound to its names
    assert res.stdout.count("export succeeded") == 2 and res.stdout.count("agrees with shapecheck's pass") == 2


@pytest.mark.slow
def test_a_fake_without_a_place_for_an_argument_is_skipped_with_the_reason_and_is_inconclusive(tmp_path):
    p = _project(tmp_path, "bind_short")
    res = invoke("verify", "op", "bind_short::dilate", "--meta", "ops.py:dilate_short", "--contract", "dilate.toml",
                 "-j", "1", "--format", "json", cwd=p)
    assert res.returncode == 3, res.stdout + res.stderr
    doc = json.loads(res.stdout)
    assert doc["verdict"] == "inconclusive"
    reasons = [c.get("skipped") or c.get("note") or "" for c in doc["cases"]]
    assert all("the kernel takes no argument 'dilation_h' (it takes 1 positional arguments" in r for r in reasons), reasons


@pytest.mark.slow
@pytest.mark.parametrize("how", ["meta", "import"])
def test_a_fake_that_asks_for_its_context_gets_a_fake_mode_context(tmp_path, how):
    """torch.library.get_ctx() answered None under --meta (SC007 'NoneType' object has no attribute
    'new_dynamic_size'); now the fake gets the context the dispatcher gives it, under --meta as under --import."""
    ns = f"bind_ctx_{how}"
    p = _project(tmp_path, ns)
    if how == "import":
        with open(p / "ops.py", "a") as f:
            f.write(f"\ntorch.library.register_fake('{ns}::nonzero_rows')(nonzero_fake)\n")
        kernel = ["--import", "ops.py"]
    else:
        kernel = ["--meta", "ops.py:nonzero_fake"]
    res = invoke("verify", "op", f"{ns}::nonzero_rows", *kernel, "--contract", "nonzero.toml", "-j", "1", cwd=p)
    assert res.returncode == 0 and "SC007" not in res.stdout, res.stdout + res.stderr


@pytest.mark.slow
def test_a_data_dependent_output_size_under_a_named_contract_shape_is_inconclusive_not_a_crash(tmp_path):
    p = _project(tmp_path, "bind_ctx_named", out="(N, D)")
    res = invoke("verify", "op", "bind_ctx_named::nonzero_rows", "--meta", "ops.py:nonzero_fake", "--contract",
                 "nonzero.toml", "-j", "1", "--format", "json", cwd=p)
    assert res.returncode == 3, res.stdout + res.stderr
    (v,) = json.loads(res.stdout)["violations"]
    assert v["code"] == "SC005" and "data-dependent size" in v["message"] and "does not name" in v["message"]
    assert "u0" not in v["message"] and "u1" not in v["message"]  # no torch-internal symbol names


CUSTOM = textwrap.dedent('''
    import torch

    lib = torch.library.Library("{ns}", "DEF")
    lib.define("decode(Tensor q) -> Tensor")


    @torch.library.register_fake("{ns}::decode")
    def decode_fake(q):
        return q.new_empty(q.shape)
''')

DECODE = '''schema = 1
op = "{ns}::decode"
[dims]
L = {{ min = 1 }}
[[args]]
name = "q"
kind = "tensor"
dtype = "float32"
shape = "(L,)"
[[paths]]
id = "any"
when = "True"
outputs = ["(L,)"]
'''


@pytest.mark.slow
def test_the_same_file_by_import_and_by_meta_is_loaded_once(tmp_path):
    (tmp_path / "lib_ops.py").write_text(CUSTOM.format(ns="bind_once"))
    (tmp_path / "c.toml").write_text(DECODE.format(ns="bind_once"))
    res = invoke("verify", "op", "bind_once::decode", "--import", "lib_ops.py", "--meta", "lib_ops.py:decode_fake",
                 "--contract", "c.toml", "-j", "1", cwd=tmp_path)
    assert res.returncode == 0 and "kernel: lib_ops.py:decode_fake" in res.stdout, res.stdout + res.stderr


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["--meta", "--import"])
def test_a_file_that_registers_an_op_again_is_one_clear_line_exit_2(tmp_path, flag):
    """In a fresh process (the point: what a second registration in one process does, from a clean registry)."""
    (tmp_path / "lib_ops.py").write_text(CUSTOM.format(ns="bind_clash"))
    (tmp_path / "copy_ops.py").write_text(CUSTOM.format(ns="bind_clash"))
    (tmp_path / "c.toml").write_text(DECODE.format(ns="bind_clash"))
    second = ["--meta", "copy_ops.py:decode_fake"] if flag == "--meta" else ["--import", "copy_ops.py"]
    res = run_cli("verify", "op", "bind_clash::decode", "--import", "lib_ops.py", *second, "--contract", "c.toml",
                  cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert f"{flag} copy_ops.py:" in line and "copy_ops.py:4 (lib = torch.library.Library(\"bind_clash\", \"DEF\"))" in line
    assert "registers what is registered already" in line and "import the library once" in line


CUSTOM_OP = textwrap.dedent('''
    import torch


    @torch.library.custom_op("{ns}::decode", mutates_args=())
    def decode(q: torch.Tensor) -> torch.Tensor:
        return q.clone()


    @decode.register_fake
    def decode_fake(q):
        return q.new_empty(q.shape)
''')


@pytest.mark.slow
def test_a_custom_op_defined_twice_by_two_files_loads(tmp_path):
    """torch 2.13 lets a second ``custom_op("ns::op")`` replace the first: a copy of the library given to --meta
    next to --import of the original is no clash."""
    (tmp_path / "lib_ops.py").write_text(CUSTOM_OP.format(ns="bind_twice"))
    (tmp_path / "copy_ops.py").write_text(CUSTOM_OP.format(ns="bind_twice"))
    (tmp_path / "c.toml").write_text(DECODE.format(ns="bind_twice"))
    res = invoke("verify", "op", "bind_twice::decode", "--import", "lib_ops.py", "--meta", "copy_ops.py:decode_fake",
                 "--contract", "c.toml", "-j", "1", cwd=tmp_path)
    assert res.returncode == 0 and "kernel: copy_ops.py:decode_fake" in res.stdout, res.stdout + res.stderr


@pytest.mark.slow
def test_a_meta_source_fake_gets_its_context_too(tmp_path):
    (tmp_path / "fakes.py").write_text(textwrap.dedent('''
        import torch

        @torch.library.register_fake("bind_src::nonzero_rows")
        def nonzero_fake(x):
            n = torch.library.get_ctx().new_dynamic_size()
            return x.new_empty((n, x.size(1)))
    '''))
    (tmp_path / "ops.py").write_text(OPS.format(ns="bind_src"))
    (tmp_path / "nonzero.toml").write_text(NONZERO.format(ns="bind_src", out="unspecified"))
    res = invoke("verify", "op", "bind_src::nonzero_rows", "--import", "ops.py", "--meta-source", "fakes.py",
                 "--contract", "nonzero.toml", "-j", "1", cwd=tmp_path)
    assert res.returncode == 0 and "kernel: fakes.py:nonzero_fake" in res.stdout, res.stdout + res.stderr
