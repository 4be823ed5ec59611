"""Fuzzing against the SDPA-MPS contract and metal_ref: the installed kernel passes seeded runs, a mutant wrong
only when S != Ev is found and shrunk, a guard-only mutant passes fuzzing while verify fails it, and the pytest
entry points, the CLI and a contract for another op work."""

import json
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner
from hypothesis import settings

from shapecheck.cli.main import cli, main
from shapecheck.prove.verify import Options, verify_op
from shapecheck.pytest_entry import fuzz_given, fuzz_test
from shapecheck.runtime.fuzz import FuzzOptions, MetaShapeFailure, check_examples, fuzz_op
from shapecheck.search.strategies import Example
from tests.conftest import KERNELS, SDPA_MPS
from tests.unit.test_strategies import toy_contract_file

MUTANTS = KERNELS / "fuzz_mutants.py"
WRONG_EV = f"{MUTANTS}:output0_uses_key_length"
GUARD_ONLY = f"{MUTANTS}:branches_on_query_length"
FIXED = f"{KERNELS / 'sdpa_kernels.py'}:fixed"


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_installed_kernel_passes_a_seeded_run_against_the_march_runtime():
    r = fuzz_op(SDPA_MPS, options=FuzzOptions(examples=250, seed=20260301, eras=("2026-03",), verify_examples=False))
    assert r.verdict == "pass", r.failures
    assert r.examples >= 250 and r.exit_code == 0
    assert set(r.paths) == {"general@2026-03", "vector-1pass@2026-03", "vector-2pass@2026-03"}
    assert r.reference.startswith("metal_ref")
    # no "fake" timing: torch.export and plain FakeTensorMode run the same kernel for this op
    assert set(r.timings) >= {"generation", "meta", "metal_ref", "math"} and "fake" not in r.timings


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_installed_kernel_passes_a_seeded_run_against_both_runtimes():
    r = fuzz_op(SDPA_MPS, options=FuzzOptions(examples=300, seed=20260302, verify_examples=False))
    assert r.verdict == "pass", r.failures
    assert {p.split("@")[1] for p in r.paths} == {"2026-03", "current"}
    assert {"prefill@current", "vector-2pass@current"} <= set(r.paths)


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_accepted_runtime_deviation_is_a_note(tmp_path):
    """The shipped contract accepts (a [[suppress]] of SC011) that today's chunked path returns a 4-D output 0 for
    a 3-D query: fuzzing reports it as a note, not a failure."""
    r = fuzz_op(SDPA_MPS, options=FuzzOptions(examples=40, seed=5, eras=("current",), path="general-chunked@current",
                                              cases=("rank=3,mask=none",), verify_examples=False))
    assert r.verdict == "pass", r.failures
    assert any("accepted by the contract's [[suppress]] (SC011)" in n for n in r.notes)


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_finds_that_the_current_chunked_path_returns_a_4d_output_for_a_3d_query(tmp_path):
    """A finding, not a fixture: metal_ref's port of the chunked MPSGraph path (Attention.mm @ 00a5f92, by reading)
    does not reshape output 0 back, so a 3-D fp16 query with L > 3068 gets (1, H, L, Ev) from the runtime while
    the installed meta kernel (and the contract) say (H, L, Ev). Verify cannot see this; fuzzing does. Without
    the contract's suppression it is a failure."""
    import re

    from tests.conftest import SDPA_CONTRACT

    stripped = tmp_path / "c.toml"
    stripped.write_text(re.sub(r"\n\[\[suppress\]\]\n(?:[^\[\n][^\n]*\n)*", "\n", SDPA_CONTRACT.read_text()))
    r = fuzz_op(SDPA_MPS, contract=str(stripped),
                options=FuzzOptions(examples=40, seed=5, eras=("current",), path="general-chunked@current",
                                    cases=("rank=3,mask=none",), verify_examples=False))
    assert r.verdict == "fail"
    (f,) = r.failures
    assert f.check == "runtime" and f.code == "SC011" and f.runtime_paths == {"current": "general_chunked"}
    assert f.dims["L"] == 3069 and all(v == 1 for k, v in f.dims.items() if k != "L")  # shrunk to the minimum
    assert f.expected.startswith("(1, 1, 3069, 1)") and f.got.startswith("(1, 3069, 1)")


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_mutant_wrong_only_when_S_differs_from_Ev_is_found_and_shrunk():
    r = fuzz_op(SDPA_MPS, meta=WRONG_EV, options=FuzzOptions(examples=300, seed=11, verify_examples=False))
    assert r.verdict == "fail" and r.exit_code == 1
    (f,) = r.failures
    assert f.check == "meta-shape"
    assert f.dims["S"] != f.dims["Ev"]
    assert max(f.dims.values()) <= 2 and sum(f.dims.values()) == len(f.dims) + 1  # one dim is 2, the rest 1
    assert f"--example '{f.example}'" in f.replay and f"--meta {WRONG_EV}" in f.replay
    again = check_examples(SDPA_MPS, [f.example], meta=WRONG_EV)
    assert again.verdict == "fail" and again.failures[0].dims == f.dims
    assert check_examples(SDPA_MPS, [f.example], meta=FIXED).verdict == "pass"


