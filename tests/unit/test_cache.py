"""The result cache: what its key holds (each change misses), what a hit answers (the same reports, one line
and one JSON field apart), and that a hit loads neither torch nor z3."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import TypedDict

import pytest

from shapecheck.cache import key as K
from shapecheck.cache import store as R
from tests.conftest import ROOT, SDPA_CONTRACT, SDPA_MPS

CASE = "rank=4,mask=none,is_causal=false,dtype=float32,enable_gqa=false"


# ---------------------------------------------------------------------------------------------------------
# Dependencies: a kernel, the helpers it reaches, fingerprinted by their source segments


def _load(path: Path, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


@pytest.fixture
def toy(tmp_path):
    """A kernel file whose kernel calls a helper of its own file (which calls one of a sibling module) and
    reads a module constant; plus a function it never reaches."""
    tag = abs(hash(str(tmp_path)))
    (tmp_path / "toy_helpers.py").write_text("def scale(n):\n    return n * 2\n")
    (tmp_path / "toy_kernel.py").write_text(textwrap.dedent("""\
        import toy_helpers

        LIMIT = 8


        def unrelated():
            return 0


        def helper(n):
            return toy_helpers.scale(n) + LIMIT


        def kernel(x):
            return helper(x)
        """))
    sys.modules.pop("toy_helpers", None)  # each test's own sibling module
    return tmp_path, _load(tmp_path / "toy_kernel.py", f"toy_kernel_{tag}")


def _holds(deps):
    return K.deps_hold(deps, {d.file: "stored-before-the-edit" for d in deps})  # force a re-parse of every file


def test_walk_reaches_helpers_across_files_and_module_values(toy):
    folder, module = toy
    deps, complete = K.kernel_dependencies(module.kernel)
    assert complete
    names = {(Path(d.file).name, d.qualname) for d in deps}
    assert {("toy_kernel.py", "kernel"), ("toy_kernel.py", "helper"), ("toy_kernel.py", "=LIMIT"),
            ("toy_helpers.py", "scale")} <= names
    assert ("toy_kernel.py", "unrelated") not in names
    assert _holds(deps)


@pytest.mark.parametrize("edit, holds", [
    (("toy_helpers.py", "n * 2", "n * 3"), False),  # a helper in another file
    (("toy_kernel.py", "toy_helpers.scale(n) + LIMIT", "toy_helpers.scale(n) + LIMIT + 1"), False),  # a helper
    (("toy_kernel.py", "return helper(x)", "return helper(x + 1)"), False),  # the kernel itself
    (("toy_kernel.py", "LIMIT = 8", "LIMIT = 9"), False),  # a module value it reads
    (("toy_kernel.py", "return 0", "return 1"), True),  # a function it never reaches
])
def test_each_reached_definition_is_fingerprinted(toy, edit, holds):
    folder, module = toy
    deps, _ = K.kernel_dependencies(module.kernel)
    file, old, new = edit
    path = folder / file
    path.write_text(path.read_text().replace(old, new))
    assert _holds(deps) is holds


def test_moving_the_kernel_misses_only_where_reports_show_its_lines(toy):
    folder, module = toy
    deps, _ = K.kernel_dependencies(module.kernel)
    path = folder / "toy_kernel.py"
    path.write_text("# a line above everything\n" + path.read_text())
    assert not _holds(deps)
    assert _holds(K.unlocated(deps, shown_files=set()))


@pytest.mark.slow
def test_the_installed_kernel_is_fingerprinted_in_torchs_file():
    from shapecheck.cache.store import kernel_function
    from shapecheck.kernel.load import installed_kernel

    fn = kernel_function(installed_kernel(SDPA_MPS))
    deps, complete = K.kernel_dependencies(fn)
    assert complete
    mine = [d for d in deps if d.qualname == fn.__qualname__]
    assert mine and mine[0].file.endswith(os.path.join("torch", "_meta_registrations.py"))
    assert mine[0].line == fn.__code__.co_firstlineno
    assert K.deps_hold(deps, {d.file: K.file_digest(d.file) for d in deps})


def test_the_fingerprinted_function_is_the_one_torch_runs_for_the_op():
    """A FakeTensor rule (masked_select) or a decomposition torch runs above FakeTensorMode (upsample_nearest2d
    under export) is what the cache fingerprints, not a meta function torch never reaches."""
    from shapecheck.cache.store import kernel_function
    from shapecheck.kernel.load import installed_kernel

    assert kernel_function(installed_kernel("aten::masked_select")).__name__ == "masked_select"
    assert "fake_impls" in kernel_function(installed_kernel("aten::masked_select")).__module__
    up = kernel_function(installed_kernel("aten::upsample_nearest2d"))
    assert up.__module__ == "torch._decomp.decompositions"


# ---------------------------------------------------------------------------------------------------------
# The store itself


class Rec(TypedDict):
    x: list[int]


def _store(value=None, **parts):
    return R.store("t", {"a": 1, **parts}, (), {"x": [1, 2]} if value is None else value, Rec)


def _lookup(**parts):
    return R.lookup("t", {"a": 1, **parts}, Rec)


def test_round_trip_and_every_key_part_misses(cache_dir):
    assert _store()
    assert _lookup().value == {"x": [1, 2]}
    assert _lookup(a=2) is None
    assert R.lookup("other", {"a": 1}, Rec) is None


def test_torch_version_from_the_metadata_is_in_the_key(cache_dir, monkeypatch):
    assert _store()
    real = K.distribution_version
    monkeypatch.setattr(K, "distribution_version", lambda n: "2.14.0" if n == "torch" else real(n))
    assert _lookup() is None
    monkeypatch.setattr(K, "distribution_version", real)
    assert _lookup() is not None


def test_installing_any_package_is_in_the_key(cache_dir, monkeypatch):
    assert _store()
    monkeypatch.setattr(K, "installed_distributions", lambda: "another set")
    assert _lookup() is None


def test_shapecheck_source_is_in_the_key(cache_dir, monkeypatch, tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text("X = 1\n")
    monkeypatch.setattr(K, "PACKAGE_DIR", pkg)
    assert _store()
    assert _lookup() is not None
    (pkg / "m.py").write_text("X = 2\n")
    assert _lookup() is None


def test_given_deps_must_equal_the_stored_ones(cache_dir, toy):
    _, module = toy
    deps, _ = K.kernel_dependencies(module.kernel)
    assert R.store("audit", {"op": "x"}, deps, {"x": [3]}, Rec)
    assert R.lookup("audit", {"op": "x"}, Rec, deps).value == {"x": [3]}
    assert R.lookup("audit", {"op": "x"}, Rec, deps[1:]) is None


def test_values_the_codec_does_not_write_are_not_stored(cache_dir):
    assert not _store(value=Path.cwd().stat())  # os.stat_result: not data
    assert not _store(value={"x": [float("nan")]})
    assert not _store(value={"x": ["1"]})  # not what the schema says
    assert _lookup() is None


def test_valid_until_ends_an_entry(cache_dir):
    assert R.store("t", {"a": 1}, (), {"x": []}, Rec, valid_until="2026-12-05")
    assert R.lookup("t", {"a": 1}, Rec, today="2026-12-05") is not None
    assert R.lookup("t", {"a": 1}, Rec, today="2026-12-06") is None


def test_size_is_bounded_least_recently_used_first(cache_dir, monkeypatch):
    monkeypatch.setenv("SHAPECHECK_CACHE_MAX_MB", str(250_000 / 2**20))
    for i in range(4):
        assert R.store("t", {"i": i}, (), {"x": [7] * 50_000}, Rec)
    assert [R.lookup("t", {"i": i}, Rec) is not None for i in range(4)] == [False, False, True, True]


def test_cache_off_by_environment(monkeypatch):
    monkeypatch.setenv("SHAPECHECK_CACHE", "0")
    assert not R.enabled()
    monkeypatch.setenv("SHAPECHECK_CACHE", "1")
    assert R.enabled()


def test_cache_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("SHAPECHECK_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert R.directory() == tmp_path / "shapecheck"
    monkeypatch.setenv("SHAPECHECK_CACHE_DIR", str(tmp_path / "x"))
    assert R.directory() == tmp_path / "x"


# ---------------------------------------------------------------------------------------------------------
# verify op and gate through the command line


KERNEL = '''\
import torch
from torch._meta_registrations import register_meta

aten = torch.ops.aten


def _out_shape(query, value):
    return (*query.shape[:-1], value.shape[-1])


@register_meta(aten._scaled_dot_product_attention_math_for_mps)
def meta_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, scale=None,
              enable_gqa=False):
    if query.shape[-2] <= 8:
        pass
    out = query.new_empty(_out_shape(query, value))
    return out, query.new_empty((*query.shape[:-1], key.shape[-2]))


def unrelated():
    return 0
'''


def _cli(*args, cwd=ROOT):
    """One in-process run of the command line: (exit code, stdout)."""
    import contextlib
    import io

    from shapecheck.cli.main import main

    out = io.StringIO()
    old = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as e:
            main([str(a) for a in args])
    finally:
        os.chdir(old)
    return e.value.code, out.getvalue()


def _verify(tmp_path, kernel, *extra):
    reports = {f: tmp_path / f"r.{f}" for f in ("sarif", "junit", "json", "github")}
    code, text = _cli("verify", "op", SDPA_MPS, "--meta-source", kernel, "--case", CASE, "-j", "1",
                      *(a for f, p in reports.items() for a in ("--output", f"{f}={p}")), *extra)
    return code, text, {f: p.read_text() for f, p in reports.items()}


def _hits(json_text):
    doc = json.loads(json_text)
    return [r for r in doc.get("reports", [doc]) if r.get("cache")]


@pytest.mark.slow
def test_verify_hit_changes_only_one_text_line_and_one_json_field(cache_dir, tmp_path):
    kernel = tmp_path / "regs.py"
    kernel.write_text(KERNEL)
    code, text, files = _verify(tmp_path, kernel)
    assert code == 1 and text.startswith("FAIL:") and "L <= 8" in text and not _hits(files["json"])
    code2, text2, files2 = _verify(tmp_path, kernel)
    assert code2 == code
    lines = text2.splitlines()
    assert lines[-1].startswith("cache: ") and lines[:-1] == text.splitlines()
    for fmt in ("sarif", "junit", "github"):
        assert files2[fmt] == files[fmt], fmt
    (hit,) = _hits(files2["json"])
    assert hit["cache"]["hit"] is True
    doc, doc2 = json.loads(files["json"]), json.loads(files2["json"])
    del doc2["cache"]
    assert doc2 == doc


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_verify_misses_on_each_change(cache_dir, tmp_path):
    kernel = tmp_path / "regs.py"
    kernel.write_text(KERNEL)
    contract = tmp_path / "c.toml"
    contract.write_text(SDPA_CONTRACT.read_text())

    def hit(*extra):
        return bool(_hits(_verify(tmp_path, kernel, "--contract", contract, *extra)[2]["json"]))

    assert not hit()
    assert hit()
    kernel.write_text(KERNEL.replace("return 0", "return 1"))  # a function the kernel does not reach
    assert hit()
    kernel.write_text(KERNEL.replace("value.shape[-1])", "value.shape[-1]) ").replace("return 0", "return 1"))
    assert not hit()  # the helper it calls
    assert hit()
    kernel.write_text(kernel.read_text().replace("<= 8", "<= 16"))  # the kernel itself
    assert not hit()
    contract.write_text(contract.read_text() + "\n# a comment\n")  # the contract file
    assert not hit()
    assert not hit("--timeout-ms", "9000")  # an option
    assert not hit("--no-cache")  # off: neither read nor written
    assert hit("--timeout-ms", "9000")
    real = K.distribution_version
    K.distribution_version = lambda n: "2.14.0" if n == "torch" else real(n)  # another torch, by its metadata
    try:
        assert not hit("--timeout-ms", "9000")
    finally:
        K.distribution_version = real


@pytest.mark.slow  # over 0.5 s on an idle core
def test_config_key_turns_the_cache_off(cache_dir, tmp_path):
    kernel = tmp_path / "regs.py"
    kernel.write_text(KERNEL)
    (tmp_path / "pyproject.toml").write_text("[tool.shapecheck.verify]\ncache = false\n")
    code, _ = _cli("verify", "op", SDPA_MPS, "--meta-source", kernel, "--contract", SDPA_CONTRACT, "--case", CASE,
                   "-j", "1", cwd=tmp_path)
    assert code == 1 and not list(cache_dir.rglob("*.entry"))


def _report(verdict):
    from shapecheck.findings import Verdict
    from shapecheck.result.report import Report

    return Report(SDPA_MPS, str(SDPA_CONTRACT), "k", Verdict(verdict), [], [], 1.0, "2.13.0")


class _Kernel:
    op = None
    caveats = ()
    definition = None
    function = None

    @staticmethod
    def fn(x):
        return x


def test_inconclusive_results_are_not_stored(cache_dir, sdpa_contract):
    assert not R.verify_store({"k": 1}, sdpa_contract, _Kernel(), _report("inconclusive"))
    assert R.verify_store({"k": 1}, sdpa_contract, _Kernel(), _report("pass"))
    assert R.verify_lookup({"k": 1}).value[1].verdict.value == "pass"


def test_an_entry_ends_after_the_earliest_suppression_expiry_still_ahead(cache_dir, sdpa_contract, monkeypatch):
    from dataclasses import replace

    from shapecheck.contract.spec import Suppression

    sups = [Suppression("SC001", "r", expires="2026-01-01"), Suppression("SC001", "r", expires="2031-06-01"),
            Suppression("SC002", "r", expires="2030-03-01"), Suppression("SC002", "r")]
    monkeypatch.setattr("shapecheck.contract.suppressions.today", lambda: "2028-01-01")
    assert R.verify_store({"k": 2}, replace(sdpa_contract, suppressions=sups), _Kernel(), _report("pass"))
    assert R.lookup("verify", {"k": 2}, R.VerifyEntry, today="2030-03-01") is not None
    assert R.lookup("verify", {"k": 2}, R.VerifyEntry, today="2030-03-02") is None


def _probe(*args, cwd=ROOT, isolate=True):
    """A fresh process running the command line: (stdout, [torch, z3, sympy: those it imported], exit code).
    ``isolate=False``: the checks in that process, not in a supervised child (whose imports it never sees)."""
    probe = ("import sys\nfrom shapecheck.cli.main import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
             "    print(sorted(m for m in ('torch', 'z3', 'sympy') if m in sys.modules), e.code, file=sys.stderr)\n")
    res = subprocess.run([sys.executable, "-c", probe, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                         env=dict(os.environ, PYTHONPATH=str(ROOT), SHAPECHECK_ISOLATE="1" if isolate else "0"),
                         timeout=120)
    loaded, _, code = res.stderr.strip().splitlines()[-1].rpartition(" ")
    return res.stdout, loaded, int(code)


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_a_hit_imports_neither_torch_nor_z3(cache_dir, tmp_path):
    args = ["verify", "op", SDPA_MPS, "--case", CASE, "-j", "1"]
    code, _ = _cli(*args)
    out, loaded, code2 = _probe(*args)
    assert out.splitlines()[-1].startswith("cache: ")
    assert (loaded, code2) == ("[]", code)
    assert _probe(*args, "--no-cache", isolate=False)[1] != "[]"  # the probe sees an import when there is one


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_gate_rechecks_only_the_contract_whose_kernel_changed(cache_dir, tmp_path):
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    for name in ("_scaled_dot_product_attention_math_for_mps", "_scaled_dot_product_flash_attention_for_cpu"):
        (contracts / f"{name}.toml").write_text((SDPA_CONTRACT.parent / f"{name}.toml").read_text())
    kernel = tmp_path / "regs.py"
    kernel.write_text(KERNEL)

    def gate():
        code, out = _cli("gate", contracts, "--meta-source", kernel, "--format", "json", "-j", "1", cwd=tmp_path)
        doc = json.loads(out)
        return code, {Path(r["contract"]).stem.split("_scaled_dot_product_")[1]: bool(r.get("cache"))
                      for r in doc["reports"]}, doc

    code, hits, doc = gate()
    assert hits == {"attention_math_for_mps": False, "flash_attention_for_cpu": False}
    code2, hits2, doc2 = gate()
    assert code2 == code and hits2 == {"attention_math_for_mps": True, "flash_attention_for_cpu": True}
    assert [r["verdict"] for r in doc2["reports"]] == [r["verdict"] for r in doc["reports"]]
    code3, text = _cli("gate", contracts, "--meta-source", kernel, "-j", "1", cwd=tmp_path)
    lines = text.splitlines()
    assert code3 == code and lines[-2].startswith("cache: 2 of 2 contracts") and lines[-1].startswith("gate: ")
    assert _probe("gate", contracts, "--meta-source", kernel, cwd=tmp_path)[1:] == ("[]", code)
    kernel.write_text(KERNEL.replace("<= 8", "<= 16"))
    assert gate()[1] == {"attention_math_for_mps": False, "flash_attention_for_cpu": True}


@pytest.mark.slow
def test_a_meta_source_that_leaves_an_op_alone_shares_the_installed_kernels_entry(cache_dir, tmp_path):
    """The gate checks the installed torch's kernel for an op a --meta-source file does not register: that result
    is the installed kernel's, whatever the file and wherever it lies, so a plain gate's entry answers it (with the
    gate's note); ``verify op`` refuses such a file, warm cache or not. (The contract is named alike in each run:
    its name as shown is part of the key.)"""
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    (contracts / "pixel_shuffle.toml").write_text((ROOT / "contracts" / "aten" / "pixel_shuffle.toml").read_text())
    plain = json.loads(_cli("gate", contracts, "--format", "json", "-j", "1", cwd=tmp_path)[1])
    assert [bool(r.get("cache")) for r in plain["reports"]] == [False]
    for where in ("one", "two"):  # two files of different content in two folders
        (tmp_path / where).mkdir()
        (tmp_path / where / "regs.py").write_text(KERNEL + f"\n# {where}\n")
        code, out = _cli("gate", contracts, "--meta-source", tmp_path / where / "regs.py", "--format", "json",
                         "-j", "1", cwd=tmp_path)
        (report,) = json.loads(out)["reports"]
        assert code == 0 and report["cache"] and report["verdict"] == plain["reports"][0]["verdict"]
        assert "registers no meta kernel for aten::pixel_shuffle" in report["kernel_note"]
    code, _ = _cli("verify", "op", "aten::pixel_shuffle", "--contract", contracts / "pixel_shuffle.toml",
                   "--meta-source", tmp_path / "one" / "regs.py", cwd=tmp_path)
    assert code == 2


IMPORTED = '''import torch
from torch._meta_registrations import register_meta
from operator import OPERATOR as scale
aten = torch.ops.aten


@register_meta(aten.pixel_shuffle.default)
def meta_ps(self, upscale_factor):
    r = upscale_factor
    b, c, h, w = self.shape
    return self.new_empty((b, c // (r * r), scale(h, r), scale(w, r)))
'''


@pytest.mark.slow
def test_a_changed_import_the_kernel_reads_misses(cache_dir, tmp_path):
    """The kernel reads ``scale``, bound by an import of its --meta-source file: another function imported there
    is other code, though the kernel's own lines are the same."""
    kernel = tmp_path / "kern.py"
    contract = ROOT / "contracts" / "aten" / "pixel_shuffle.toml"

    def run() -> tuple[int, list]:
        code, _ = _cli("verify", "op", "aten::pixel_shuffle", "--contract", contract, "--meta-source", kernel, "-j",
                       "1", "--output", f"json={tmp_path / 'r.json'}")
        return code, _hits((tmp_path / "r.json").read_text())

    kernel.write_text(IMPORTED.replace("OPERATOR", "mul"))
    assert run() == (0, [])
    assert run()[1]  # the same file: a hit
    kernel.write_text(IMPORTED.replace("OPERATOR", "add"))
    assert run() == (1, [])  # checked again, and the kernel is wrong now
