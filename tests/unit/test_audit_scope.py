"""``audit --import LIB`` audits the ops LIB registers: every op of a namespace the import made, and only the ops
it added to a namespace that was there before (a library that adds ``aten::_cat_nop``, as executorch does, or
ops of torch's own ``quantized_decomposed``, no longer brings every aten op of torch into its audit). A library
that prints while it imports or runs leaves a machine-readable report on stdout intact."""

from __future__ import annotations

import json
import sys

import pytest

from tests.unit.test_audit_untraced import audit_lib

FRAGMENT = '''
import torch

frag = torch.library.Library("aten", "FRAGMENT")
frag.define("scope_nop(Tensor x) -> Tensor")
frag.impl("scope_nop", lambda x: x.clone(), "CompositeExplicitAutograd")


@torch.library.custom_op("scopelib::double", mutates_args=())
def double(x: torch.Tensor) -> torch.Tensor:
    print("double called")
    return x * 2


@double.register_fake
def _(x):
    print("fake called")
    return torch.empty_like(x)


print("scopelib: loaded")
'''


@pytest.mark.slow
def test_an_import_that_adds_an_aten_op_audits_its_own_ops_not_torchs(tmp_path, monkeypatch, capfd):
    code, doc = audit_lib(tmp_path, monkeypatch, "scopelib", FRAGMENT)
    ops = sorted(r["op"] for r in doc["ops"])
    assert ops == ["aten::scope_nop.default", "scopelib::double.default"], ops
    assert code in (0, 3), doc["coverage"]
    sys.modules.pop("scopelib", None)


@pytest.mark.slow
def test_prints_of_the_library_in_the_process_and_its_workers_leave_a_json_report_on_stdout(tmp_path):
    """The process boundary is the point: the library prints through file descriptor 1 in this process and in
    the forked workers (``-j 2``), and ``os.write(1, ...)`` as C code would."""
    import os
    import subprocess

    (tmp_path / "chatty.py").write_text(FRAGMENT.replace("scopelib", "chattylib").replace("scope_nop", "chatty_nop")
                                        + "\nimport os\nos.write(1, b'from C\\n')\n")
    res = subprocess.run([sys.executable, "-m", "shapecheck", "audit", "--import", str(tmp_path / "chatty.py"),
                          "-j", "2", "--no-cache", "--format", "json"], cwd=tmp_path, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONWARNINGS="ignore"), timeout=600)
    doc = json.loads(res.stdout)
    assert sorted(r["op"] for r in doc["ops"]) == ["aten::chatty_nop.default", "chattylib::double.default"]
    assert "chattylib: loaded" in res.stderr and "from C" in res.stderr


@pytest.mark.slow
def test_an_import_of_a_torch_module_audits_the_ops_that_module_registers(tmp_path):
    """torch's own ``quantized_decomposed`` ops are registered by the torch module an ``--import`` names: they are
    its ops (the filter for torch modules loaded on the way left them out, and --import alone was exit 2, while
    --ops alone finds nothing until something imports the module). A fresh process: the point is that nothing
    imported the module before."""
    import os
    import subprocess

    res = subprocess.run([sys.executable, "-m", "shapecheck", "audit", "--import",
                          "torch.ao.quantization.fx._decomposed", "--shard", "1/19", "--no-eager", "-j", "1",
                          "--no-cache", "--format", "json"], cwd=tmp_path, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONWARNINGS="ignore"), timeout=600)
    assert res.returncode in (0, 1, 3), res.stderr
    (record,) = json.loads(res.stdout)["ops"]
    assert record["op"].startswith("quantized_decomposed::")



BESIDE_TORCH = '''
import torch
import torch.ao.quantization.fx._decomposed  # torch's own quantized_decomposed ops, loaded on the way

lib = torch.library.Library("quantized_decomposed", "FRAGMENT")
lib.define("scope_probe(Tensor x) -> Tensor")
lib.impl("scope_probe", lambda x: x.clone(), "CPU")
torch.library.register_fake("quantized_decomposed::scope_probe", lambda x: torch.empty_like(x), lib=lib)
'''


