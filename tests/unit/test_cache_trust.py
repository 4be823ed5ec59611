"""The result cache under attack and under change (issue 20): a planted entry runs no code, a forged one is a
miss, an entry cannot move to another key, special files and odd settings are refused, and a change anywhere in
the project's loaded code misses, however the kernel reached it."""

import json
import os
import stat
import sys
import textwrap
from pathlib import Path
from typing import TypedDict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapecheck.cache import key as K
from shapecheck.cache import store as R
from tests.conftest import ROOT, SDPA_MPS
from tests.unit.test_cache import CASE, KERNEL, _cli, _hits, _verify


class Rec(TypedDict):
    x: list[int]


def _entry(cache_dir, kind="t"):
    (entry,) = (cache_dir / f"v{R.FORMAT}").glob(f"{kind}-*.entry")
    return entry


def _sign(kind, key_parts, body: bytes) -> bytes:
    """An entry made with this user's own secret: what only shapecheck itself can write."""
    cfg = R.settings()
    digest = R.key_digest(kind, key_parts)
    return b"%s %d %s\n" % (R._MAGIC, R.FORMAT, R._mac(cfg.secret, kind, digest, body).encode()) + body


# ---------------------------------------------------------------------------------------------------------
# Planted and forged entries


def test_a_planted_pickle_runs_no_code(cache_dir, tmp_path):
    assert R.store("t", {"a": 1}, (), {"x": [1]}, Rec)
    entry = _entry(cache_dir)
    marker = tmp_path / "pwned"
    # the 2026 attack: protocol 4 resolves dotted names, so ("shapecheck.cache.key", "os.system") passed the old check
    payload = (b"\x80\x04\x95" + b"\x00" * 8 + b"\x8c\x15shapecheck.cache_key\x94\x8c\tos.system\x94\x93\x94"
               + b"\x8c" + bytes([len(f"touch {marker}")]) + f"touch {marker}".encode() + b"\x94\x85\x94R\x94.")
    entry.write_bytes(payload)
    assert R.lookup("t", {"a": 1}, Rec) is None
    assert not marker.exists()


@pytest.mark.slow
def test_a_forged_verdict_is_a_miss_and_the_run_fails_again(cache_dir, tmp_path):
    kernel = tmp_path / "regs.py"
    kernel.write_text(KERNEL)
    code, text, _ = _verify(tmp_path, kernel)
    assert code == 1
    entry = _entry(cache_dir, "verify")
    head, _, body = entry.read_bytes().partition(b"\n")
    doc = json.loads(body)
    doc["value"]["report"]["verdict"] = "pass"
    doc["value"]["report"]["violations"] = []
    doc["deps"], doc["files"] = [], {}
    entry.write_bytes(head + b"\n" + json.dumps(doc).encode())  # the old MAC no longer matches
    code2, text2, files2 = _verify(tmp_path, kernel)
    assert code2 == 1 and text2.startswith("FAIL:") and not _hits(files2["json"])


def test_an_entry_signed_with_another_secret_is_a_miss(cache_dir, monkeypatch):
    monkeypatch.setenv("SHAPECHECK_CACHE_SECRET", "a" * 32)
    assert R.store("t", {"a": 1}, (), {"x": [1]}, Rec)
    assert R.lookup("t", {"a": 1}, Rec) is not None
    monkeypatch.setenv("SHAPECHECK_CACHE_SECRET", "b" * 32)  # a fork's pull request has no secret of ours
    assert R.lookup("t", {"a": 1}, Rec) is None
    monkeypatch.delenv("SHAPECHECK_CACHE_SECRET")  # nor does the per-user key
    assert R.lookup("t", {"a": 1}, Rec) is None


def test_an_entry_moved_to_another_key_is_a_miss(cache_dir):
    assert R.store("t", {"a": 1}, (), {"x": [1]}, Rec)
    data = _entry(cache_dir).read_bytes()
    other = cache_dir / f"v{R.FORMAT}" / f"t-{R.key_digest('t', {'a': 2})}.entry"
    other.write_bytes(data)
    assert R.lookup("t", {"a": 2}, Rec) is None


