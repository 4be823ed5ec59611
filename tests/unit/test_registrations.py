"""``--meta-source`` picks the function registered for exactly the op's overload, as torch's register_meta
does: on the installed torch's own unmodified file the gate agrees with the gate on the installed kernels,
for every shipped contract; on torch 2.14.1's file every contract gets its ``.default`` kernel."""

import ast
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from shapecheck.kernel.registrations import find_registration
from tests.conftest import ROOT

FILE = textwrap.dedent('''
    import torch
    from torch._prims_common import ops as aliased
    aten = torch.ops.aten
    quant = torch.ops.quantized

    @register_meta(aten.foo)
    def foo_packet(x): ...

    @register_meta([aten.foo.quantized])
    def foo_quantized(x): ...

    @register_meta([aten.bar.default, (aten.bar.out, aten.baz.Tensor)])
    def bar_and_baz(x): ...

    @register_meta(torch.ops.aten.qux.default)
    def qux(x): ...

    @register_meta("mylib::decode.default")
    def decode(x): ...

    @register_meta(quant.linear)
    def qlinear(x): ...

    @out_wrapper()
    @register_meta(aten.twice)
    def twice_first(x): ...

    @register_meta(aten.twice.default)
    def twice_second(x): ...

    @register_meta(aten.twice)
    def twice_third(x): ...

    @register_meta(some_list)
    def from_a_variable(x): ...
''')


@pytest.mark.parametrize("op, function", [
    ("aten::foo", "foo_packet"),                # no overload is .default, which the packet registers
    ("aten::foo.default", "foo_packet"),
    ("aten::foo.quantized", "foo_quantized"),   # the exact overload beats the packet, wherever it stands
    ("aten::bar", "bar_and_baz"),
    ("aten::bar.out", "bar_and_baz"),           # nested lists and tuples
    ("aten::baz.Tensor", "bar_and_baz"),
    ("aten::qux", "qux"),                       # torch.ops.ns.op.overload spelt out
    ("mylib::decode", "decode"),                # a string name
    ("quantized::linear.default", "qlinear"),   # a module-level alias of another namespace
    ("aten::twice", "twice_second"),            # exact beats both packets
    ("aten::twice.out", "twice_third"),         # among packets the later registration wins
])
def test_the_registration_for_exactly_the_overload(op, function):
    reg = find_registration(ast.parse(FILE), op)
    assert reg is not None and reg.fdef.name == function


@pytest.mark.parametrize("op", ["aten::bar.Scalar", "aten::baz", "prims::foo", "aten::linear", "mylib::decode.out"])
def test_no_registration_for_another_overload_or_namespace(op):
    assert find_registration(ast.parse(FILE), op) is None


def _gate(meta_source: str | None, only: list[Path] | None = None):
    """The gate over the shipped contracts (``only``: these of them) with ``meta_source``'s kernels."""
    from shapecheck.ci.gate import GateOptions, run_gate
    from shapecheck.contract.find import shipped_contracts_dir
    from shapecheck.kernel.sources import from_options

    paths = [str(p) for p in only] if only is not None else [str(shipped_contracts_dir())]
    return run_gate(paths, GateOptions(source=from_options(meta_source=meta_source)), cwd=ROOT)


def _registered(tree) -> tuple[list[Path], list[str]]:
    """The shipped contracts whose op the file registers, and the ops of the others: for those the file's gate
    checks the installed torch's kernel, as the shipped gate does (``test_gate`` tests the note that says so),
    so only the registered ones are gated from the file here (im2col alone took half the family's time)."""
    from shapecheck.contract.find import discover, shipped_contracts_dir
    from shapecheck.contract.load import load_contract

    found, other = [], []
    for path in discover([shipped_contracts_dir()]):
        op = load_contract(path).op
        (found.append(path) if find_registration(tree, op) is not None else other.append(op))
    return found, other