@pytest.mark.slow
def test_a_library_that_adds_to_a_namespace_torch_makes_on_the_way_is_audited_without_torchs_ops(tmp_path):
    """executorch's import loads torch.ao's module, which makes ``quantized_decomposed`` (19 ops of torch's),
    and adds 17 ops of its own there: the namespace is new to the run, yet only the library's ops are its.
    A fresh process: the point is that nothing imported torch.ao's module before."""
    import os
    import subprocess

    (tmp_path / "besidelib.py").write_text(BESIDE_TORCH)
    probe = ("import json, sys\nfrom shapecheck.audit.scope import imported_ops, enumerate_all\n"
             "assert 'torch.ao.quantization.fx._decomposed' not in sys.modules\n"
             "extra, fresh, foreign = imported_ops(('besidelib',))\n"
             "print(json.dumps(sorted(enumerate_all((), fresh, extra, foreign)[0])))\n"
             "print(json.dumps(sorted(enumerate_all(('quantized_decomposed::*',), fresh, extra, set())[0])))\n")
    res = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONWARNINGS="ignore", PYTHONPATH=f"{tmp_path}{os.pathsep}"
                                  f"{os.environ.get('PYTHONPATH', '')}"))
    assert res.returncode == 0, res.stderr[-2000:]
    scoped, named = (json.loads(line) for line in res.stdout.strip().splitlines()[-2:])
    assert scoped == ["quantized_decomposed::scope_probe.default"], scoped
    assert len(named) > 10 and "quantized_decomposed::scope_probe.default" in named  # the namespace named: all


INT_ONLY = '''
import torch


@torch.library.custom_op("intlay::inc", mutates_args=())
def inc(x: torch.Tensor) -> torch.Tensor:
    torch._check(x.dtype == torch.int8, lambda: "inc takes int8")
    return x + 1  # elementwise: the output keeps the input's memory order


@inc.register_fake
def _(x):
    torch._check(x.dtype == torch.int8, lambda: "inc takes int8")
    return x.new_empty(x.shape)  # contiguous, whatever the input's order
'''


@pytest.mark.slow
def test_an_op_of_integer_tensors_alone_gets_a_non_contiguous_input_too(tmp_path, monkeypatch):
    """The layout variant took only floating tensors: a quantized op's int8 input was never transposed, and a
    fake whose strides differ from the eager kernel's was clean."""
    code, doc = audit_lib(tmp_path, monkeypatch, "intlay", INT_ONLY)
    (rec,) = doc["ops"]
    sc040 = [f for f in rec["findings"] if f["code"] == "SC040"]
    assert code == 1 and sc040, rec
    sys.modules.pop("intlay", None)


PROMOTING = '''
import math

import torch


@torch.library.custom_op("promolib::mul", mutates_args=())
def mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x * y


@mul.register_fake
def _(x, y):
    return x.new_empty(torch.broadcast_shapes(x.shape, y.shape))  # keeps x's dtype: eager promotes


@torch.library.custom_op("promolib::resize_rows", mutates_args=())
def resize_rows(x: torch.Tensor, scale: float = 2.0) -> torch.Tensor:
    return x.new_zeros((math.floor(x.size(0) * scale), x.size(1)))


@resize_rows.register_fake
def _(x, scale=2.0):
    return x.new_empty((math.ceil(x.size(0) * scale), x.size(1)))  # ceil: the same as floor at whole scales
'''


@pytest.mark.slow
def test_a_float_argument_off_the_integers_and_a_wider_second_dtype_find_what_the_defaults_hide(tmp_path, monkeypatch):
    """Only the default scale (2.0) was tried, where floor and ceil agree, and the mixed-dtype variant gave the
    second tensor bfloat16 beside float32, which promotes to float32 as a fake that keeps x's dtype does."""
    code, doc = audit_lib(tmp_path, monkeypatch, "promolib", PROMOTING)
    found = {r["op"]: r for r in doc["ops"]}
    rows = [f for f in found["promolib::resize_rows.default"]["findings"] if f["code"] == "SC038"]
    assert code == 1 and rows and "scale=1.5" in rows[0]["message"], found["promolib::resize_rows.default"]
    dtype = [f for f in found["promolib::mul.default"]["findings"] if f["code"] == "SC039"]
    assert dtype and "as float64" in dtype[0]["message"], found["promolib::mul.default"]
    sys.modules.pop("promolib", None)