@pytest.mark.parametrize("value", [None, {"x": None}, {"x": [True]}, {"x": [1], "y": 2}, {}, [1], "s",
                                   {"x": [1.5]}, {"x": "[1]"}])
def test_a_signed_entry_of_the_wrong_shape_is_a_miss(cache_dir, value):
    """Even an entry made with the right secret is read against its schema: anything else is a miss."""
    assert R.store("t", {"a": 1}, (), {"x": [1]}, Rec)
    entry = _entry(cache_dir)
    doc = json.loads(entry.read_bytes().partition(b"\n")[2])
    doc["value"] = value
    entry.write_bytes(_sign("t", {"a": 1}, json.dumps(doc).encode()))
    assert R.lookup("t", {"a": 1}, Rec) is None


@pytest.mark.slow
def test_a_verify_entry_with_no_violations_list_is_a_miss(cache_dir, tmp_path):
    kernel = tmp_path / "regs.py"
    kernel.write_text(KERNEL)
    assert _verify(tmp_path, kernel)[0] == 1
    entry = _entry(cache_dir, "verify")
    doc = json.loads(entry.read_bytes().partition(b"\n")[2])
    doc["value"]["report"]["violations"] = None
    key = json.loads(doc["key"])
    entry.write_bytes(_sign("verify", key, json.dumps(doc).encode()))
    code, text, files = _verify(tmp_path, kernel)
    assert code == 1 and not _hits(files["json"])


# ---------------------------------------------------------------------------------------------------------
# Files that are not files, sizes, settings


def test_a_fifo_or_device_entry_is_a_miss_without_reading(cache_dir):
    assert R.store("t", {"a": 1}, (), {"x": [1]}, Rec)
    entry = _entry(cache_dir)
    entry.unlink()
    os.mkfifo(entry)  # reading it would block forever
    assert R.lookup("t", {"a": 1}, Rec) is None
    entry.unlink()
    entry.symlink_to("/dev/zero")  # reading it would never end
    assert R.lookup("t", {"a": 1}, Rec) is None


def test_an_oversized_entry_is_a_miss(cache_dir, monkeypatch):
    assert R.store("t", {"a": 1}, (), {"x": [1] * 1000}, Rec)
    monkeypatch.setattr(R, "ENTRY_BYTES", 100)
    assert R.lookup("t", {"a": 1}, Rec) is None


@pytest.mark.parametrize("special", ["fifo", "zero"])
@pytest.mark.parametrize("option", ["--contract", "--meta-source"])
def test_the_key_never_reads_a_special_file(cache_dir, tmp_path, special, option):
    path = tmp_path / "special"
    if special == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    code, _ = _cli("verify", "op", SDPA_MPS, option, path, "--case", CASE, "-j", "1")
    assert code == 2


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "lots", "1e400"])
def test_a_malformed_size_limit_is_bad_input(cache_dir, monkeypatch, value):
    monkeypatch.setenv("SHAPECHECK_CACHE_MAX_MB", value)
    code, _ = _cli("verify", "op", SDPA_MPS, "--case", CASE, "-j", "1")
    assert code == 2


def test_a_cache_folder_others_can_write_is_refused(cache_dir, capsys):
    cache_dir.mkdir(parents=True)
    cache_dir.chmod(0o777)
    R._warned.clear()
    assert not R.enabled()
    assert "writable by other users" in capsys.readouterr().err
    assert not R.store("t", {"a": 1}, (), {"x": [1]}, Rec)
    cache_dir.chmod(0o700)
    assert R.enabled()


def test_the_key_file_is_private_and_refused_when_others_can_read_it(cache_dir, capsys):
    assert R.enabled()
    key = R.key_file()
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    key.chmod(0o644)
    R._warned.clear()
    assert not R.enabled()
    assert "readable by other users" in capsys.readouterr().err
    key.chmod(0o600)
    assert R.enabled()


def test_a_key_file_inside_the_cache_folder_is_refused(cache_dir, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cache_dir))
    R._warned.clear()
    assert not R.enabled()


