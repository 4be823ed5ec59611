"""Every command's result in every format, picked by the result's type (render.ci.FORMATS): fuzz's and ref check's
own text and JSON, and their findings (made by their reports) in SARIF, JUnit and GitHub output. Synthetic
reports: nothing runs a kernel."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from shapecheck.contract.find import shipped_contracts_dir
from shapecheck.contract.load import load_contract
from shapecheck.findings import PathId, Verdict
from shapecheck.render.ci import FORMATS, render
from shapecheck.render.runtime import fuzz_text, ref_text
from shapecheck.result.run import FuzzRun, RefRun, RunResult, VerifyRun
from shapecheck.rules import Command, RuleCode
from shapecheck.runtime.fuzz_report import Failure, FuzzReport
from shapecheck.runtime.ref_findings import PathRun, RefFinding
from shapecheck.runtime.refcheck import RefReport


@pytest.fixture(scope="module")
def info():
    return load_contract(shipped_contracts_dir() / "aten" / "index_select.toml").info


def fuzz_report(paths: dict[str, list[str]]) -> FuzzReport:
    failure = Failure("meta-shape", "case;N=3;seed=1", "index_rank=1", {"N": 3}, 1, paths, {}, "(3,)", "(4,)",
                      "the meta kernel's shape differs", "shapecheck fuzz op ... --example X", RuleCode.OUTPUT_SHAPE_MISMATCH)
    return FuzzReport("aten::index_select", "index_select.toml", "meta", Verdict.FAIL, 1, 5, 0, 0.5, {}, (failure,),
                      {}, {}, "none", torch="2.13.0")


def ref_report() -> RefReport:
    found = RefFinding(RuleCode.RUNTIME_REJECTS, "default", "index-select", "index_rank=1", {"N": 2}, "the runtime runs it")
    hidden = RefFinding(RuleCode.RUNTIME_REJECTS, "new", "index-select", "index_rank=0", {"N": 1}, "known", "a reason")
    return RefReport("aten::index_select", "index_select.toml", Verdict.FAIL,
                     [PathRun("default", "index-select", 2, [found]), PathRun("new", "index-select", 1, [hidden])],
                     0.25, "-")


def test_the_table_has_a_shared_renderer_of_every_format():
    assert list(FORMATS) == ["text", "json", "github", "sarif", "junit"]
    assert all(RunResult in table for table in FORMATS.values())


def test_fuzz_keeps_its_own_text_and_json_and_gives_findings_to_the_other_formats(info):
    report = fuzz_report({"default": ["index-select"]})
    result = FuzzRun.of(info, report)
    assert result.command is Command.FUZZ and result.verdict is Verdict.FAIL and result.exit_code == 1
    cwd = Path.cwd()
    assert render(result, "text", cwd) == fuzz_text(report)
    assert json.loads(render(result, "json", cwd)) == json.loads(json.dumps(report.to_json()))
    assert json.loads(render(result, "json", cwd))["verdict"] == "fail"
    (v,) = result.runs[0].report.violations
    assert v.code == RuleCode.OUTPUT_SHAPE_MISMATCH and v.path == PathId("index-select") and v.counterexample == {"N": 3}
    sarif = json.loads(render(result, "sarif", cwd))["runs"][0]
    assert sarif["tool"]["driver"]["name"] == "shapecheck" and len(sarif["results"]) == 1
    assert sarif["results"][0]["ruleId"] == "SC002" and sarif["results"][0]["properties"]["path"] == "index-select"
    suites = ET.fromstring(render(result, "junit", cwd))
    assert suites.get("name") == "shapecheck fuzz" and suites.get("failures") == "1"
    assert "::error " in render(result, "github", cwd)


def test_a_fuzz_failure_in_several_paths_names_them_in_its_message(info):
    (v,) = FuzzRun.of(info, fuzz_report({"default": ["a"], "new": ["a", "b"]})).runs[0].report.violations
    assert v.path is None and v.message.endswith("(paths: a, a@new, b@new)")


def test_ref_check_keeps_its_own_text_and_json_and_marks_suppressed_findings(info):
    report = ref_report()
    result = RefRun.of(info, report, "2.13.0")
    cwd = Path.cwd()
    assert result.command is Command.REF and result.verdict is Verdict.FAIL
    assert render(result, "text", cwd) == ref_text(report)
    assert json.loads(render(result, "json", cwd)) == report.to_json()
    found = result.runs[0].report.violations
    assert [(str(v.path), bool(v.suppressed)) for v in found] == [("index-select", False), ("index-select@new", True)]
    suites = ET.fromstring(render(result, "junit", cwd))
    assert suites.get("name") == "shapecheck ref check"


def test_sarif_lists_the_rule_of_every_finding_even_one_another_command_owns(info):
    """ref check's [[rejects]] regions report SC021 (a verify rule): SARIF used to fail on its ruleIndex."""
    region = RefFinding(RuleCode.META_ACCEPTS_REJECTED_INPUT, "-", "rejects.index-not-a-vector", "index_rank=2",
                        {"N": 1}, "the meta kernel accepts it")
    report = RefReport("aten::index_select", "index_select.toml", Verdict.FAIL,
                       [PathRun("-", "rejects.index-not-a-vector", 1, [region])], 0.1, "-")
    run = json.loads(render(RefRun.of(info, report, "2.13.0"), "sarif", Path.cwd()))["runs"][0]
    (hit,) = run["results"]
    rules = run["tool"]["driver"]["rules"]
    assert hit["ruleId"] == "SC021" and rules[hit["ruleIndex"]]["id"] == "SC021"


