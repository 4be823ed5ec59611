"""Acceptance for custom ops, end to end as their author works: a temporary package `mylib` registers a
custom op whose fake branches on the sequence length; `verify op mylib::decode --import mylib` reports SC001 at
the fake's own file:line with a counterexample and the fixed fake passes; `contract draft` -> `contract check`
-> `verify` works on a fresh op; and all of it from `[tool.shapecheck]` with no flags."""

import json
import textwrap

import pytest

from tests.conftest import run_cli

LIB = textwrap.dedent('''
    import torch


    @torch.library.custom_op("mylib::decode", mutates_args=())
    def decode(q: torch.Tensor, kv: torch.Tensor) -> torch.Tensor:
        return q.clone()


    @decode.register_fake
    def decode_fake(q, kv):
        {decode_body}


    @torch.library.custom_op("mylib::pad_heads", mutates_args=())
    def pad_heads(x: torch.Tensor, w: torch.Tensor, multiple: int) -> torch.Tensor:
        return torch.nn.functional.pad(x @ w, (0, -(x.size(-1)) % multiple))


    @pad_heads.register_fake
    def pad_heads_fake(x, w, multiple):
        torch._check(x.size(1) == w.size(0))
        return x.new_empty((x.size(0), (w.size(1) + multiple - 1) // multiple * multiple))
''')
BRANCHES = ("if q.size(1) <= 16:  # the runtime picks its short-sequence kernel\n"
            "        return q.new_empty(q.shape)\n    return q.new_empty(q.shape)")
FIXED = "return q.new_empty(q.shape)"

DECODE = '''schema = 1
op = "mylib::decode"
[dims]
B = { min = 1 }
L = { min = 1 }
D = { min = 1, max = 1024 }
[[args]]
name = "q"
kind = "tensor"
dtype = "float32"
shape = "(B, L, D)"
[[args]]
name = "kv"
kind = "tensor"
dtype = "float32"
shape = "(B, L, D)"
[[paths]]
id = "any"
when = "True"
outputs = ["(B, L, D)"]
'''


def package(tmp_path, body: str, pyproject: bool = False):
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("from .ops import decode, pad_heads  # noqa: F401\n")
    (tmp_path / "mylib" / "ops.py").write_text(LIB.replace("{decode_body}", body))
    (tmp_path / "contracts" / "mylib").mkdir(parents=True)
    (tmp_path / "contracts" / "mylib" / "decode.toml").write_text(DECODE)
    if pyproject:
        (tmp_path / "pyproject.toml").write_text('[tool.shapecheck]\nimports = ["mylib"]\ncontracts = ["contracts/"]\n')
    return tmp_path


def _sc001_at_the_fakes_line(res, root):
    assert res.returncode == 1, res.stdout + res.stderr
    doc = json.loads(res.stdout)
    (v,) = [v for v in doc["violations"] if v["code"] == "SC001"]
    line = next(i for i, t in enumerate((root / "mylib" / "ops.py").read_text().splitlines(), 1)
                if "q.size(1) <= 16" in t)
    # relative to the project's root (the current directory: no .git above it), as docs/cli.md names report files
    assert (v["location"]["file"], v["location"]["base"], v["location"]["line"]) == ("mylib/ops.py", "SRCROOT", line)
    assert v["expr"] == "L <= 16" and v["counterexample"] == {"B": 1, "L": 17, "D": 1}
    assert doc["kernel"].startswith("mylib::decode fake kernel, ops.py:")


@pytest.mark.parametrize("body, verdict", [(BRANCHES, "fail"), (FIXED, "pass")])
def test_verify_with_import_reports_the_fakes_branch_and_passes_the_fixed_fake(tmp_path, body, verdict):
    root = package(tmp_path, body)
    res = run_cli("verify", "op", "mylib::decode", "--import", "mylib", "--contract", "contracts/mylib/decode.toml",
                  "--format", "json", "-j", "1", cwd=root)
    if verdict == "fail":
        _sc001_at_the_fakes_line(res, root)
    else:
        assert res.returncode == 0 and json.loads(res.stdout)["verdict"] == "pass", res.stdout + res.stderr


def test_draft_check_verify_on_a_fresh_op(tmp_path):
    root = package(tmp_path, FIXED)
    res = run_cli("contract", "draft", "mylib::pad_heads", "--import", "mylib", "--out", "pad_heads.toml", cwd=root)
    assert res.returncode == 0 and res.stdout.startswith("wrote pad_heads.toml"), res.stderr
    text = (root / "pad_heads.toml").read_text()
    assert '"A1 == B0",  # the kernel needs these equal at ops.py:' in text
    # an output table: the shape traced symbolically, and the dtype and layout of the sample call
    assert 'outputs = [{ shape = "(A0, multiple * ((B1 + multiple - 1) // multiple))", dtype = "dtype", ' \
           'layout = "contiguous" }]' in text
    res = run_cli("contract", "check", "pad_heads.toml", "--import", "mylib", cwd=root)
    assert res.returncode == 0 and res.stdout.startswith("ok: pad_heads.toml: mylib::pad_heads") \
        and "note:" not in res.stdout, res.stdout + res.stderr
    res = run_cli("verify", "op", "mylib::pad_heads", "--import", "mylib", "--contract", "pad_heads.toml", "-j", "1",
                  cwd=root)
    assert res.returncode == 0 and res.stdout.startswith("PASS: mylib::pad_heads"), res.stdout + res.stderr


def test_the_same_from_pyproject_with_no_flags(tmp_path):
    root = package(tmp_path, BRANCHES, pyproject=True)
    _sc001_at_the_fakes_line(run_cli("verify", "op", "mylib::decode", "--format", "json", "-j", "1", cwd=root), root)
    res = run_cli("contract", "draft", "mylib::pad_heads", "--out", "contracts/mylib/pad_heads.toml", cwd=root)
    assert res.returncode == 0, res.stderr
    res = run_cli("contract", "check", "contracts", cwd=root)
    assert res.returncode == 0 and "note:" not in res.stdout and res.stdout.count("ok: ") == 2, res.stdout + res.stderr
    res = run_cli("verify", "op", "mylib::pad_heads", "-j", "1", cwd=root)
    assert res.returncode == 0 and res.stdout.startswith(
        "PASS: mylib::pad_heads against contracts/mylib/pad_heads.toml"), res.stdout + res.stderr
