"""Baselines (gate --write-baseline / --baseline) and [tool.shapecheck] defaults for every command."""

import json

import pytest

from tests.conftest import KERNELS, ROOT, invoke
from tests.unit.test_gate import small_contract

REGRESSED = KERNELS / "regressed_registrations.py"


@pytest.mark.slow
def test_a_baseline_accepts_todays_findings_and_fails_only_on_new_ones(tmp_path):
    contract = small_contract(tmp_path / "c" / "sdpa.toml")
    kernel = tmp_path / "_meta_registrations.py"
    kernel.write_text(REGRESSED.read_text())
    base = tmp_path / "baseline.json"
    res = invoke("gate", contract, "--meta-source", kernel, "-j", "1", "--write-baseline", base)
    assert res.returncode == 0, res.stdout[-2000:]
    recorded = json.loads(base.read_text())["findings"]
    assert recorded and "SC001" in {f["rule"] for f in recorded}
    assert any(f["expr"] == "L <= 8" for f in recorded)
    # the same findings, moved down two lines by an edit above them, and one new guard
    text = kernel.read_text().replace("    mask_ = attn_mask\n",
                                      "    mask_ = attn_mask\n    if query_seq_len % 16 == 0:\n        pass\n", 1)
    assert text != kernel.read_text()
    kernel.write_text(text)
    res = invoke("gate", contract, "--meta-source", kernel, "-j", "1", "--baseline", base, "--format", "json")
    assert res.returncode == 1, res.stderr
    (report,) = json.loads(res.stdout)["reports"]
    assert [v["expr"] for v in report["violations"]] == ["L % 16 == 0"]
    assert len(report["suppressed"]) == len(recorded)
    assert all(s["suppressed"].startswith("in the baseline") for s in report["suppressed"])


def test_a_bad_baseline_is_bad_input(tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text('{"findings": 3}')
    res = invoke("gate", small_contract(tmp_path / "c" / "s.toml"), "--baseline", bad, "-j", "1")
    assert res.returncode == 2 and "not a shapecheck baseline" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.slow  # a bare `gate` runs the shipped family too
def test_pyproject_sets_defaults_and_the_command_line_wins(tmp_path, cache_dir):
    (tmp_path / "shape_contracts").mkdir()
    small_contract(tmp_path / "shape_contracts" / "sdpa.toml")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shapecheck]\ncontracts = ["shape_contracts/"]\njobs = 1\nquiet = true\n\n'
        '[tool.shapecheck.gate]\nformat = "github"\n')
    # the project's own folder named (not the shipped family too, which a bare gate adds: a minute of proofs
    # that say nothing about the options read here)
    res = invoke("gate", "shape_contracts", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1].startswith("gate: PASS") and "PASS: aten::" in res.stdout  # github form
    assert "::notice" not in res.stdout  # quiet, from the file: no suppressed findings
    # the command line wins; the result cache is on, so the second run renders the first one's results (the
    # format is not part of a result's key), not the family's proofs again
    res = invoke("gate", "shape_contracts", "--format", "text", cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.startswith("PASS "), res.stdout[-2000:]
    assert "contracts answered from the cache" in res.stdout, res.stdout[-2000:]


def test_an_unknown_key_in_pyproject_is_bad_input(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.shapecheck]\njbos = 2\n")
    res = invoke("gate", cwd=tmp_path)
    assert res.returncode == 2 and "jbos" in res.stderr and "pyproject.toml" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_an_audit_baseline_whose_untraced_list_is_malformed_is_bad_input_before_any_work(tmp_path, monkeypatch):
    from shapecheck.audit import run as audit_run

    bad = tmp_path / "a.json"
    bad.write_text(json.dumps({"tool": "shapecheck audit", "version": 1, "findings": [],
                               "untraced": [{"op": "aten::add.Tensor", "reason": "  "}]}))

    def no_work(*args, **kwargs):
        raise AssertionError("the audit ran before the baseline was checked")

    monkeypatch.setattr(audit_run, "run_audit", no_work)
    res = invoke("audit", "--ops", "aten::add.Tensor", "--baseline", bad)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "untraced[0]: expected" in res.stderr and "Traceback" not in res.stderr


def test_a_project_file_value_refused_only_when_used_names_the_file_and_key(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.shapecheck]\nmeta-source = "nonexistent.py"\n')
    res = invoke("verify", "op", "aten::index_select", cwd=tmp_path)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "--meta-source" in res.stderr and f"(set by {tmp_path / 'pyproject.toml'} [tool.shapecheck] meta-source)" \
        in res.stderr
    # given on the command line, the option is the user's: no file named
    res = invoke("verify", "op", "aten::index_select", "--meta-source", "other.py", cwd=tmp_path)
    assert res.returncode == 2 and "set by" not in res.stderr, res.stderr


@pytest.mark.slow  # an audit run
def test_a_shared_value_one_command_lacks_applies_to_the_others_and_is_refused_only_there(tmp_path):
    """``format = "junit"`` in the shared table: verify and gate write JUnit; audit, which has no JUnit, refuses
    it naming the file and key, and only when audit runs."""
    (tmp_path / "pyproject.toml").write_text('[tool.shapecheck]\nformat = "junit"\n')
    res = invoke("contract", "check", ROOT / "contracts" / "aten" / "index_select.toml", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    res = invoke("audit", "--ops", "aten::index_select.default", "--no-cache", cwd=tmp_path)
    assert res.returncode == 2 and "[tool.shapecheck] format" in res.stderr and "'junit'" in res.stderr, res.stderr
    # the command line wins, as for every option
    res = invoke("audit", "--ops", "aten::index_select.default", "--no-cache", "--format", "text", "-j", "1",
                 cwd=tmp_path)
    assert res.returncode in (0, 1, 3) and res.stdout.splitlines()[-1].startswith("audit: "), res.stderr


@pytest.mark.slow
def test_a_shared_junit_format_gives_verify_junit(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.shapecheck]\nformat = "junit"\n')
    res = invoke("verify", "op", "aten::index_select", "--contract", ROOT / "contracts" / "aten" / "index_select.toml",
                 "-j", "1", "--no-cache", cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.startswith("<?xml"), res.stderr
