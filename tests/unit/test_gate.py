"""shapecheck gate: the shipped contracts pass; a regressed kernel fails with SC001 at its line in every
report format; malformed input exits 2 naming the file; shards add up to a full run; stale suppressions fail."""

import io
import json
import re
import shlex
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from shapecheck.errors import ContractError, UserError
from shapecheck.kernel.sources import MetaSource
from tests.conftest import KERNELS, ROOT, SDPA_CONTRACT, SDPA_MPS, invoke, rendered

REGRESSED = KERNELS / "regressed_registrations.py"
ONE_CASE = {"rank": "[4]", "mask": '["bool"]', "is_causal": "[false]", "dtype": '["float32"]',
            "enable_gqa": "[false]"}
CASE4 = "rank=4,mask=bool,is_causal=false,dtype=float32,enable_gqa=false"


def guard_line() -> int:
    src = REGRESSED.read_text().splitlines()
    return next(i for i, t in enumerate(src, 1) if "(query_seq_len <= 8)" in t)


def small_contract(path: Path, extra: str = "", **choices: str) -> Path:
    """The shipped SDPA-MPS contract narrowed to the given choice values by ``[domain] exclude`` (shortening
    the lists instead would leave its expressions naming values the choices lack: a load error), with
    ``extra`` TOML appended."""
    text = SDPA_CONTRACT.read_text()
    keep = [f"{name} not in {tuple(tomllib.loads(f'v = {value}')['v'])!r}"
            for name, value in {**ONE_CASE, **choices}.items()]
    text, n = re.subn(r"(?m)^requires = ", f"exclude = {json.dumps(keep)}\nrequires = ", text, count=1)
    assert n == 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + extra)
    return path


def gate_run(paths, **kw):
    from shapecheck.ci.gate import GateOptions, run_gate

    return run_gate([str(p) for p in paths], GateOptions(**kw), cwd=ROOT)


def check_sarif(doc: dict) -> None:
    """The required structure of SARIF 2.1.0 (sarif-schema-2.1.0.json) for the parts shapecheck writes."""
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-schema-2.1.0.json")
    assert isinstance(doc["runs"], list) and doc["runs"]
    for run in doc["runs"]:
        driver = run["tool"]["driver"]
        assert isinstance(driver["name"], str) and driver["name"]
        ids = [r["id"] for r in driver["rules"]]
        assert len(ids) == len(set(ids)) and all(isinstance(i, str) for i in ids)
        for r in driver["rules"]:
            for key in ("shortDescription", "fullDescription"):
                assert isinstance(r[key]["text"], str)
        for base in run.get("originalUriBaseIds", {}).values():
            assert base["uri"].endswith("/")
        for inv in run.get("invocations", []):
            assert isinstance(inv["executionSuccessful"], bool)
            for note in inv.get("toolExecutionNotifications", []):
                assert isinstance(note["message"]["text"], str)
        for res in run["results"]:
            assert isinstance(res["message"]["text"], str)
            assert res["level"] in ("none", "note", "warning", "error")
            assert ids[res["ruleIndex"]] == res["ruleId"]
            for loc in res.get("locations", []):
                phys = loc["physicalLocation"]
                assert isinstance(phys["artifactLocation"]["uri"], str)
                assert isinstance(phys["region"]["startLine"], int) and phys["region"]["startLine"] >= 1
            for sup in res.get("suppressions", []):
                assert sup["kind"] in ("inSource", "external")


STABLE = ("code", "kind", "case", "path", "expr", "dims", "location", "restricts", "suppressed")


def comparable(report: dict) -> dict:
    """A report's JSON without timings, and each finding on its stable fields: z3 may pick another of
    several equally small counterexamples (E=1, Ev=2 or E=2, Ev=1) when its state differs."""
    out = {k: v for k, v in report.items() if k != "seconds"}
    for key in ("violations", "suppressed"):
        out[key] = sorted(json.dumps({f: v.get(f) for f in STABLE}, sort_keys=True) for v in report[key])
    return out


# ---------------------------------------------------------------------------------------------------------
# End to end


def test_gate_over_the_shipped_contracts_passes(shipped_gate):
    from shapecheck.contract.find import discover, shipped_contracts_dir

    text = rendered(shipped_gate, "text")
    assert shipped_gate.exit_code == 0, text[-3000:]
    doc = json.loads(rendered(shipped_gate, "json"))
    shipped = {str(p.relative_to(ROOT)) for p in discover([shipped_contracts_dir()])}
    assert {r["contract"] for r in doc["reports"]} == shipped and SDPA_CONTRACT.relative_to(ROOT).as_posix() in shipped
    assert all(r["verdict"] == "pass" and r["cases"] for r in doc["reports"])
    assert doc["verdict"] == "pass" and doc["torch"].startswith("2.13")
    assert text.splitlines()[-1].startswith("gate: PASS")


