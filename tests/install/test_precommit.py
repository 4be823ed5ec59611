"""The pre-commit hook as a user runs it: the real pre-commit, in a scratch git repository, with the
.pre-commit-config.yaml examples of docs/ci.md and `shapecheck` from a fresh, non-editable install of this
checkout on PATH (`language: system`). A clean change commits; a guard on a dynamic dim added to the meta
file and a malformed contract are blocked."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.acceptance.test_docs import fenced_blocks
from tests.conftest import ROOT
from tests.install.conftest import git, passing_meta_source, regressed_meta_source, user_env
from tests.unit.test_gate import small_contract

MANIFEST = ROOT / ".pre-commit-hooks.yaml"
CI_DOC = ROOT / "docs" / "ci.md"
HOOK_KEYS = ("id", "entry", "language", "pass_filenames", "require_serial", "files")


def pre_commit(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def manifest_hook() -> dict:
    (hook,) = yaml.safe_load(MANIFEST.read_text())
    return hook


def documented_configs() -> dict[str, dict]:
    """docs/ci.md's .pre-commit-config.yaml examples, by kind: "remote" (repo: URL) and "local"."""
    found = {}
    for block in fenced_blocks(CI_DOC):
        if block.lang == "yaml" and "shapecheck-gate" in "\n".join(block.body):
            config = yaml.safe_load("\n".join(block.body))
            found["local" if config["repos"][0]["repo"] == "local" else "remote"] = config
    assert set(found) == {"remote", "local"}, found
    return found


def commit(repo: Path, env: dict, message: str) -> subprocess.CompletedProcess:
    """`git add -A` and `git commit`, which runs the pre-commit hook; stdout and stderr together."""
    assert git(repo, env, "add", "-A").returncode == 0
    return subprocess.run(["git", "commit", "-m", message], cwd=repo, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)


def scratch_repo(tmp_path: Path, env: dict, config: dict) -> Path:
    """The repository of docs/ci.md's example: contracts under shape_contracts/ (listed in pyproject.toml),
    a passing _meta_registrations.py (the documented config gates it with --meta-source), the hook
    installed with ``config``."""
    assert config["repos"][0]["hooks"][0]["args"] == ["--meta-source", "_meta_registrations.py"]
    repo = tmp_path / "lib"
    repo.mkdir()
    assert git(repo, env, "init", "-q").returncode == 0
    (repo / "pyproject.toml").write_text('[tool.shapecheck]\ncontracts = ["shape_contracts/"]\n')
    small_contract(repo / "shape_contracts" / "sdpa_mps.toml")
    (repo / "_meta_registrations.py").write_text(passing_meta_source())
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    res = pre_commit("install", cwd=repo, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    return repo


def hook_repository(path: Path, env: dict) -> tuple[str, str]:
    """A git repository holding this checkout's .pre-commit-hooks.yaml, as pre-commit clones a hook
    repository (from a path: no network); its path and HEAD for `repo:` and `rev:`."""
    path.mkdir()
    (path / ".pre-commit-hooks.yaml").write_text(MANIFEST.read_text())
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "hooks")):
        assert git(path, env, *args).returncode == 0
    return str(path), git(path, env, "rev-parse", "HEAD").stdout.strip()


# ---------------------------------------------------------------------------------------------------------


def test_the_manifest_and_the_documented_configs_are_valid_for_pre_commit(tmp_path):
    res = pre_commit("validate-manifest", str(MANIFEST))
    assert res.returncode == 0, res.stdout + res.stderr
    hook = manifest_hook()
    # the user's environment, not an isolated one that would resolve a multi-GB CUDA torch
    assert (hook["entry"], hook["language"], hook["pass_filenames"]) == ("shapecheck gate", "system", False)
    configs = documented_configs()
    for kind, config in configs.items():
        path = tmp_path / f"{kind}.yaml"
        path.write_text(yaml.safe_dump(config))
        res = pre_commit("validate-config", str(path))
        assert res.returncode == 0, (kind, res.stdout + res.stderr)
    (local,) = configs["local"]["repos"][0]["hooks"]
    assert {k: local.get(k) for k in HOOK_KEYS} == {k: hook.get(k) for k in HOOK_KEYS}  # a faithful copy
    # the validator bites: a hook with an unknown language is refused
    bad = tmp_path / "bad-hooks.yaml"
    bad.write_text(MANIFEST.read_text().replace("language: system", "language: sytem"))
    assert pre_commit("validate-manifest", str(bad)).returncode == 1


