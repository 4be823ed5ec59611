"""Every format for every command that verifies: --format for stdout, --output FORMAT=FILE (repeatable, - for
stdout), --quiet. verify's own text and JSON are unchanged; JUnit, SARIF and GitHub come from the shared
renderers."""

import json
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import KERNELS, SDPA_MPS, invoke, rendered
from tests.unit.test_gate import check_sarif

REGRESSED = KERNELS / "regressed_registrations.py"
CASE = "rank=4,mask=float,is_causal=false,dtype=bfloat16,enable_gqa=false"
VERIFY = ("verify", "op", SDPA_MPS, "--meta-source", REGRESSED, "--case", CASE, "-j", "1")


@pytest.mark.slow
def test_verify_writes_every_format_in_one_run(tmp_path):
    files = {f: tmp_path / f"report.{f}" for f in ("json", "sarif", "junit", "github", "text")}
    res = invoke(*VERIFY, "--format", "text", *(a for f, p in files.items() for a in ("--output", f"{f}={p}")))
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


@pytest.mark.slow
def test_output_dash_takes_stdout_instead_of_format(tmp_path):
    res = invoke(*VERIFY, "--format", "text", "--output", "sarif=-")
    assert res.returncode == 1
    check_sarif(json.loads(res.stdout))


def test_quiet_drops_suppressed_findings_and_notes(shipped_gate):
    loud, quiet = rendered(shipped_gate, "text"), rendered(shipped_gate, "text", quiet=True)
    assert shipped_gate.exit_code == 0
    assert "suppressed:" in loud and "suppressed:" not in quiet
    assert quiet.splitlines()[-1].startswith("gate: PASS")


def test_a_bad_output_spec_or_directory_is_bad_input(tmp_path):
    for bad in ("yaml=x.yaml", "sarif", f"sarif={tmp_path / 'no' / 'dir.sarif'}"):
        res = invoke(*VERIFY, "--output", bad)
        assert res.returncode == 2 and "Traceback" not in res.stderr, (bad, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1


def test_sarif_rules_carry_help_and_installed_files_are_relative_to_site_packages(shipped_gate):
    """The shipped family's suppressed findings sit in the installed torch's _meta_registrations.py: the
    artifact is torch/_meta_registrations.py against SITE_PACKAGES, and a suppressed result is a note."""
    doc = json.loads(rendered(shipped_gate, "sarif"))
    check_sarif(doc)
    run = doc["runs"][0]
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["help"]["markdown"].startswith(f"**{rule['id']} {rule['name']}**")
        assert rule["helpUri"].endswith(f"/rules.md#{rule['id'].lower()}-{rule['name']}")
    assert set(run["originalUriBaseIds"]) == {"SRCROOT", "SITE_PACKAGES"}
    suppressed = [r for r in run["results"] if r.get("suppressions")]
    assert suppressed and all(r["level"] == "note" for r in suppressed)
    where = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in suppressed}
    assert "torch/_meta_registrations.py" in where
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "SITE_PACKAGES"
               for r in suppressed if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("torch/"))


def test_gate_json_names_files_relative_to_the_repository(shipped_gate):
    assert shipped_gate.exit_code == 0
    doc = json.loads(rendered(shipped_gate, "json"))
    assert all(not r["contract"].startswith("/") for r in doc["reports"])
    files = [v["location"] for r in doc["reports"] for v in r["suppressed"] if v["location"] is not None]
    assert any(loc["file"] == "torch/_meta_registrations.py" for loc in files)
    # torch's own files (the meta registrations, the decompositions im2col runs) are named relative to
    # site-packages, never by this machine's absolute path
    assert all(loc["file"].startswith("torch/") and loc["base"] == "SITE_PACKAGES" for loc in files)


def test_a_run_that_stops_on_bad_input_still_writes_its_reports(tmp_path):
    """Exit 2 before any verdict: SARIF with a failed invocation, JUnit with an erroring testcase, JSON with the
    error, and an ::error line under --format github, so CI's upload steps show the real error."""
    sarif, junit, js = tmp_path / "r.sarif", tmp_path / "r.xml", tmp_path / "r.json"
    res = invoke("gate", tmp_path / "missing", "--format", "github", "--sarif", sarif, "--junit", junit,
                 "--output", f"json={js}")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stdout.startswith("::error title=shapecheck gate (exit 2)::") and "missing" in res.stdout
    doc = json.loads(sarif.read_text())
    check_sarif(doc)
    inv = doc["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False and inv["exitCode"] == 2
    assert "missing" in inv["toolExecutionNotifications"][0]["message"]["text"]
    suite = ET.fromstring(junit.read_text())
    assert suite.get("errors") == "1" and "missing" in suite.find(".//error").get("message")
    assert json.loads(js.read_text())["verdict"] == "error"
    # a usage error (before click has parsed the command) too
    res = invoke("verify", "op", SDPA_MPS, "--max-traces", "0", "--output", f"sarif={sarif}")
    assert res.returncode == 2 and json.loads(sarif.read_text())["runs"][0]["invocations"][0]["exitCode"] == 2


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit"])
def test_format_alone_still_gets_the_error_report_on_stdout(tmp_path, fmt):
    # --format without --output is the report on stdout: it was empty on exit 2 (only github printed a line)
    res = invoke("verify", "op", "aten::not_an_op_at_all", "--contract", tmp_path / "missing.toml", "--format", fmt)
    assert res.returncode == 2 and "Traceback" not in res.stderr and res.stdout.strip()
    if fmt == "json":
        doc = json.loads(res.stdout)
        assert doc["verdict"] == "error" and doc["exit_code"] == 2 and "missing.toml" in doc["error"]
    elif fmt == "sarif":
        doc = json.loads(res.stdout)
        check_sarif(doc)
        assert doc["runs"][0]["invocations"][0]["exitCode"] == 2
    else:
        assert ET.fromstring(res.stdout.split("\n", 1)[1]).get("errors") == "1"
