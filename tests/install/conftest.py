"""Fixtures for installed-as-users-install-it tests: the wheel built from this checkout, a fresh venv with it
installed (not editable), scratch git repositories, and meta-registration files a PR would hold."""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import KERNELS, ROOT, scratch

REGRESSED = KERNELS / "regressed_registrations.py"
#: The result cache of this tier, one for its session. The rest of the suite runs with the cache off, so that no
#: test answers from what another stored; this tier tests an installed wheel's plumbing (the hook, the workflow's
#: step, the entry point), not the proofs, which the other tiers check cold. Its gates answer the contracts a
#: change leaves alone from the cache, as a user's CI with the documented cache does (docs/cache.md), and so the
#: installed wheel's cache is exercised too.
INSTALL_CACHE = scratch("shapecheck-install-cache-")
GUARD = "    if q_.size(2) <= 8:\n        return sdpa_vector_fast_mps()\n"


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    (found,) = out.glob("torch_shapecheck-*.whl")
    return found


@pytest.fixture(scope="session")
def fresh_venv(tmp_path_factory, wheel) -> Path:
    """A new venv with the wheel installed (not editable). Its dependencies (the pinned torch 2.13.0, z3,
    click, ...) are those of this environment, reached through a path entry: a ``.pth`` line adds the
    directory to sys.path without running that directory's own ``.pth`` files, so the editable install of
    this checkout stays invisible."""
    venv = tmp_path_factory.mktemp("venv") / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "_shapecheck_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    res = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return venv


def user_env(venv: Path, home: Path) -> dict[str, str]:
    """The environment of a user whose shell has ``venv`` activated: its bin first on PATH (where
    ``language: system`` hooks and workflow steps find ``shapecheck``), git set up with an identity and
    nothing from this machine's git configuration, caches under ``home``, and the tier's result cache on
    (``INSTALL_CACHE``)."""
    return dict(os.environ, PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", VIRTUAL_ENV=str(venv),
                HOME=str(home), SHAPECHECK_CACHE="1", SHAPECHECK_CACHE_DIR=INSTALL_CACHE,
                PRE_COMMIT_HOME=str(home / "pre-commit"), PRE_COMMIT_COLOR="never",
                GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="dev",
                GIT_AUTHOR_EMAIL="dev@example.com", GIT_COMMITTER_NAME="dev", GIT_COMMITTER_EMAIL="dev@example.com",
                PYTHONWARNINGS="ignore")


def git(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=300)


def passing_meta_source() -> str:
    """tests/kernels/regressed_registrations.py without its branch on the query length (`query_seq_len <= 8`
    and the dispatch on it): the meta kernel always takes the general path, which meets the contract."""
    lines = REGRESSED.read_text().splitlines(keepends=True)
    cut = next(i for i, t in enumerate(lines) if t.strip().startswith("query_seq_len = q_.size(2)"))
    return "".join(lines[:cut]) + "    return sdpa_general_mps()\n"


def regressed_meta_source() -> tuple[str, int]:
    """The passing file with an ``if q_.size(2) <= 8:`` branch added, and that line's number."""
    text = passing_meta_source()
    head, tail = text.rsplit("    return sdpa_general_mps()\n", 1)
    return head + GUARD + "    return sdpa_general_mps()\n" + tail, head.count("\n") + 1
