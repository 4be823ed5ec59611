"""The audit of a library's ops whose symbolic traces raise, and of kernels a library registers through
``torch.library.impl`` (optimum-quanto's pattern): a raise after torch's helper assumed a side is explored on
both sides, an op no symbolic trace of which returned is never a pass, the library's own function is named and
located, and a samples hook in the library's own package leaves ``--import`` its ops."""

from __future__ import annotations

import json
import sys

import pytest

from tests.unit.test_audit_untraced import _audit, audit_lib

SQUEEZE = '''
import torch


@torch.library.custom_op("sqlib::qsym", mutates_args=())
def qsym(base: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    if torch.squeeze(scale).ndim > 1:
        raise ValueError("Quantizing along multiple axis is not supported")
    return (base / scale).round().to(torch.int8)


@qsym.register_fake
def _(base, scale):
    if torch.squeeze(scale).ndim > 1:  # under unbacked sizes squeeze keeps scale's last dim: the raise
        raise ValueError("Quantizing along multiple axis is not supported")
    return (base / scale).round().to(torch.int8)


def samples(op):
    return [((torch.randn(4, 8), torch.rand(4, 1) + 0.1), {})] if op == "sqlib::qsym.default" else []
'''

OWN_FALLBACK = '''
import torch
from torch.fx.experimental.symbolic_shapes import guard_or_false


@torch.library.custom_op("fblib::rows", mutates_args=())
def rows(x: torch.Tensor) -> torch.Tensor:
    if x.shape[1] != 1:
        raise ValueError("one column only")
    return x.clone()


@rows.register_fake
def _(x):
    if not guard_or_false(x.shape[1] == 1):  # its own fallback: False under unbacked sizes, so it always raises
        raise ValueError("one column only")
    return torch.empty_like(x)


def samples(op):
    return [((torch.randn(4, 1),), {})] if op == "fblib::rows.default" else []
'''

IMPL = '''
import torch

torch.library.define("impllib::half_rows", "(Tensor self, int bits) -> Tensor")


@torch.library.impl("impllib::half_rows", "default")
def half_rows(x, bits):
    return torch.cat([x] * (8 // bits))
'''


def _samples_run(tmp_path, monkeypatch, name: str, source: str, variants: int = 0) -> tuple[int, dict]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out = _audit("--import", name, "--samples", f"{name}:samples", "--variants", str(variants), "-j", "1",
                       "--no-cache", "--format", "json")
    return code, json.loads(out)


@pytest.mark.slow
def test_a_raise_after_a_helpers_assumed_side_is_explored_on_the_other_side(tmp_path, monkeypatch):
    code, doc = _samples_run(tmp_path, monkeypatch, "sqlib", SQUEEZE)
    (rec,) = doc["ops"]
    assert rec["finished"] >= 1 and rec["paths"], rec  # the side squeeze drops scale_1 = 1 on returned
    assert any("scale_1 == 1" in p["when"] for p in rec["paths"])
    assert [r["expr"] for r in rec["requires"]] == ["base_0 == scale_0 (or broadcast: 1)"]
    assert code == 0 and rec["status"] == "relation-only"
    sys.modules.pop("sqlib", None)


@pytest.mark.slow
def test_an_op_no_symbolic_trace_of_which_returned_is_inconclusive(tmp_path, monkeypatch):
    code, doc = _samples_run(tmp_path, monkeypatch, "fblib", OWN_FALLBACK)
    (rec,) = doc["ops"]
    assert rec["traces"] >= 1 and rec["finished"] == 0 and rec["paths"] == []
    assert rec["status"] == "inconclusive" and code == 3, rec
    assert any(n.startswith("not traced: no symbolic trace") for n in rec["notes"])
    sys.modules.pop("fblib", None)


@pytest.mark.slow
def test_a_function_registered_with_torch_library_impl_is_named_and_located(tmp_path, monkeypatch):
    code, doc = audit_lib(tmp_path, monkeypatch, "impllib", IMPL)
    (rec,) = doc["ops"]
    assert rec["kernel"].startswith("impllib::half_rows.default: Python CompositeExplicitAutograd kernel"), rec["kernel"]
    assert "half_rows at" in rec["kernel"] and "installed torch" not in rec["kernel"]
    assert rec["definition"]["file"].endswith("impllib.py") and rec["definition"]["line"] == 8
    sys.modules.pop("impllib", None)