def test_a_short_secret_is_refused(cache_dir, monkeypatch):
    monkeypatch.setenv("SHAPECHECK_CACHE_SECRET", "short")
    R._warned.clear()
    assert not R.enabled()


# ---------------------------------------------------------------------------------------------------------
# Stale results with no attacker: the project's code, however the kernel reaches it


HELPER = "def size(x):\n    return x.shape[0]\n"
REACH = {
    "module-level dict": ("import helpers\nTABLE = {'size': helpers.size}\n", "TABLE['size'](x)"),
    "getattr on a module": ("import helpers\n", "getattr(helpers, 'size')(x)"),
    "importlib": ("import importlib\n", "importlib.import_module('helpers').size(x)"),
    "import in the body": ("", "__import__('helpers').size(x)"),
    "lru_cache": ("import functools\nimport helpers\nsize = functools.lru_cache(helpers.size)\n", "size(x)"),
    "callable object": ("import helpers\nclass S:\n    def __call__(self, x):\n        return helpers.size(x)\n"
                        "size = S()\n", "size(x)"),
}


@pytest.mark.parametrize("how", sorted(REACH))
def test_a_helper_reached_any_way_is_a_dependency(tmp_path, monkeypatch, how):
    prelude, call = REACH[how]
    (tmp_path / "helpers.py").write_text(HELPER)
    (tmp_path / f"kmod_{abs(hash(how))}.py").write_text(prelude + f"\ndef kernel(x):\n    return {call}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "helpers", raising=False)
    import importlib

    module = importlib.import_module(f"kmod_{abs(hash(how))}")

    class X:
        shape = (3,)

    assert module.kernel(X()) == 3  # the kernel ran: whatever it imported is loaded now
    deps = K.kernel_dependencies(module.kernel)[0] + K.loaded_files()
    files = {d.file: K.file_digest(d.file) for d in deps}
    assert K.deps_hold(deps, files)
    (tmp_path / "helpers.py").write_text(HELPER.replace("shape[0]", "shape[0] + 1"))
    assert not K.deps_hold(deps, files)


GUARDED = textwrap.dedent("""\
    import torch
    import kernel_helpers

    def meta_pixel_shuffle(self, upscale_factor):
        return getattr(kernel_helpers, "out")(self, upscale_factor)
    """)
HELPERS_OK = textwrap.dedent("""\
    def out(x, r):
        n, c, h, w = x.shape
        return x.new_empty((n, c // (r * r), h * r, w * r))
    """)


@pytest.mark.slow
def test_verify_misses_after_a_helper_reached_through_getattr_changes(cache_dir, tmp_path):
    (tmp_path / "kernel_helpers.py").write_text(HELPERS_OK)
    (tmp_path / "k.py").write_text(GUARDED)
    contract = ROOT / "contracts" / "aten" / "pixel_shuffle.toml"
    args = ("verify", "op", "aten::pixel_shuffle", "--contract", contract, "--meta", f"{tmp_path / 'k.py'}:meta_pixel_shuffle",
            "-j", "1", "--format", "json")
    sys.modules.pop("kernel_helpers", None)
    code, out = _cli(*args, cwd=tmp_path)
    assert code == 0, out
    assert _cli(*args, cwd=tmp_path)[0] == 0 and _hits(_cli(*args, cwd=tmp_path)[1])
    (tmp_path / "kernel_helpers.py").write_text(HELPERS_OK.replace("h * r,", "h * r + (1 if h > 4 else 0),"))
    for name, module in list(sys.modules.items()):  # as a new process would: the edited files imported again
        if str(getattr(module, "__file__", "")).startswith(str(tmp_path)):
            del sys.modules[name]
    code, out = _cli(*args, cwd=tmp_path)
    assert not _hits(out) and code == 1, out


@pytest.mark.slow
def test_a_projects_own_contract_is_not_answered_by_the_shipped_one(cache_dir, tmp_path):
    shipped = ROOT / "contracts" / "aten" / "pixel_shuffle.toml"
    args = ("verify", "op", "aten::pixel_shuffle", "-j", "1", "--format", "json")
    code, _ = _cli(*args, cwd=tmp_path)  # no project: the shipped contract, stored
    assert code == 0 and _hits(_cli(*args, cwd=tmp_path)[1])
    project = tmp_path / "proj"
    (project / "contracts" / "aten").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.shapecheck]\ncontracts = ["contracts"]\n')
    mine = shipped.read_text().replace('outputs = ["(B, C, H * r,', 'outputs = ["(B, C, H * r + 1,')
    assert mine != shipped.read_text()
    (project / "contracts" / "aten" / "pixel_shuffle.toml").write_text(mine)
    code, out = _cli(*args, cwd=project)
    doc = json.loads(out)
    # the report names the contract relative to the root of where the run is (the project), or absolute
    assert not doc.get("cache") and Path(project, doc["contract"]).resolve() == \
        (project / "contracts/aten/pixel_shuffle.toml").resolve()
    assert code != 0 and doc["verdict"] != "pass"  # the project's contract states a wrong output


