"""Installed the way users install it: the wheel carries the shipped contracts, and `shapecheck gate` run
from an unrelated directory of a fresh, non-editable install passes on the shipped family."""

import json
import subprocess
import zipfile

from tests.conftest import ROOT
from tests.install.conftest import user_env


def test_the_wheel_carries_the_shipped_contracts(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(p.relative_to(ROOT / "contracts").as_posix() for p in (ROOT / "contracts").rglob("*.toml"))
    assert shipped and sorted(n.removeprefix("shapecheck/contracts/") for n in names
                              if n.startswith("shapecheck/contracts/") and n.endswith(".toml")) == shipped


def test_gate_from_an_unrelated_directory_of_a_fresh_install_passes(fresh_venv, tmp_path):
    exe = fresh_venv / "bin" / "shapecheck"
    res = subprocess.run([str(exe), "gate", "-j", "1", "--format", "json"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=600, env=user_env(fresh_venv, tmp_path / "home"))
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-2000:])
    doc = json.loads(res.stdout)
    assert doc["verdict"] == "pass" and len(doc["reports"]) == len(list((ROOT / "contracts").rglob("*.toml")))
    where = subprocess.run([str(fresh_venv / "bin" / "python"), "-c", "import shapecheck; print(shapecheck.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, check=True).stdout.strip()
    assert where.startswith(str(fresh_venv)), where  # the installed wheel ran, not this checkout