@pytest.mark.slow
def test_regressed_kernel_fails_with_SC001_at_its_line_in_every_format(tmp_path):
    contract = small_contract(tmp_path / "contracts" / "sdpa.toml")
    files = {k: tmp_path / f"out.{k}" for k in ("junit", "sarif", "json")}
    line = guard_line()
    rel = REGRESSED.relative_to(ROOT).as_posix()
    res = invoke("gate", tmp_path / "contracts", "--meta-source", REGRESSED, "--format", "github",
                 *(a for k, f in files.items() for a in (f"--{k}", f)))
    assert res.returncode == 1, res.stderr
    # GitHub annotations
    assert f"::error file={rel},line={line},title=SC001 guard-on-dynamic-dim::" in res.stdout
    assert res.stdout.splitlines()[-1].startswith("gate: FAIL")
    # SARIF
    sarif = json.loads(files["sarif"].read_text())
    check_sarif(sarif)
    hits = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "SC001" and r["properties"]["expr"] == "L <= 8"]
    assert len(hits) == 1 and hits[0]["level"] == "error"
    phys = hits[0]["locations"][0]["physicalLocation"]
    assert phys["artifactLocation"] == {"uri": rel, "uriBaseId": "SRCROOT"} and phys["region"]["startLine"] == line
    assert hits[0]["properties"]["case"] == CASE4 and hits[0]["properties"]["counterexample"]["L"] > 8
    # JUnit
    suites = ET.parse(files["junit"]).getroot()
    assert suites.tag == "testsuites" and suites.get("failures") == "1"
    (tc,) = suites.iter("testcase")
    assert (tc.get("classname"), tc.get("name")) == (SDPA_MPS, CASE4)
    failure = tc.find("failure")
    assert "SC001" in failure.get("type").split(",") and "SC001 L <= 8" in failure.get("message")
    assert f"{rel}:{line}" in failure.text
    # JSON
    doc = json.loads(files["json"].read_text())
    (report,) = doc["reports"]
    assert doc["verdict"] == "fail" and report["contract"] == str(contract.resolve())
    v = next(v for v in report["violations"] if v["code"] == "SC001" and v["expr"] == "L <= 8")
    # relative to the repository root, as the text and SARIF name it (it was absolute)
    assert (v["location"]["file"], v["location"]["base"], v["location"]["line"]) == (rel, "SRCROOT", line)
    # text
    res = invoke("gate", contract, "--meta-source", REGRESSED)
    assert res.returncode == 1
    assert re.match(rf"FAIL +{SDPA_MPS} ", res.stdout)
    assert f"{rel}:{line}: SC001 guard-on-dynamic-dim: the kernel branches on L <= 8" in res.stdout


def test_bad_input_exits_2_and_names_the_file(tmp_path):
    good = small_contract(tmp_path / "set" / "a_good.toml")
    small_contract(tmp_path / "set" / "b_bad.toml", extra='\n[[suppress]]\nrule = "SC1"\nreason = "r"\n')
    for args, name in (([tmp_path / "set"], "b_bad.toml"),
                       ([good, tmp_path / "missing.toml"], "missing.toml"),
                       ([good, "--meta-source", tmp_path / "nope.py"], "nope.py"),
                       ([good, "--shard", "3/2"], "3/2")):
        res = invoke("gate", *args)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert "Traceback" not in res.stderr and name in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    with pytest.raises(ContractError, match=r"b_bad.toml: \[suppress\[\d+\]\.rule\]"):
        gate_run([tmp_path / "set"])


# ---------------------------------------------------------------------------------------------------------
# Sharding


def test_assign_shards_is_deterministic_balanced_and_total():
    from shapecheck.ci.gate import assign_shards

    weights = [(f"c{i}.toml", w) for i, w in enumerate([108, 12, 36, 1, 7, 7, 50, 3])]
    for n in (1, 2, 3, 8, 11):
        a = assign_shards(weights, n)
        assert a == assign_shards(list(reversed(weights)), n)
        assert set(a) == {k for k, _ in weights} and set(a.values()) <= set(range(1, n + 1))
        load = [sum(w for k, w in weights if a[k] == s) for s in range(1, n + 1)]
        assert max(load) - min(load) <= max(w for _, w in weights)
    assert assign_shards(weights, 2) != {k: 1 for k, _ in weights}