def test_verify_keeps_its_own_text_and_json(info):
    from shapecheck.render.text import render_json, render_text
    from shapecheck.result.report import Report

    report = Report("aten::index_select", info.file, "meta", Verdict.PASS)
    result = VerifyRun.of(info, report)
    cwd = Path.cwd()
    assert render(result, "json", cwd) == render_json(report)
    assert render(result, "text", cwd) == render_text(report)
    assert json.loads(render(result, "sarif", cwd))["runs"][0]["results"] == []


def test_every_commands_json_names_files_relative_to_the_repository_or_site_packages(info):
    """docs/cli.md: report paths are relative to the repository root, else to site-packages (torch's files), else
    absolute; verify's JSON kept the absolute paths it was given (issue 22: torch's files shown absolute)."""
    import torch

    from shapecheck.findings import Finding, SourceLoc
    from shapecheck.paths import repo_root
    from shapecheck.result.report import Report

    torch_file = str(Path(torch.__file__).resolve().parent / "_meta_registrations.py")
    contract = str(repo_root() / "contracts" / "aten" / "index_select.toml")
    def finding(file: str, line: int) -> Finding:
        return Finding(code=RuleCode.GUARD_ON_DYNAMIC_DIM, case="c", expr="N <= 8", counterexample={"N": 9},
                       message="m", location=SourceLoc(file, line, "f", "x"))

    found = (finding(torch_file, 7), finding("/nowhere/k.py", 3))
    doc = json.loads(render(VerifyRun.of(info, Report("aten::index_select", contract, "meta", Verdict.FAIL,
                                                       violations=found)), "json", Path.cwd()))
    assert doc["contract"] == "contracts/aten/index_select.toml"
    assert [(v["location"]["file"], v["location"]["base"], v["location"]["line"]) for v in doc["violations"]] == [
        ("torch/_meta_registrations.py", "SITE_PACKAGES", 7), ("/nowhere/k.py", None, 3)]
    for result in (FuzzRun.of(info, dataclasses.replace(fuzz_report({}), contract=contract)),
                   RefRun.of(info, dataclasses.replace(ref_report(), contract=contract), "2.13.0")):
        assert json.loads(render(result, "json", Path.cwd()))["contract"] == "contracts/aten/index_select.toml"
