"""Reports name a file relative to the repository root of the current directory: read on every call, so that a
process that changes directory (a test runner, a tool embedding shapecheck) names files from where it is now.
The root was cached on the first call, and audits run in a test's temporary directory left every later report
of the process with absolute paths."""

from __future__ import annotations

from shapecheck.paths import locate, repo_root
from tests.conftest import ROOT


def test_the_repository_root_follows_the_current_directory(tmp_path, monkeypatch):
    kernel = ROOT / "tests" / "kernels" / "regressed_registrations.py"
    assert repo_root() == ROOT and locate(str(kernel))[0] == "tests/kernels/regressed_registrations.py"
    monkeypatch.chdir(tmp_path)
    assert repo_root() == tmp_path.resolve() and locate(str(kernel)) == (str(kernel.resolve()), None)
    monkeypatch.undo()
    assert repo_root() == ROOT and locate(str(kernel))[0] == "tests/kernels/regressed_registrations.py"


def test_outside_a_repository_the_root_is_the_projects_pyproject_folder(tmp_path, monkeypatch):
    """hunt 52: outside a git repository the root was the current directory, so one audit baseline matched its
    findings from the project's folder and none from a subfolder (exit 1 there)."""
    (tmp_path / "proj" / "bl").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text("[project]\nname = 'p'\n", encoding="utf-8")
    kernel = tmp_path / "proj" / "ops.py"
    kernel.write_text("", encoding="utf-8")
    for where in (tmp_path / "proj", tmp_path / "proj" / "bl"):
        monkeypatch.chdir(where)
        assert repo_root() == (tmp_path / "proj").resolve() and locate(str(kernel)) == ("ops.py", "SRCROOT")