@pytest.mark.slow
def test_all_shards_together_equal_one_full_run(tmp_path):
    d = tmp_path / "contracts"
    small_contract(d / "a.toml", rank="[4, 5]")  # two cases with the same first guard: one is shared
    small_contract(d / "b.toml", mask='["none"]')
    small_contract(d / "c.toml", rank="[3]", is_causal="[true]")
    full = gate_run([d], source=MetaSource(str(REGRESSED)))
    assert full.exit_code == 1 and len(full.runs) == 3
    assert any(c.shared_with for run in full.runs for c in run.report.cases)
    want = {r.report.contract: comparable(r.report.to_json()) for r in full.runs}
    for n in (2, 3):
        got: dict[str, dict] = {}
        verdicts = []
        for k in range(1, n + 1):
            shard = gate_run([d], source=MetaSource(str(REGRESSED)), shard=(k, n))
            assert shard.total_contracts == 3
            for r in shard.runs:
                assert r.report.contract not in got  # each contract in exactly one shard
                got[r.report.contract] = comparable(r.report.to_json())
            verdicts.append(shard.exit_code)
        assert got == want
        assert max(verdicts) == full.exit_code
    from shapecheck.render import ci as ci_report

    empty = gate_run([d], source=MetaSource(str(REGRESSED)), shard=(4, 4))  # more shards than contracts
    assert empty.runs == [] and empty.exit_code == 0 and empty.total_contracts == 3
    assert "shard 4/4 holds none of the 3 contracts" in ci_report.render_text(empty, ROOT)


# ---------------------------------------------------------------------------------------------------------
# Suppressions


SUPPRESS = """
[[suppress]]
rule = "SC001"
reason = "accepted: the March kernel, tracked in #177603"
dims = ["L"]

[[suppress]]
rule = "SC003"
reason = "a specialisation that no longer happens"

[[suppress]]
rule = "SC001"
reason = "expired acceptance"
dims = ["S"]
expires = "2020-01-01"
"""


@pytest.mark.slow
def test_suppressions_stale_fails_expired_counts_again_matching_is_reported_apart(tmp_path):
    from shapecheck.render import ci as ci_report

    contract = small_contract(tmp_path / "sup.toml", extra=SUPPRESS)
    # the last three [[suppress]] tables are ours (the shipped contract may hold some for other rules)
    headers = [i for i, t in enumerate(contract.read_text().splitlines(), 1) if t == "[[suppress]]"][-3:]
    result = gate_run([contract], source=MetaSource(str(REGRESSED)))
    (run,) = result.runs
    assert result.exit_code == 1
    sup = [v for v in run.report.violations if v.suppressed]
    active = [v for v in run.report.violations if not v.suppressed]
    assert sup and all(v.code == "SC001" and "L" in v.dims for v in sup)
    assert any(v.expr == "S >= 1024" for v in active)  # the expired suppression suppresses nothing
    (stale,) = run.stale
    assert stale.code == "SC008" and stale.location.line == headers[1] and stale.kind == "stale-suppression"
    (expired,) = run.expired
    assert expired.expires == "2020-01-01" and expired.matched >= 1 and expired.location.line == headers[2]
    text = ci_report.render_text(result, ROOT)
    assert f"sup.toml:{headers[1]}: SC008 stale-suppression" in text and "suppressed: " in text
    assert "expired on 2020-01-01" in text
    gh = ci_report.render_github(result, ROOT)
    assert f"line={headers[1]},title=SC008 stale-suppression::" in gh and "::notice " in gh
    sarif = ci_report.to_sarif(result, ROOT)
    check_sarif(sarif)
    results = sarif["runs"][0]["results"]
    (s8,) = [r for r in results if r["ruleId"] == "SC008"]
    assert s8["level"] == "error" and s8["locations"][0]["physicalLocation"]["region"]["startLine"] == headers[1]
    accepted = [r for r in results if r.get("suppressions")]
    assert len(accepted) == len({(v.expr, v.location.line) for v in sup})
    assert accepted[0]["suppressions"][0]["justification"].startswith("accepted")
    assert accepted[0]["suppressions"][0]["location"]["physicalLocation"]["region"]["startLine"] == headers[0]
    junit = ci_report.to_junit(result, ROOT)
    (tc,) = [t for t in junit.iter("testcase") if t.get("name") == stale.location.function]
    assert tc.find("failure").get("type") == "SC008"
    doc = ci_report.to_json(result)["reports"][0]
    assert len(doc["stale_suppressions"]) == 1 and len(doc["suppressed"]) == len(sup)
    assert doc["expired_suppressions"][0]["expires"] == "2020-01-01"