@pytest.mark.slow
def test_guard_only_mutant_fails_fuzzing_on_its_guard_as_verify_does():
    """A kernel that branches on L <= 8 but is right on both sides: the fuzzer runs it as torch.export does
    (backed sizes at each example), so the branch is a guard on L at every example (check 'guard', SC001), and
    verify proves it with L = 9."""
    case = "rank=4,mask=none,is_causal=false,dtype=float32,enable_gqa=false"
    r = fuzz_op(SDPA_MPS, meta=GUARD_ONLY, options=FuzzOptions(examples=100, seed=7, cases=(case,)))
    assert r.verdict == "fail" and r.failures
    assert {(f.check, f.code) for f in r.failures} == {("guard", "SC001")}, r.failures
    v = verify_op(SDPA_MPS, meta=GUARD_ONLY, options=Options(cases=(case,)))
    l8 = [x for x in v.violations if x.code == "SC001" and x.dims == ("L",)]
    assert v.verdict.value == "fail" and l8 and l8[0].counterexample["L"] == 9


@pytest.mark.slow
def test_other_ops_get_shape_checks_and_their_own_eager_kernel_as_reference(tmp_path):
    toy = str(toy_contract_file())
    r = fuzz_op("aten::mm", contract=toy, options=FuzzOptions(examples=60, seed=1, max_elements=4096))
    assert r.verdict == "pass" and r.reference == "the op's eager kernel on cpu"
    assert set(r.paths) == {"small@default", "large@default"}
    bad = tmp_path / "mm_meta.py"
    bad.write_text("def mm(self, mat2):\n    return self.new_empty((self.shape[0], self.shape[1]))\n")
    r = fuzz_op("aten::mm", contract=toy, meta=f"{bad}:mm", options=FuzzOptions(examples=100, seed=1,
                                                                             max_elements=4096))
    (f,) = r.failures
    assert f.check == "meta-shape" and f.dims["N"] != f.dims["K"] and f.dims["K"] == 8  # smallest K % 8 == 0


# ---------------------------------------------------------------------------------------------------------
# pytest entry points


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_fuzz_test_returns_a_hypothesis_test_that_finds_the_mutant():
    t = fuzz_test(SDPA_MPS, meta=WRONG_EV, verify_examples=False)
    assert t.__name__ == "test_shapes" and getattr(t, "is_hypothesis_test", False)
    with pytest.raises(MetaShapeFailure) as info:
        settings(max_examples=100, database=None, deadline=None)(t)(op=SDPA_MPS)
    assert info.value.failure.dims["S"] != info.value.failure.dims["Ev"]
    ok = fuzz_test(SDPA_MPS, meta=FIXED, eras=("2026-03",), verify_examples=False)
    settings(max_examples=30, database=None, deadline=None)(ok)(op=SDPA_MPS)