def _summary(result) -> dict:
    """Each op's verdict, findings and stale suppressions. A finding only the other mode's kernel has is left
    out: from a file, a mode whose kernel the file's registration does not reach (constant_pad_nd's C++
    composite kernel under plain FakeTensorMode) is named in words, not run."""
    return {r.contract.op: (r.verdict, sorted((v.code, v.expr, v.suppressed) for v in r.report.violations
                                              if not v.suppressed.startswith("found only in plain FakeTensorMode")),
                            len(r.stale)) for r in result.runs}


def test_gate_on_the_installed_torchs_unmodified_file_agrees_with_the_installed_kernels(shipped_gate):
    """The false FAIL this fixes: flash attention's .quantized kernel was verified for .default, giving
    two stale suppressions."""
    import torch._meta_registrations as mr

    installed = shipped_gate  # the installed kernels, over the shipped contracts
    tree = ast.parse(Path(mr.__file__).read_text(encoding="utf-8"))
    registered, other = _registered(tree)
    assert registered and other == ["aten::im2col"]  # im2col: a decomposition, not in this file
    from_file = _gate(mr.__file__, registered)
    assert len(from_file.runs) == len(registered)
    for run in from_file.runs:  # the file's function for each op is the one the installed torch registered
        assert run.kernel_note == "", run.kernel_note
        if _not_reached(run):  # convolution: torch runs FakeTensor's rule (which calls meta_conv at the Meta key
            # under the Python dispatcher): that rule is checked, with the file's function registered
            theirs = next(r for r in installed.runs if r.contract.op == run.contract.op).report.kernel
            assert run.report.kernel.startswith(theirs) and run.report.kernel.endswith(" registered"), run.report.kernel
            continue
        name = run.report.kernel.rpartition(":")[2]
        assert installed_meta_name(run.contract.op) == name
    assert _summary(from_file) == {op: v for op, v in _summary(installed).items() if op not in other}
    assert from_file.exit_code == installed.exit_code == 0


def _not_reached(run) -> bool:
    """Whether the file's function for the run's op is not the kernel torch resolves in any way of running the op
    (its note says so: torch's kernel is checked with the function registered)."""
    return any("is not torch's kernel for" in n for n in run.report.notes)


def installed_meta_name(op: str) -> str:
    from shapecheck._torch import core as C

    return C.installed_meta(C.resolve_op(op)).__name__


def _torch_2_14_1_meta_file() -> Path:
    """torch 2.14.1's ``_meta_registrations.py``, taken from its wheel (fetched once with pip, cached)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "torch-shapecheck-tests"
    target = cache / "torch-2.14.1-_meta_registrations.py"
    if target.is_file():
        return target
    wheels = cache / "wheels"
    res = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                          "torch==2.14.1", "-d", str(wheels)], capture_output=True, text=True, timeout=900)
    found = sorted(wheels.glob("torch-2.14.1-*.whl"))
    if res.returncode != 0 or not found:
        pytest.skip(f"torch 2.14.1's wheel is not reachable with pip here: {res.stderr.strip()[-300:]}")
    with zipfile.ZipFile(found[0]) as wheel:
        target.write_bytes(wheel.read("torch/_meta_registrations.py"))
    for wheel_file in found:  # the wheel is hundreds of MB; only the one file is kept
        wheel_file.unlink()
    return target


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_gate_on_torch_2_14_1s_file_takes_each_ops_default_overload():
    path = _torch_2_14_1_meta_file()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    registered, _ = _registered(tree)  # the others are the installed torch's kernels, the shipped gate's
    result = _gate(str(path), registered)
    assert result.runs and len(result.runs) == len(registered)
    for run in result.runs:
        # a 2.14.1 kernel may call an API torch 2.13 lacks: that is inconclusive, never a failure
        assert not run.stale and run.verdict.value in ("pass", "inconclusive"), _summary(result)
        reg = find_registration(tree, run.contract.op)
        assert run.report.kernel.endswith(f":{reg.fdef.name}") or (
            _not_reached(run) and run.report.kernel.startswith("installed torch"))
        assert "quantized" not in reg.fdef.name
