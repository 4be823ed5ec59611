"""A fourth hostile-input hunt, from a wheel install (2026-12-04): each input below gave exit 4, a hang, a
wrong exit code, or was accepted by `contract check` although it is malformed. Each now gets a one-line error
naming the file and key (exit 2), or the verdict the rest of the tool gives such a run."""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests.conftest import KERNELS, invoke

CONTRACT = """schema = 1
op = "aten::pixel_shuffle"
[dims]
B = { max = 65536 }
C = { max = 65536 }
Ci = { max = 1048576 }
H = { max = 65536 }
W = { max = 65536 }
[choices]
r = [2]
[domain]
requires = ["Ci == C * r * r"]
[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(B, Ci, H, W)"
[[args]]
name = "upscale_factor"
kind = "int"
value = "r"
[[paths]]
id = "shuffle"
when = "true"
outputs = ["(B, C, H * r, W * r)"]
"""


def _write(tmp_path, text: str, name: str = "c.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _one_line_error(res, *words: str) -> None:
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr and res.stderr.strip().count("\n") == 0, res.stderr
    for w in words:
        assert w in res.stderr, res.stderr


@pytest.mark.parametrize("change, key, why", [
    (('"float32"', '"qint8"'), "[args.self.dtype]", "quantized dtype"),
    (('value = "r"', "value = \"'r'\""), "[args.upscale_factor.value]", "an int argument needs an integer"),
    (('value = "r"', "value = 2.5"), "[args.upscale_factor.value]", "found 2.5"),
    (('"Ci == C * r * r"', '"Ci == C * r * r # hi"'), "[domain.requires[0]]", "a # at column 17"),
    (('shape = "(B, Ci, H, W)"', 'shape = "(B, Ci, H, W)"\nvalues = { sum = "B" }'), "[args.self.values]",
     "only of an integer tensor"),
    (('shape = "(B, Ci, H, W)"', 'shape = "(B, Ci, H, W)"\nlow = "5"\nhigh = "1"'), "[args.self.low]",
     "not below high"),
    (('outputs = ["(B, C, H * r, W * r)"]', 'outputs = [{ shape = "(n, C, H * r, W * r)", sizes = { n = { min = "5", '
      'max = "1" } } }]'), "outputs[0].sizes.n.min", "above max"),
    (("[[paths]]", '[[suppress]]\nrule = "SC001"\nreason = "x"\npath = "nope"\n[[paths]]'), "[suppress[0].path]",
     "no path 'nope'"),
])
def test_contract_check_refuses_what_verify_could_not_run_or_would_misread(tmp_path, change, key, why):
    old, new = change
    assert old in CONTRACT
    res = invoke("contract", "check", _write(tmp_path, CONTRACT.replace(old, new, 1)))
    _one_line_error(res, "c.toml", key, why)


def test_a_suppression_naming_a_real_path_and_every_dtype_of_an_integer_tensor_still_load(tmp_path):
    text = CONTRACT.replace("[[paths]]", '[[suppress]]\nrule = "SC001"\nreason = "x"\npath = "shuffle"\n[[paths]]', 1)
    assert invoke("contract", "check", _write(tmp_path, text)).returncode == 0


def test_more_dims_than_the_limit_are_refused_at_once(tmp_path):
    many = "".join(f"D{i} = {{}}\n" for i in range(300))
    res = invoke("contract", "check", _write(tmp_path, CONTRACT.replace("[dims]\n", "[dims]\n" + many, 1)))
    _one_line_error(res, "[dims]", "over the limit of 256")


@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_storage_offset_beyond_what_torch_addresses_is_never_an_internal_error(tmp_path):
    """An offset of 2**63-1 is the contract's error at load, naming the key, in every command (hunt 54: verify
    exited 4 making the tensor; fuzz and ref check said inconclusive)."""
    text = CONTRACT.replace('shape = "(B, Ci, H, W)"', 'shape = "(B, Ci, H, W)"\nstorage_offset = "9223372036854775807"')
    path = _write(tmp_path, text)
    for args in (("verify", "op"), ("fuzz", "op"), ("ref", "check")):
        res = invoke(*args, "aten::pixel_shuffle", "--contract", path)
        _one_line_error(res, "[args.self.storage_offset]", "int64")


def test_an_explicit_example_too_large_for_torch_is_bad_input(tmp_path):
    res = invoke("fuzz", "op", "aten::pixel_shuffle", "--contract", _write(tmp_path, CONTRACT), "--example",
                 "r=2;B=65536,C=65536,Ci=262144,H=65536,W=65536")
    _one_line_error(res, "--example", "more than torch can address")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")
def test_an_output_that_is_a_fifo_is_refused_instead_of_hanging(tmp_path):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    path = _write(tmp_path, CONTRACT)
    res = invoke("verify", "op", "aten::pixel_shuffle", "--contract", path, "--output", f"json={fifo}")
    _one_line_error(res, "a FIFO or socket, not a file")
    res = invoke("contract", "draft", "aten::pixel_shuffle", "--out", fifo)
    _one_line_error(res, "--out", "a FIFO or socket, not a file")


@pytest.mark.slow
def test_a_kernel_that_raises_keyboardinterrupt_fails_as_its_other_exceptions_do(tmp_path):
    kernel = _write(tmp_path, "import torch\nfrom torch._meta_registrations import register_meta\n"
                    "@register_meta(torch.ops.aten.pixel_shuffle)\ndef meta_pixel_shuffle(self, upscale_factor):\n"
                    "    raise KeyboardInterrupt\n", "kb.py")
    res = invoke("verify", "op", "aten::pixel_shuffle", "--contract", _write(tmp_path, CONTRACT), "-j", "1",
                 "--meta-source", kernel, "--format", "json", "--no-cache")
    assert res.returncode == 1, res.stderr
    assert {v["code"] for v in json.loads(res.stdout)["violations"]} == {"SC007"}


def test_a_kernels_keyboardinterrupt_is_its_failure_where_ctrl_c_is_ignored(tmp_path, monkeypatch):
    """A CI step run in a shell's background (or under nohup) has SIGINT ignored: Ctrl-C raises nothing there, so a
    KeyboardInterrupt is the kernel's own (SC007), not the user stopping the run (it was "aborted", exit 2)."""
    import signal

    from shapecheck import errors

    kernel = _write(tmp_path, "import torch\nfrom torch._meta_registrations import register_meta\n"
                    "@register_meta(torch.ops.aten.pixel_shuffle)\ndef meta_pixel_shuffle(self, upscale_factor):\n"
                    "    raise KeyboardInterrupt\n", "kb.py")
    monkeypatch.setattr(errors, "_WATCH", {"installed": False, "stopped": False})
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        res = invoke("verify", "op", "aten::pixel_shuffle", "--contract", _write(tmp_path, CONTRACT), "-j", "1",
                     "--meta-source", kernel, "--format", "json", "--no-cache")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert res.returncode == 1, res.stderr
    assert {v["code"] for v in json.loads(res.stdout)["violations"]} == {"SC007"}


@pytest.mark.slow  # over 0.5 s on an idle core
def test_baseline_entries_are_checked_key_by_key(tmp_path):
    kernel = _write(tmp_path, "import torch\nfrom torch._meta_registrations import register_meta\n"
                    "@register_meta(torch.ops.aten.pixel_shuffle)\ndef meta_pixel_shuffle(self, upscale_factor):\n"
                    "    b, c, h, w = self.shape\n    if h <= 8:\n        pass\n"
                    "    return self.new_empty((b, c // 4, h * 2, w * 2))\n", "bad.py")
    contract, baseline = _write(tmp_path, CONTRACT), tmp_path / "bl.json"
    common = ("gate", contract, "--meta-source", kernel, "-j", "1", "--no-cache")
    assert invoke(*common, "--write-baseline", baseline).returncode == 0
    doc = json.loads(baseline.read_text())
    assert invoke(*common, "--baseline", baseline).returncode == 0
    for key, value, words in (("rule", "SC999", "no rule 'SC999'"), ("line", "10", "expected int or null"),
                              ("rule", "SC030", "SC030 is never reported by gate"),  # an audit rule
                              ("file", 5, "expected str or null"), ("zzz", 1, "unknown key 'zzz'"),
                              ("rule", None, "no 'rule'")):
        entry = dict(doc["findings"][0])
        if value is None:
            del entry[key]
        else:
            entry[key] = value
        baseline.write_text(json.dumps({**doc, "findings": [entry]}))
        _one_line_error(invoke(*common, "--baseline", baseline), "bl.json", words)
    baseline.write_text(json.dumps({**doc, "extra": 1}))
    _one_line_error(invoke(*common, "--baseline", baseline), "[extra]: unknown key")


@pytest.mark.slow  # it waits out the hook's time limit
def test_a_samples_hook_that_raises_keyboardinterrupt_or_never_ends_gives_no_samples(tmp_path, monkeypatch):
    (tmp_path / "r4hooks.py").write_text(
        "import torch\ndef raise_kb(op):\n    raise KeyboardInterrupt\n"
        "def endless(op):\n    while True:\n        yield ((torch.zeros(1, 8, 2, 2), 2), {})\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for hook in ("raise_kb", "endless"):
        res = invoke("audit", "--ops", "aten::pixel_shuffle.default", "-j", "1", "-q", "--no-cache", "--samples",
                     f"r4hooks:{hook}")
        assert res.returncode in (0, 1) and "Traceback" not in res.stderr, res.stderr
    sys.modules.pop("r4hooks", None)
    res = invoke("audit", "--ops", "aten::pixel_shuffle.default", "--samples", "r4nohook:x")
    _one_line_error(res, "--samples", "cannot import r4nohook")


assert KERNELS.is_dir()


@pytest.mark.slow
def test_a_meta_source_functions_annotations_are_evaluated_as_its_import_would(tmp_path):
    """shapecheck's own ``from __future__ import annotations`` leaked into the file's functions, so an annotation
    naming what this torch lacks never ran (torch 2.4's linalg_qr_meta was verified though it cannot be defined on
    2.13). The file's own imports are bound first: its ``List`` is found."""
    body = ("import torch\nfrom typing import List\nfrom torch._meta_registrations import register_meta\n"
            "@register_meta(torch.ops.aten.pixel_shuffle)\n"
            "def meta_pixel_shuffle(self, upscale_factor: {ann}) -> torch.Tensor:\n"
            "    b, c, h, w = self.shape\n"
            "    return self.new_empty((b, c // (upscale_factor * upscale_factor), h * upscale_factor, "
            "w * upscale_factor))\n")
    contract = _write(tmp_path, CONTRACT)
    bad = _write(tmp_path, body.format(ann="NameOnlyIn2_99"), "bad_ann.py")
    _one_line_error(invoke("verify", "op", "aten::pixel_shuffle", "--contract", contract, "--meta-source", bad, "-j", "1"),
                    "bad_ann.py:5", "defining meta_pixel_shuffle failed: NameError")
    good = _write(tmp_path, body.format(ann="List[int]"), "good_ann.py")
    assert invoke("verify", "op", "aten::pixel_shuffle", "--contract", contract, "--meta-source", good, "-j", "1",
                  "--no-cache").returncode == 0