@pytest.mark.slow
def test_a_suppression_of_a_fixed_finding_fails_the_passing_kernel(tmp_path):
    contract = small_contract(tmp_path / "fixed.toml", extra=SUPPRESS.split("\n\n")[0] + "\n")
    result = gate_run([contract])
    (run,) = result.runs
    # (the reduced contract leaves some paths unreachable: SC006 notes, which do not fail)
    assert run.report.verdict.value == "pass" and {v.code for v in run.report.violations} <= {"SC006"}
    assert [v.code for v in run.stale] == ["SC008"] and result.exit_code == 1


def test_a_suppression_over_cases_the_kernel_cannot_run_is_not_stale(tmp_path):
    """hunt 57: a ``--meta-source`` kernel of an older signature takes none of the cases' arguments; every case
    is skipped, so the suppression's finding may still be there: inconclusive, not an SC008 that fails the gate."""
    contract = small_contract(tmp_path / "old.toml", extra=SUPPRESS.split("\n\n")[0] + "\n")
    result = gate_run([contract], source=MetaSource(str(KERNELS / "sdpa_mps_old_signature.py")))
    (run,) = result.runs
    assert run.report.cases and all(c.skipped for c in run.report.cases)
    assert run.stale == [] and run.report.verdict.value == "inconclusive"
    assert result.exit_code == 3


# ---------------------------------------------------------------------------------------------------------
# Contract sets, kernels, progress, CI files


def test_default_set_is_shipped_plus_pyproject_configured(tmp_path):
    from shapecheck.ci.gate import contract_files
    from shapecheck.contract.find import discover, shipped_contracts_dir

    project = tmp_path / "proj"
    small_contract(project / "shape" / "x.toml")
    (project / "pyproject.toml").write_text('[tool.shapecheck]\ncontracts = ["shape"]\n')
    (project / "src").mkdir()
    files = contract_files([], project / "src")
    shipped = {p.resolve() for p in discover([shipped_contracts_dir()])}
    assert {f.resolve() for f in files} == shipped | {(project / "shape" / "x.toml").resolve()}
    # outside the working directory: absolute
    assert contract_files(["../shape"], project / "src") == [(project / "shape" / "x.toml").resolve()]
    assert contract_files(["shape"], project) == [Path("shape/x.toml")]
    (project / "pyproject.toml").write_text('[tool.shapecheck]\ncontracts = "shape"\n')
    with pytest.raises(UserError, match="pyproject.toml"):
        contract_files([], project)
    (project / "pyproject.toml").write_text('[tool.shapecheck]\ncontracts = ["nowhere"]\n')
    with pytest.raises(UserError, match="nowhere"):
        contract_files([], project)


def test_meta_source_without_the_op_checks_the_installed_kernel_and_says_so(tmp_path):
    from shapecheck.render import ci as ci_report

    other = tmp_path / "other_registrations.py"
    other.write_text("@register_meta([aten.some_other_op])\ndef meta_some_other_op(x):\n    return x\n")
    result = gate_run([small_contract(tmp_path / "c.toml")], source=MetaSource(str(other)))
    (run,) = result.runs
    assert result.exit_code == 0 and "installed torch" in run.report.kernel
    assert "registers no meta kernel" in run.kernel_note
    assert "registers no meta kernel" in ci_report.render_text(result, ROOT)


@pytest.mark.slow
def test_explore_runs_every_case_in_full(tmp_path):
    result = gate_run([small_contract(tmp_path / "c.toml")], explore=True)
    (run,) = result.runs
    assert result.exit_code == 0 and [c.case for c in run.report.cases] == [CASE4]