DEVICE_ARG = '''
import torch

lib = torch.library.Library("devarg", "DEF")
lib.define("make(Tensor x, Device device) -> Tensor")
lib.impl("make", lambda x, device: torch.zeros((x.size(0), 2), device=device), "CompositeExplicitAutograd")


@torch.library.register_fake("devarg::make")
def _(x, device):
    return torch.empty((x.size(0), 3), device=device)  # 3 columns where the kernel makes 2
'''


@pytest.mark.slow
def test_an_op_with_a_device_argument_gets_inputs(tmp_path, monkeypatch):
    """A ``Device`` argument had no value ("no value can be made for device"): the op ended without inputs."""
    code, doc = audit_lib(tmp_path, monkeypatch, "devarg", DEVICE_ARG)
    (rec,) = doc["ops"]
    assert code == 1 and [f["code"] for f in rec["findings"]] == ["SC038"], rec
    sys.modules.pop("devarg", None)


AXIS_ARG = '''
import torch
from torch.library import custom_op


@custom_op("axisarg::halve", mutates_args=())
def halve(x: torch.Tensor, dim: int, mode: int = 0) -> torch.Tensor:  # schema: SymInt dim, SymInt mode=0
    n = x.size(dim)
    return x.narrow(dim, 0, n // 2 if mode == 0 else n).clone()


@halve.register_fake
def _(x, dim, mode=0):
    n = x.size(dim)
    return x.new_empty((n // 2 if mode == 0 else n, *x.shape[1:]) if dim % 2 == 0 else (x.size(0), n // 2 if mode == 0 else n))
'''


@pytest.mark.slow
def test_an_int_that_names_an_axis_or_a_mode_is_a_constant_not_a_size(tmp_path, monkeypatch):
    """torch.library.custom_op makes every Python int a SymInt; the audit took ``dim`` and ``mode`` for sizes and
    reported the fake's ``dim % 2`` and ``mode == 0`` as guards that export would install (SC032, SC030), though
    every caller passes them as constants."""
    code, doc = audit_lib(tmp_path, monkeypatch, "axisarg", AXIS_ARG)
    (rec,) = doc["ops"]
    assert not [f for f in rec["findings"] if f["code"] in ("SC030", "SC031", "SC032")], rec["findings"]
    assert rec["traces"] > 0
    sys.modules.pop("axisarg", None)


@pytest.mark.slow
def test_a_meta_source_file_without_ops_audits_the_ops_it_registers():
    """``audit --meta-source FILE`` without ``--ops``: the aten ops FILE registers a function for. Every other aten
    op runs the installed kernel, whose audit the file cannot change (it audited all 1653, about 30 minutes)."""
    from tests.conftest import KERNELS, invoke

    res = invoke("audit", "--meta-source", str(KERNELS / "decomp_registrations.py"), "-j", "1", "--no-cache",
                 "--format", "json")
    report = json.loads(res.stdout)
    assert [r["op"] for r in report["ops"]] == ["aten::im2col.default"] and report["total_ops"] == 1
    assert report["ops"][0]["kernel"] == "decomp_registrations.py:im2col" and res.returncode == 1


@pytest.mark.slow
def test_a_meta_source_file_of_out_variants_only_is_bad_input_not_a_pass_of_0_ops(tmp_path):
    from tests.conftest import invoke

    only = tmp_path / "onlyout.py"
    only.write_text("import torch\nfrom torch._meta_registrations import register_meta\naten = torch.ops.aten\n\n\n"
                    "@register_meta(aten.index_select.out)\ndef meta_index_select_out(self, dim, index, *, out):\n"
                    "    raise RuntimeError('broken')\n")
    res = invoke("audit", "--meta-source", str(only), "-j", "1", "--no-cache")
    assert res.returncode == 2 and "registers no op the audit covers" in res.stderr and "PASS" not in res.stdout