@pytest.mark.parametrize(("path", "runs"), [
    ("contracts/aten/_scaled_dot_product_flash_attention.toml", True),
    ("shape_contracts/sdpa_mps.toml", True),
    ("src/mylib/shape_contracts/attention/decode.toml", True),
    ("mylib_contracts/op.toml", True),
    ("_meta_registrations.py", True),
    ("torch/_meta_registrations.py", True),
    ("mylib/fake_impls.py", True),
    ("mylib/ops/_fake_kernels.py", True),
    ("pyproject.toml", True),
    ("README.md", False),
    ("docs/contracts.md", False),
    ("shape_contracts/README.md", False),
    ("tests/test_contracts.py", False),
    ("config.toml", False),
    ("mylib/ops.py", False),
])
def test_the_hook_runs_for_contracts_meta_and_fake_kernel_files_only(path, runs):
    # pre-commit matches `files` with re.search on the repository-relative path
    assert bool(re.search(manifest_hook()["files"], path)) is runs


def test_the_hook_passes_a_clean_change_and_blocks_a_guard_and_a_malformed_contract(fresh_venv, tmp_path):
    env = user_env(fresh_venv, tmp_path / "home")
    config = documented_configs()["remote"]
    config["repos"][0]["repo"], config["repos"][0]["rev"] = hook_repository(tmp_path / "hooks", env)
    repo = scratch_repo(tmp_path, env, config)

    res = commit(repo, env, "a passing meta kernel and its contract")
    assert res.returncode == 0, res.stdout
    assert re.search(r"^shapecheck gate\.+Passed$", res.stdout, re.M), res.stdout

    text, line = regressed_meta_source()
    (repo / "_meta_registrations.py").write_text(text)
    res = commit(repo, env, "branch on the query length")
    assert res.returncode != 0 and "- exit code: 1" in res.stdout, res.stdout
    assert f"_meta_registrations.py:{line}: SC001 guard-on-dynamic-dim: the kernel branches on L <= 8" in res.stdout
    # the installed wheel ran, with its shipped contracts (named relative to site-packages), not this checkout's
    assert re.search(r"^FAIL\s+aten::_scaled_dot_product_attention_math_for_mps\s+shapecheck/contracts/aten/", res.stdout,
                     re.M) and str(ROOT / "contracts") not in res.stdout, res.stdout
    assert git(repo, env, "log", "--format=%s").stdout.split("\n")[0] == "a passing meta kernel and its contract"
    assert git(repo, env, "reset", "-q", "--hard").returncode == 0

    (repo / "shape_contracts" / "broken.toml").write_text('schema = 1\nop = "aten::_scaled_dot_product_attention_math_for_mps"\n[dims\n')
    res = commit(repo, env, "a malformed contract")
    assert res.returncode != 0 and "- exit code: 2" in res.stdout and "broken.toml" in res.stdout, res.stdout
    assert git(repo, env, "reset", "-q", "--hard").returncode == 0  # (removes the staged broken.toml)

    (repo / "README.md").write_text("no contract, no kernel\n")
    res = commit(repo, env, "docs only")
    assert res.returncode == 0 and re.search(r"^shapecheck gate\.+\(no files to check\)Skipped$", res.stdout, re.M)

    # language: system needs shapecheck on PATH; without it the hook fails and says so
    (repo / "_meta_registrations.py").write_text(passing_meta_source() + "# touched\n")
    no_venv = dict(env, PATH=os.pathsep.join(d for d in env["PATH"].split(os.pathsep)
                                             if not (Path(d) / "shapecheck").exists()))
    res = commit(repo, no_venv, "outside the environment")
    assert res.returncode != 0 and "Executable `shapecheck` not found" in res.stdout, res.stdout


def test_the_documented_local_hook_blocks_a_guard(fresh_venv, tmp_path):
    env = user_env(fresh_venv, tmp_path / "home")
    repo = scratch_repo(tmp_path, env, documented_configs()["local"])
    text, line = regressed_meta_source()
    (repo / "_meta_registrations.py").write_text(text)
    res = commit(repo, env, "a meta kernel that branches on the query length")
    assert res.returncode != 0 and "- exit code: 1" in res.stdout, res.stdout
    assert f"_meta_registrations.py:{line}: SC001 guard-on-dynamic-dim" in res.stdout
