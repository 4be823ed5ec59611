"""A report is never written over a contract the command finds by itself (hunt 54): the check of "would overwrite
a file this command reads" saw only the paths on the command line, so ``--output json=c/aten/linalg_cross.toml``
replaced a contract under the project's ``[tool.shapecheck] contracts`` folder (and ``gate --json`` the shipped
one), and the next run failed on the JSON."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, invoke


@pytest.mark.parametrize("args", [("verify", "op", "aten::linalg_cross", "--output", "json=c/aten/linalg_cross.toml"),
                                  ("gate", "--json", "c/aten/linalg_cross.toml")])
def test_a_report_onto_a_contract_of_the_projects_folder_is_refused_and_the_contract_kept(tmp_path, args):
    (tmp_path / "c" / "aten").mkdir(parents=True)
    text = (ROOT / "contracts" / "aten" / "linalg_cross.toml").read_text(encoding="utf-8")
    (tmp_path / "c" / "aten" / "linalg_cross.toml").write_text(text, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.shapecheck]\ncontracts = ["c/"]\n', encoding="utf-8")
    r = invoke(*args, cwd=tmp_path)
    assert r.returncode == 2 and "would overwrite a file under the contract folder" in r.stderr, r.stderr
    assert (tmp_path / "c" / "aten" / "linalg_cross.toml").read_text(encoding="utf-8") == text


def test_a_report_onto_a_shipped_contract_is_refused(tmp_path, monkeypatch):
    from shapecheck.contract import find

    shipped = tmp_path / "shipped"  # a copy: a regression would write over it, not over the checkout's
    (shipped / "aten").mkdir(parents=True)
    contract = shipped / "aten" / "linalg_cross.toml"
    contract.write_bytes((ROOT / "contracts" / "aten" / "linalg_cross.toml").read_bytes())
    monkeypatch.setattr(find, "shipped_contracts_dir", lambda: shipped)
    (tmp_path / "run").mkdir()
    r = invoke("gate", "--json", str(contract), cwd=tmp_path / "run")
    assert r.returncode == 2 and "would overwrite a file under the contract folder" in r.stderr, r.stderr
    assert contract.read_bytes() == (ROOT / "contracts" / "aten" / "linalg_cross.toml").read_bytes()


def test_the_reports_the_project_file_asks_for_are_written_when_the_run_stops_on_bad_input(tmp_path):
    """hunt 54: ``[tool.shapecheck.verify] format = "json"`` and ``output = ["sarif=out.sarif"]`` were honoured on
    a good run only; a malformed contract gave one stderr line, no JSON and no SARIF (the error path read argv
    alone), so a CI job that sets its formats in pyproject.toml got no annotation."""
    import json

    (tmp_path / "pyproject.toml").write_text('[tool.shapecheck.verify]\nformat = "json"\n'
                                             'output = ["sarif=out.sarif"]\n', encoding="utf-8")
    (tmp_path / "bad.toml").write_text('schema = 1\nop = "aten::pixel_shuffle"\n', encoding="utf-8")
    r = invoke("verify", "op", "aten::pixel_shuffle", "--contract", "bad.toml", cwd=tmp_path)
    assert r.returncode == 2
    assert json.loads(r.stdout)["verdict"] == "error" and "bad.toml" in json.loads(r.stdout)["error"]
    sarif = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0"
