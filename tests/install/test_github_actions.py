"""docs/github-actions.yml, the example workflow: valid under the GitHub workflow schema, installing a
pinned CPU torch and shapecheck from its repository, uploading the reports whatever the exit code; and its
gate step, run as the workflow runs it (the same shell command line, a fresh non-editable install of this
checkout on PATH, a PyTorch PR's checkout as the working directory)."""

import json
import shlex
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from tests.conftest import ROOT
from tests.install.conftest import passing_meta_source, regressed_meta_source, user_env

WORKFLOW = ROOT / "docs" / "github-actions.yml"
META = "torch/_meta_registrations.py"


def job() -> dict:
    (only,) = yaml.safe_load(WORKFLOW.read_text())["jobs"].values()
    return only


def step(text: str) -> dict:
    """The one step whose `run` or `uses` contains ``text``."""
    (found,) = [s for s in job()["steps"] if text in s.get("run", s.get("uses", ""))]
    return found


def expand(text: str, shard: int) -> str:
    """What Actions runs: the ${{ matrix.shard }} expressions replaced (the only ones the steps use)."""
    out = text.replace("${{ matrix.shard }}", str(shard))
    assert "${{" not in out, out
    return out


def check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess:
    """check-jsonschema with one of its vendored schemas: no network."""
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
                          capture_output=True, text=True, timeout=120)


# ---------------------------------------------------------------------------------------------------------


def test_the_workflow_is_valid_under_the_github_workflows_schema(tmp_path):
    for schema in ("vendor.github-workflows", "custom.github-workflows-require-timeout"):
        res = check_jsonschema(schema, WORKFLOW)
        assert res.returncode == 0, (schema, res.stdout + res.stderr)
    # the validator bites: a misspelt key is refused
    bad = tmp_path / "bad.yml"
    bad.write_text(WORKFLOW.read_text().replace("runs-on:", "runs_on:"))
    res = check_jsonschema("vendor.github-workflows", bad)
    assert res.returncode == 1 and "runs-on" in res.stdout + res.stderr


def test_the_workflow_installs_a_pinned_cpu_torch_and_shapecheck_from_its_repository():
    install = step("pip install")
    commands = [shlex.split(line) for line in install["run"].splitlines() if line.strip()]
    torch_cmd, shapecheck_cmd = commands
    pinned = next(t for t in (ROOT / "requirements-dev.txt").read_text().split() if t.startswith("torch=="))
    assert pinned in torch_cmd and torch_cmd[torch_cmd.index("--index-url") + 1] == "https://download.pytorch.org/whl/cpu"
    # from the repository (torch-shapecheck is on no index), at the ref the workflow pins
    source = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Source"]
    assert torch_cmd[:4] == shapecheck_cmd[:4] == ["python", "-m", "pip", "install"]
    (req,) = [a for a in shapecheck_cmd[4:] if not a.startswith("-")]
    assert req == f"torch-shapecheck @ git+{source}@${{SHAPECHECK_REF}}", req
    assert yaml.safe_load(WORKFLOW.read_text())["env"]["SHAPECHECK_REF"]


def test_the_reports_are_uploaded_whatever_the_exit_code_once_written():
    gate = shlex.split(expand(step("shapecheck gate")["run"], 1))
    for uses, key, option in (("upload-sarif", "sarif_file", "--sarif"), ("upload-artifact", "path", "--junit")):
        upload = step(uses)
        assert "always()" in upload["if"] and "hashFiles(" in upload["if"] and "!= ''" in upload["if"]
        assert expand(upload["with"][key], 1) == gate[gate.index(option) + 1]
    assert gate[:2] == ["shapecheck", "gate"] and gate[gate.index("--format") + 1] == "github"


def run_gate_step(checkout: Path, env: dict, shard: int) -> tuple[subprocess.CompletedProcess, dict[str, Path]]:
    """The gate step of shard ``shard`` as Actions runs a `run:` (bash -e, in the checkout), and the report
    files its upload steps name."""
    for old in checkout.glob("shapecheck-*"):
        old.unlink()
    script = expand(step("shapecheck gate")["run"], shard)
    res = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=checkout,
                         env=env, capture_output=True, text=True, timeout=300)
    reports = {"sarif": checkout / expand(step("upload-sarif")["with"]["sarif_file"], shard),
               "junit": checkout / expand(step("upload-artifact")["with"]["path"], shard)}
    return res, reports


def test_the_gate_step_passes_a_clean_pr_fails_a_guard_and_reports_a_missing_file(fresh_venv, tmp_path):
    env = dict(user_env(fresh_venv, tmp_path / "home"), CI="true", GITHUB_ACTIONS="true")
    checkout = tmp_path / "pytorch"
    (checkout / "torch").mkdir(parents=True)
    # an unbuilt source tree: importing it instead of the installed torch would fail
    (checkout / "torch" / "__init__.py").write_text('raise ImportError("the unbuilt torch source tree")\n')
    shards = job()["strategy"]["matrix"]["shard"]
    assert len(shards) > 1

    (checkout / META).write_text(passing_meta_source())
    for shard in shards:
        res, reports = run_gate_step(checkout, env, shard)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
        assert "::error" not in res.stdout and res.stdout.splitlines()[-1].startswith("gate: PASS")
        assert json.loads(reports["sarif"].read_text())["version"] == "2.1.0"
        assert ET.parse(reports["junit"]).getroot().get("failures") == "0"

    text, line = regressed_meta_source()
    (checkout / META).write_text(text)
    codes = {}
    for shard in shards:
        res, reports = run_gate_step(checkout, env, shard)
        codes[shard] = res.returncode
        assert all(p.exists() for p in reports.values())
        if res.returncode == 1:
            assert f"::error file={META},line={line},title=SC001 guard-on-dynamic-dim::" in res.stdout
            results = json.loads(reports["sarif"].read_text())["runs"][0]["results"]
            at = [r["locations"][0]["physicalLocation"] for r in results if r["ruleId"] == "SC001"]
            # code scanning places it at the PR's file: relative to the repository root
            assert any(p["artifactLocation"] == {"uri": META, "uriBaseId": "SRCROOT"}
                       and p["region"]["startLine"] == line for p in at), at
            assert ET.parse(reports["junit"]).getroot().get("failures") != "0"
    assert sorted(codes.values()) == [0] * (len(shards) - 1) + [1], codes

    (checkout / META).unlink()
    for shard in shards:
        res, reports = run_gate_step(checkout, env, shard)
        assert res.returncode == 2, res.stdout[-3000:] + res.stderr[-3000:]
        assert any(t.startswith("::error") and META in t for t in res.stdout.splitlines()), res.stdout
        sarif = json.loads(reports["sarif"].read_text())
        assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is False
        assert next(ET.parse(reports["junit"]).getroot().iter("error"), None) is not None

