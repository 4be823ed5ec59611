"""Every format for every command that verifies: --format for stdout, --output FORMAT=FILE (repeatable, - for
stdout), --quiet. verify's own text and JSON are unchanged; JUnit, SARIF and GitHub come from the shared
renderers."""

import json
import xml.etree.ElementTree as ET

from tests.conftest import KERNELS, SDPA_MPS, run_cli
from tests.unit.test_gate import check_sarif

REGRESSED = KERNELS / "regressed_registrations.py"
CASE = "rank=4,mask=float,is_causal=false,dtype=bfloat16,enable_gqa=false"
VERIFY = ("verify", "op", SDPA_MPS, "--meta-source", REGRESSED, "--case", CASE, "-j", "1")


def test_verify_writes_every_format_in_one_run(tmp_path):
    files = {f: tmp_path / f"report.{f}" for f in ("json", "sarif", "junit", "github", "text")}
    res = run_cli(*VERIFY, "--format", "text", *(a for f, p in files.items() for a in ("--output", f"{f}={p}")))
    assert res.returncode == 1, res.stderr
    assert res.stdout.startswith("FAIL: ") and "what to change:" in res.stdout
    text = files["text"].read_text()
    assert text.startswith("FAIL: ") and text.count("\nSC001 ") == res.stdout.count("\nSC001 ") == 6
    doc = json.loads(files["json"].read_text())
    assert doc["verdict"] == "fail" and {v["code"] for v in doc["violations"]} == {"SC001"}
    sarif = json.loads(files["sarif"].read_text())
    check_sarif(sarif)
    results = sarif["runs"][0]["results"]
    assert sarif["runs"][0]["tool"]["driver"]["name"] == "shapecheck"
    assert any(r["ruleId"] == "SC001" and r["properties"]["expr"] == "L <= 8" for r in results)
    suite = ET.fromstring(files["junit"].read_text())
    assert suite.get("name") == "shapecheck verify" and int(suite.get("failures")) == 1
    assert any(line.startswith("::error file=") and "SC001" in line for line in files["github"].read_text().splitlines())


def test_output_dash_takes_stdout_instead_of_format(tmp_path):
    res = run_cli(*VERIFY, "--format", "text", "--output", "sarif=-")
    assert res.returncode == 1
    check_sarif(json.loads(res.stdout))


def test_quiet_drops_suppressed_findings_and_notes(tmp_path):
    loud = run_cli("gate", "-j", "1")
    quiet = run_cli("gate", "-j", "1", "--quiet")
    assert loud.returncode == quiet.returncode == 0
    assert "suppressed:" in loud.stdout and "suppressed:" not in quiet.stdout
    assert quiet.stdout.splitlines()[-1].startswith("gate: PASS")


def test_a_bad_output_spec_or_directory_is_bad_input(tmp_path):
    for bad in ("yaml=x.yaml", "sarif", f"sarif={tmp_path / 'no' / 'dir.sarif'}"):
        res = run_cli(*VERIFY, "--output", bad)
        assert res.returncode == 2 and "Traceback" not in res.stderr, (bad, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1