def test_the_meta_source_body_is_in_the_key(tmp_path):
    kernel = tmp_path / "regs.py"
    kernel.write_text(KERNEL)
    before = R._meta_source_parts(str(kernel), "aten::_scaled_dot_product_attention_math_for_mps")
    kernel.write_text(KERNEL.replace("<= 8", "<= 9"))  # same name, same line, another body
    R._parsed.cache_clear()
    after = R._meta_source_parts(str(kernel), "aten::_scaled_dot_product_attention_math_for_mps")
    assert before["registered"] == after["registered"] and before["body"] != after["body"]


# ---------------------------------------------------------------------------------------------------------
# A fuzzer: random and mutated entries are misses or well-typed values, never an error


def _mutations():
    return st.one_of(
        st.binary(max_size=400).map(lambda b: ("replace", b)),
        st.tuples(st.integers(0, 10_000), st.integers(0, 255)).map(lambda t: ("flip", t)),
        st.integers(0, 10_000).map(lambda n: ("truncate", n)),
        st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                     lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=4), c, max_size=4),
                     max_leaves=20).map(lambda v: ("signed", v)),
    )


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("SHAPECHECK_FUZZ_EXAMPLES", "60")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_mutations())
def test_fuzzed_entries_are_misses_or_typed_values(cache_dir, mutation):
    assert R.store("t", {"a": 1}, (), {"x": [1, 2, 3]}, Rec)
    entry = _entry(cache_dir)
    data = entry.read_bytes()
    how, arg = mutation
    if how == "replace":
        data = arg
    elif how == "flip":
        i, b = arg
        data = data[: i % len(data)] + bytes([b]) + data[i % len(data) + 1:]
    elif how == "truncate":
        data = data[: arg % len(data)]
    else:
        doc = json.loads(data.partition(b"\n")[2])
        doc["value"] = arg
        data = _sign("t", {"a": 1}, json.dumps(doc).encode())
    entry.write_bytes(data)
    hit = R.lookup("t", {"a": 1}, Rec)
    if hit is not None:
        assert set(hit.value) == {"x"} and all(type(i) is int for i in hit.value["x"])


def test_a_kind_of_kernel_source_the_cache_does_not_know_is_never_cached(monkeypatch):
    """A new kind of source (a class next to ``Installed``) gets no key until the cache learns what its result
    depends on: it is never keyed as the installed torch, whose cached PASS it would get back."""
    from dataclasses import dataclass

    from shapecheck.kernel.sources import Installed

    monkeypatch.setenv("SHAPECHECK_CACHE", "1")

    @dataclass(frozen=True)
    class FromSomewhereNew(Installed):
        where: str = "pkg.mod:fn"

    op = "aten::_scaled_dot_product_attention_math_for_mps"
    installed = R.verify_key(op, None, Installed(), (), {}, cwd=ROOT)
    assert installed is not None and installed["source"] == {"kind": "installed"}
    assert R.verify_key(op, None, FromSomewhereNew(), (), {}, cwd=ROOT) is None
