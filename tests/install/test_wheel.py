"""Installed the way users install it: the wheel carries the shipped contracts, and `shapecheck gate` run
from an unrelated directory of a fresh, non-editable install passes on the shipped family."""

import json
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    (found,) = out.glob("torch_shapecheck-*.whl")
    return found


@pytest.fixture(scope="module")
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


def test_the_wheel_carries_the_shipped_contracts(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(p.relative_to(ROOT / "contracts").as_posix() for p in (ROOT / "contracts").rglob("*.toml"))
    assert shipped and sorted(n.removeprefix("shapecheck/contracts/") for n in names
                              if n.startswith("shapecheck/contracts/") and n.endswith(".toml")) == shipped


def test_gate_from_an_unrelated_directory_of_a_fresh_install_passes(fresh_venv, tmp_path):
    exe = fresh_venv / "bin" / "shapecheck"
    res = subprocess.run([str(exe), "gate", "-j", "1", "--format", "json"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=600)
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-2000:])
    doc = json.loads(res.stdout)
    assert doc["verdict"] == "pass" and len(doc["reports"]) == len(list((ROOT / "contracts").rglob("*.toml")))
    where = subprocess.run([str(fresh_venv / "bin" / "python"), "-c", "import shapecheck; print(shapecheck.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, check=True).stdout.strip()
    assert where.startswith(str(fresh_venv)), where  # the installed wheel ran, not this checkout
