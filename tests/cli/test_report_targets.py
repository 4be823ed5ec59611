"""A report is never written over a file the command reads: a contract the gate finds in a directory it scans,
a file under another name (a hard link), the project file whose ``[tool.shapecheck]`` it reads. Refused before
any work (exit 2), and the error report a refused run writes skips those files too."""

from __future__ import annotations

import os

import pytest

from tests.conftest import ROOT, invoke

CONTRACT = (ROOT / "contracts" / "aten" / "pixel_shuffle.toml").read_text()


@pytest.fixture
def project(tmp_path):
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "c.toml").write_text(CONTRACT)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    return tmp_path


@pytest.mark.parametrize("args", [
    ("gate", "contracts", "-j", "1", "--json", "contracts/c.toml"),
    ("verify", "op", "aten::pixel_shuffle", "--contract", "contracts/c.toml", "-j", "1", "--output", "json=hard.json"),
    ("verify", "op", "aten::pixel_shuffle", "--contract", "contracts/c.toml", "-j", "1", "--output",
     "json=pyproject.toml"),
])
def test_a_report_over_a_file_the_command_reads_is_refused(project, args):
    os.link(project / "contracts" / "c.toml", project / "hard.json")
    before = {p: p.read_bytes() for p in (project / "contracts" / "c.toml", project / "pyproject.toml")}
    res = invoke(*args, cwd=project)
    assert res.returncode == 2 and "which this command reads" in res.stderr, res.stderr
    assert {p: p.read_bytes() for p in before} == before


def test_a_report_over_the_meta_kernels_file_is_refused(project):
    kernel = project / "k.py"
    kernel.write_text("def kern(self, upscale_factor):\n    return self\n")
    before = kernel.read_bytes()
    res = invoke("verify", "op", "aten::pixel_shuffle", "--contract", "contracts/c.toml", "--meta", "k.py:kern", "-j",
                 "1", "--output", "json=k.py", cwd=project)
    assert res.returncode == 2 and "--meta k.py" in res.stderr and kernel.read_bytes() == before, res.stderr