@pytest.mark.slow
def test_a_samples_hook_in_the_librarys_own_package_leaves_the_import_its_ops(tmp_path, monkeypatch):
    pkg = tmp_path / "hooklib"
    (pkg / "testing").mkdir(parents=True)
    (pkg / "__init__.py").write_text(IMPL.replace("impllib", "hooklib"))
    (pkg / "testing" / "__init__.py").write_text("")
    (pkg / "testing" / "samples.py").write_text(
        "import torch\nimport hooklib  # noqa: F401\n\n\ndef samples(op):\n"
        "    return [((torch.randn(2, 3), 4), {})]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out = _audit("--import", "hooklib", "--samples", "hooklib.testing.samples:samples", "--variants", "0",
                       "-j", "1", "--no-cache", "--format", "json")
    doc = json.loads(out)
    assert code in (0, 1, 3), out[-500:]
    assert [r["op"] for r in doc["ops"]] == ["hooklib::half_rows.default"]
    assert doc["ops"][0]["inputs"] == "samples"
    for name in [m for m in sys.modules if m.startswith("hooklib")]:
        sys.modules.pop(name, None)


UNPACK = '''
import torch


@torch.library.custom_op("u8lib::unpack", mutates_args=())
def unpack(packed: torch.Tensor, bits: int) -> torch.Tensor:
    if packed.dtype != torch.uint8:  # the CPU kernel takes packed bytes only
        raise RuntimeError(f"Unsupported data type: {packed.dtype}")
    return torch.cat([(packed >> (bits * i)) & (2**bits - 1) for i in range(8 // bits)]).to(torch.uint8)


@unpack.register_fake
def _(packed, bits):  # takes any dtype
    return packed.new_empty((packed.shape[0] * (8 // bits),) + tuple(packed.shape[1:]), dtype=torch.uint8)


def samples(op):
    return [((torch.randint(0, 255, (3, 3), dtype=torch.uint8), 4), {})] if op == "u8lib::unpack.default" else []
'''


@pytest.mark.slow
def test_a_fake_that_takes_a_dtype_the_eager_kernel_refuses_is_found_with_uint8_inputs(tmp_path, monkeypatch):
    code, doc = _samples_run(tmp_path, monkeypatch, "u8lib", UNPACK, variants=2)
    (rec,) = doc["ops"]
    # (another SC041: bits = 9, where the output by the fake's formula is empty and the eager kernel raises)
    accepts = [f for f in rec["findings"] if f["code"] == "SC041" and "packed as int8" in f["expr"]]
    assert code == 1 and accepts, rec["findings"]
    assert "Unsupported data type" in accepts[0]["message"]
    sys.modules.pop("u8lib", None)


def test_the_ranks_of_an_audit_records_example_call():
    from shapecheck.audit.draft_dir import example_ranks

    text = "input=float32[input_0, input_1], bits=4, offs=int64[offs_0], s=float32[], dtype=int8"
    assert example_ranks(text) == {"input": 2, "offs": 1, "s": 0}


@pytest.mark.slow
def test_audit_drafts_the_call_its_samples_made(tmp_path, monkeypatch):
    code, doc = _samples_run(tmp_path, monkeypatch, "sqdraft", SQUEEZE.replace("sqlib", "sqdraft"))
    _audit("--import", "sqdraft", "--samples", "sqdraft:samples", "--variants", "0", "-j", "1", "--no-cache",
           "--draft", str(tmp_path / "drafts"))
    text = (tmp_path / "drafts" / "sqdraft" / "qsym.default.toml").read_text()
    shapes = [line for line in text.splitlines() if line.startswith("shape = ")]
    assert shapes == ['shape = "(A0, A1)"  # rank from the audit\'s example call',
                      'shape = "(B0, B1)"  # rank from the audit\'s example call'], shapes
    sys.modules.pop("sqdraft", None)



KI_KERNEL = '''import torch
from torch._meta_registrations import register_meta
aten = torch.ops.aten


@register_meta(aten.pixel_shuffle.default)
def meta_ps(self, upscale_factor):
    raise KeyboardInterrupt("the kernel's own")
'''