@pytest.mark.slow
def test_fuzz_given_runs_the_decorated_checks_and_takes_explicit_examples_from_a_verify_report(tmp_path):
    case = "rank=4,mask=none,is_causal=false,dtype=float32,enable_gqa=false"
    report = tmp_path / "verify.json"
    r = CliRunner().invoke(cli, ["verify", "op", SDPA_MPS, "--meta", GUARD_ONLY, "--case", case, "--format", "json"])
    report.write_text(r.output)
    seen = []

    # the decorated test runs the fixed kernel (the mutant's guard fails every example) with the mutant's
    # counterexamples
    @fuzz_given(SDPA_MPS, meta=FIXED, cases=(case,), from_verify=str(report))
    def test_mine(example):
        seen.append(example)

    assert test_mine.__name__ == "test_mine"
    settings(max_examples=20, database=None, deadline=None)(test_mine)(op=SDPA_MPS)
    assert seen and all(isinstance(e, Example) and e.case.id == case for e in seen)
    assert any(e.values["L"] == 9 for e in seen)  # verify's counterexample was retried


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_a_project_can_collect_fuzz_test_in_its_own_pytest_run(tmp_path):
    (tmp_path / "test_project.py").write_text(textwrap.dedent(f"""
        from hypothesis import settings
        import shapecheck

        test_sdpa = settings(max_examples=15, deadline=None)(
            shapecheck.fuzz_test("{SDPA_MPS}", meta="{FIXED}", eras=["2026-03"], verify_examples=False))
    """))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0 and "1 passed" in out.stdout, out.stdout + out.stderr


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_collection_does_no_work_names_read_well_and_failures_lead_with_the_finding(tmp_path):
    """An op nobody can load collects fine (nothing runs at collection) and only fails when run; the test id
    names the op; a failing kernel's report starts with the finding, with no shapecheck frame shown."""
    (tmp_path / "test_project.py").write_text(textwrap.dedent(f"""
        from hypothesis import settings
        import shapecheck

        test_later = shapecheck.fuzz_test("mylib::not_loaded_yet")
        test_wrong = settings(max_examples=30, deadline=None, database=None)(
            shapecheck.fuzz_test("{SDPA_MPS}", meta="{WRONG_EV}", verify_examples=False))
    """))
    run = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(tmp_path / "test_project.py")]
    listed = subprocess.run([*run, "--collect-only", "-q"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert f"test_project.py::test_wrong[{SDPA_MPS}]" in listed.stdout
    assert "test_project.py::test_later[mylib::not_loaded_yet]" in listed.stdout
    out = subprocess.run([*run, "-q", "-k", "wrong"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 1, out.stdout + out.stderr
    errors = [line for line in out.stdout.splitlines() if line.startswith("E ")]
    assert errors and errors[0].startswith("E       shapecheck.runtime.fuzz_report.MetaShapeFailure: meta-shape (SC002)")
    frames = [line for line in out.stdout.splitlines() if ".py:" in line and ": in " in line]
    assert not any("shapecheck/" in line for line in frames), frames  # no traceback entry inside shapecheck
    assert len(out.stdout.splitlines()) < 60  # (Hypothesis adds a reproduce_failure blob under CI)


# ---------------------------------------------------------------------------------------------------------
# CLI


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_cli_reports_a_shrunk_failure_with_a_replay_command_that_replays_it():
    args = ["fuzz", "op", SDPA_MPS, "--meta", WRONG_EV, "--examples", "100", "--seed", "3", "--no-verify-examples"]
    r = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert r.exit_code == 1, r.output
    data = json.loads(r.output)
    assert data["verdict"] == "fail" and data["seed"] == 3 and data["examples_per_second"] > 0
    (f,) = data["failures"]
    assert f["check"] == "meta-shape" and f["dims"]["S"] != f["dims"]["Ev"]
    assert "--seed 3" in data["replay"]
    text = CliRunner().invoke(cli, args)
    assert text.exit_code == 1 and text.output.startswith("FAIL: ") and "replay:" in text.output
    replay = CliRunner().invoke(cli, ["fuzz", "op", SDPA_MPS, "--meta", WRONG_EV, "--example", f["example"]])
    assert replay.exit_code == 1 and f["example"] in replay.output
    fixed = CliRunner().invoke(cli, ["fuzz", "op", SDPA_MPS, "--meta", FIXED, "--example", f["example"]])
    assert fixed.exit_code == 0 and fixed.output.startswith("PASS: ")


@pytest.mark.slow
@pytest.mark.parametrize("extra", [
    ["--example", "rank=4,mask=none,is_causal=false,dtype=float32,enable_gqa=false;B=1,H=2,Hk=1,L=1,S=1,E=1,Ev=1"],
    ["--path", "no-such-path"],
    ["--era", "1999-01"],
])
def test_cli_bad_input_exits_2_with_one_line(extra, capsys):
    with pytest.raises(SystemExit) as info:
        main(["fuzz", "op", SDPA_MPS, "--examples", "5", "--no-verify-examples", *extra])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("shapecheck: error")