class FakeTTY(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_shows_on_a_terminal_after_a_second_only(monkeypatch):
    from shapecheck.cli.gate import Progress

    now = [0.0]
    monkeypatch.delenv("CI", raising=False)
    for tty, ci, shown in ((True, None, True), (False, None, False), (True, "true", False), (True, "false", True),
                           (True, "0", True), (True, "1", False)):
        if ci:
            monkeypatch.setenv("CI", ci)
        stream = FakeTTY(tty)
        p = Progress(stream, clock=lambda: now[0])
        p(1, 40, "early")
        assert stream.getvalue() == ""  # nothing in the first second
        now[0] += 1.5
        p(12, 40, "aten::op case")
        assert ("gate: 12/40 cases" in stream.getvalue()) is shown
        p.close()
        assert stream.getvalue().endswith("\r\x1b[K") is shown


def test_progress_in_a_log_is_a_plain_line_a_minute_once_a_run_has_taken_a_minute(monkeypatch):
    from shapecheck.cli.gate import Progress

    now = [0.0]
    monkeypatch.setenv("CI", "true")
    stream = FakeTTY(False)
    p = Progress(stream, clock=lambda: now[0], name="verify", plain=60.0)
    p(1, 18, "case a")
    now[0] = 59.0
    p(2, 18, "case b")
    assert stream.getvalue() == ""  # nothing in the first minute
    now[0] = 61.0
    p(3, 18, "case c")
    now[0] = 100.0
    p(4, 18, "case d")  # 39 s after the last line: none
    now[0] = 125.0
    p(5, 18, "case e")
    assert stream.getvalue().splitlines() == ["verify: 3/18 cases after 61s  case c", "verify: 5/18 cases after 125s  case e"]
    p.close()
    assert "\r" not in stream.getvalue()


def test_ci_files_call_the_gate_with_options_it_has():
    from shapecheck.cli.gate import gate

    hook = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "id: shapecheck-gate" in hook and "entry: shapecheck gate" in hook
    assert re.search(r"pass_filenames: false", hook) and "language: system" in hook
    lines = (ROOT / "docs" / "github-actions.yml").read_text().splitlines()
    start = next(i for i, t in enumerate(lines) if "shapecheck gate" in t and "name:" not in t)
    command = []
    for t in lines[start:]:
        if t.strip().startswith("- "):
            break
        command.append(t.strip())
    args = shlex.split(" ".join(command).replace("${{ matrix.shard }}", "1"))
    assert args[:2] == ["shapecheck", "gate"]
    ctx = gate.make_context("gate", args[2:])
    assert ctx.params["shard"] == (1, 2) and ctx.params["fmt"] == "github" and ctx.params["sarif"]


@pytest.mark.slow
def test_a_contract_whose_op_is_unknown_is_reported_and_the_others_still_run(tmp_path):
    """A mixed set: one contract names an op no import registered; it is that contract's error (exit 2 overall,
    in every format) while the other contract is verified and reported."""
    good = small_contract(tmp_path / "contracts" / "sdpa.toml")
    text = good.read_text().replace('op = "aten::_scaled_dot_product_attention_math_for_mps"',
                                    'op = "mylib::not_imported"', 1)
    assert text != good.read_text()
    (tmp_path / "contracts" / "mylib.toml").write_text(text)
    files = {k: tmp_path / f"out.{k}" for k in ("junit", "sarif", "json")}
    res = invoke("gate", tmp_path / "contracts", "-j", "1", "--format", "github",
                 *(a for k, f in files.items() for a in ("--output", f"{k}={f}")))
    assert res.returncode == 2, res.stderr
    assert any(line.startswith("::error") and "mylib::not_imported" in line for line in res.stdout.splitlines())
    assert f"PASS: {SDPA_MPS}" in res.stdout and "1 not run (bad input)" in res.stdout
    doc = json.loads(files["json"].read_text())
    assert doc["exit_code"] == 2 and doc["summary"]["not_run"] == 1
    by_op = {r["op"]: r for r in doc["reports"]}
    assert by_op[SDPA_MPS]["verdict"] == "pass" and "unknown op" in by_op["mylib::not_imported"]["error"]
    sarif = json.loads(files["sarif"].read_text())
    check_sarif(sarif)
    inv = sarif["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False and inv["exitCode"] == 2
    assert any(n["level"] == "error" and "mylib::not_imported" in n["message"]["text"]
               for n in inv["toolExecutionNotifications"])
    suites = ET.parse(files["junit"]).getroot()
    assert suites.get("errors") == "1"


def test_verify_progress_counts_a_second_pass_for_plain_fake_tensor_modes_kernel_as_one(monkeypatch):
    """Where plain FakeTensorMode runs another kernel, each case runs twice: the line read "verify: 4/2 cases"
    (hunt 49); the second pass counts from 1 again and says which kernel it is."""
    from types import SimpleNamespace

    from shapecheck.cli import gate as gate_cli
    from shapecheck.cli.main import _progress

    shown, closed = [], []

    class Recorder:
        def __init__(self, *args, **kwargs):
            pass

        def __call__(self, done, total, label):
            shown.append((done, total, label))

        def close(self):
            closed.append(len(shown))

    monkeypatch.setattr(gate_cli, "Progress", Recorder)
    contract = SimpleNamespace(cases=lambda: [SimpleNamespace(id="a"), SimpleNamespace(id="b")])
    on_case = _progress(contract, SimpleNamespace(cases=()))
    for case in ("a", "b", "a", "b"):
        on_case(case)
    assert [(d, t) for d, t, _ in shown] == [(1, 2), (2, 2), (1, 2), (2, 2)]
    assert shown[2][2] == "a (plain FakeTensorMode's kernel)" and closed == [2, 4]