@pytest.mark.slow
def test_a_fake_that_raises_keyboardinterrupt_is_a_fake_that_rejects(tmp_path, capfd):
    """The kernel's own KeyboardInterrupt (no Ctrl-C came) is its failure, as verify says (SC007): the audit's
    worker goes on, prints no traceback, and the op is without inputs (never a pass), not 'not run'."""
    kernel = tmp_path / "ki.py"
    kernel.write_text(KI_KERNEL)
    code, out = _audit("--meta-source", str(kernel), "--ops", "aten::pixel_shuffle.default", "-j", "1", "--no-cache",
                       "--format", "json")
    (rec,) = json.loads(out)["ops"]
    assert code == 3 and rec["status"] == "no-inputs", rec
    assert "Traceback" not in capfd.readouterr().err


SIDE_CHECK = '''
import torch


@torch.library.custom_op("sidelib::sidecheck", mutates_args=())
def sidecheck(x: torch.Tensor) -> torch.Tensor:
    if x.shape[0] > 16:
        torch._check(x.shape[1] % 8 == 0, lambda: "a multiple of 8 for big x")
    return x.clone()


@sidecheck.register_fake
def _(x):
    if x.shape[0] > 16:
        torch._check(x.shape[1] % 8 == 0, lambda: "a multiple of 8 for big x")
    return torch.empty_like(x)
'''


@pytest.mark.slow
def test_a_check_on_one_side_of_a_branch_is_a_branch_and_a_premised_relation(tmp_path, monkeypatch):
    """The side x_0 > 16 is refused with x_1 at the example's 3, yet its own trace returns (asserting x_1 % 8 == 0):
    the branch is the kernel's (strict export with a dynamic x_0 refuses it), and the relation is premised on it,
    never ``requires x_0 <= 16`` with a pass."""
    code, doc = audit_lib(tmp_path, monkeypatch, "sidelib", SIDE_CHECK)
    (rec,) = doc["ops"]
    assert [(f["class"], f["expr"]) for f in rec["findings"]] == [("constant-comparison", "x_0 > 16")], rec
    assert [r["expr"] for r in rec["requires"]] == ["x_0 <= 16 or x_1 % 8 == 0"]
    assert code == 1
    sys.modules.pop("sidelib", None)


PARTIAL = '''
import functools

import torch

torch.library.define("partlib::rows", "(Tensor x) -> Tensor")


def rows(x, scale):
    if x.shape[0] == 7:
        return x.new_empty((x.shape[0] * scale, x.shape[1]))
    return x.new_empty((x.shape[0], x.shape[1]))


torch.library.impl("partlib::rows", "default")(functools.partial(rows, scale=2))
'''


@pytest.mark.slow
def test_a_kernel_registered_as_a_partial_is_its_functions(tmp_path, monkeypatch):
    code, doc = audit_lib(tmp_path, monkeypatch, "partlib", PARTIAL)
    (rec,) = doc["ops"]
    assert "rows at" in rec["kernel"] and "installed torch" not in rec["kernel"], rec["kernel"]
    [f] = [f for f in rec["findings"] if f["expr"] == "x_0 == 7"]
    assert f["location"]["line"] == 10 and f["location"]["file"].endswith("partlib.py")
    sys.modules.pop("partlib", None)


@pytest.mark.slow
def test_a_samples_hook_in_a_package_of_the_current_directory_beside_an_imported_file(tmp_path, monkeypatch):
    """``--import sphk/ops.py`` puts sphk/ on the path, not the current directory; the hook
    ``sphk.testing.hook:samples`` still imports, as a module named on the command line does."""
    pkg = tmp_path / "sphk"
    (pkg / "testing").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "testing" / "__init__.py").write_text("")
    (pkg / "ops.py").write_text(IMPL.replace("impllib", "sphk"))
    (pkg / "testing" / "hook.py").write_text("import torch\n\n\ndef samples(op):\n    return [((torch.randn(2, 3), 4), {})]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    code, out = _audit("--import", "sphk/ops.py", "--samples", "sphk.testing.hook:samples", "--variants", "0", "-j", "1",
                       "--no-cache", "--format", "json")
    assert code in (0, 1, 3), out[-500:]
    (rec,) = json.loads(out)["ops"]
    assert rec["inputs"] == "samples"
    for name in [m for m in sys.modules if m.startswith("sphk") or m == "ops"]:
        sys.modules.pop(name, None)
