"""No crash loses a run (issue 22 item 3): a bug in one case is that case's SC023 finding (exit 4) and the other
cases still report; ``--timeout`` per case and per run cuts the run short as inconclusive (exit 3) with the
cases done; ``SHAPECHECK_DEBUG=1``/``--debug`` prints the traceback; the default mode's case-region shortcut
never traces a case under another case's dims (the KeyError 'K' of issue 22, reproduced here)."""

from __future__ import annotations

import contextlib
import io
import json
import time

import pytest

from tests.conftest import KERNELS, ROOT

CONTRACT = str(KERNELS / "shared_guard.toml")
KERNEL = str(KERNELS / "shared_guard.py")
CASES = ["rank=3,dtype=float32", "rank=3,dtype=float16", "rank=2,dtype=float32", "rank=2,dtype=float16"]


def verify(monkeypatch, kernel: str, *extra: str) -> tuple[int, dict, str]:
    """``shapecheck verify op aten::new_empty`` on shared_guard.toml in this process: (exit, JSON, stderr)."""
    from shapecheck.cli.main import main

    monkeypatch.chdir(ROOT)
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["verify", "op", "aten::new_empty", "--contract", CONTRACT, "--meta", f"{KERNEL}:{kernel}",
                  "--format", "json", "-j", "1", *extra])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    return code, json.loads(out.getvalue()), err.getvalue()


@pytest.mark.slow
def test_cases_with_other_dims_never_reuse_a_case_s_regions(monkeypatch):
    """The rank-3 case's regions name K, which the rank-2 cases lack: before the fix the default mode traced a
    rank-2 case under them and died with KeyError 'K', losing every case. Now a rank-2 case shares only a
    rank-2 case's regions, and the verdicts are --full's."""
    code, doc, err = verify(monkeypatch, "branches_first_on_n")
    assert code == 1, err
    assert [c["case"] for c in doc["cases"]] == CASES
    assert {v["code"] for v in doc["violations"]} == {"SC001"}
    shared = {c["case"]: c["shared_with"] for c in doc["cases"]}
    assert shared == {CASES[0]: None, CASES[1]: CASES[0], CASES[2]: None, CASES[3]: CASES[2]}
    full_code, full, _ = verify(monkeypatch, "branches_first_on_n", "--full")
    assert full_code == code
    assert {c["case"]: c["verdict"] for c in full["cases"]} == {c["case"]: c["verdict"] for c in doc["cases"]}
    assert {(v["case"], v["expr"]) for v in doc["violations"]} <= {(v["case"], v["expr"]) for v in full["violations"]}


def _plant_bug(monkeypatch, in_case: str):
    from shapecheck.prove import verify as V

    real = V.output_obligations

    def buggy(case, *args, **kw):
        if case.id == in_case:
            {}["K"]  # a bug in shapecheck, as in issue 22
        return real(case, *args, **kw)

    monkeypatch.setattr(V, "output_obligations", buggy)


@pytest.mark.slow
def test_a_bug_in_one_case_is_its_sc022_finding_and_the_others_report(monkeypatch):
    monkeypatch.delenv("SHAPECHECK_DEBUG", raising=False)
    _plant_bug(monkeypatch, CASES[2])
    code, doc, err = verify(monkeypatch, "guard_free")
    assert code == 4
    assert doc["verdict"] == "error"
    verdicts = {c["case"]: c["verdict"] for c in doc["cases"]}
    assert verdicts == {CASES[0]: "pass", CASES[1]: "pass", CASES[2]: "error", CASES[3]: "pass"}
    [bug] = doc["violations"]
    assert (bug["code"], bug["kind"], bug["case"]) == ("SC023", "internal-error", CASES[2])
    assert "KeyError: 'K'" in bug["message"] and "SHAPECHECK_DEBUG=1" in bug["message"]
    assert bug["traceback"].startswith("Traceback") and "buggy" in bug["traceback"]
    assert "Traceback" not in err


@pytest.mark.slow
def test_debug_prints_the_traceback_of_a_case_s_internal_error(monkeypatch):
    _plant_bug(monkeypatch, CASES[0])
    monkeypatch.setenv("SHAPECHECK_DEBUG", "")  # --debug sets it in this process: put back after the test
    code, doc, err = verify(monkeypatch, "guard_free", "--debug")
    assert code == 4
    assert f"internal error in case {CASES[0]}" in err and "Traceback" in err and "KeyError: 'K'" in err


@pytest.mark.slow
def test_a_run_wide_internal_error_says_how_to_see_the_traceback(monkeypatch):
    from shapecheck.prove import verify as V

    def boom(*args, **kw):
        raise RuntimeError("planted")

    monkeypatch.setattr(V, "make_solver", boom)
    monkeypatch.delenv("SHAPECHECK_DEBUG", raising=False)
    # no report of cases (the run died before any): the error report --format json asks for, on stdout
    code, doc, _ = verify(monkeypatch, "guard_free")
    assert code == 4 and doc["verdict"] == "error" and doc["exit_code"] == 4 and "planted" in doc["error"]
    from shapecheck.cli.main import main

    for env, traceback in (("", False), ("1", True)):
        monkeypatch.setenv("SHAPECHECK_DEBUG", env)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
                pytest.raises(SystemExit) as exit_:
            main(["verify", "op", "aten::new_empty", "--contract", CONTRACT, "--meta", f"{KERNEL}:guard_free"])
        assert exit_.value.code == 4
        assert "RuntimeError: planted" in err.getvalue()
        assert ("Traceback" in err.getvalue()) is traceback
        assert ("SHAPECHECK_DEBUG=1 or --debug prints the traceback" in err.getvalue()) is not traceback


def _plant_hang(monkeypatch, in_case: str):
    """The case's every trace hangs (sleeps until the time budget stops it)."""
    from shapecheck.prove import explore as X

    real = X.trace_case

    def hanging(kernel, case, *args, **kw):
        while case.id == in_case:
            time.sleep(0.05)
        return real(kernel, case, *args, **kw)

    monkeypatch.setattr(X, "trace_case", hanging)


@pytest.mark.slow
def test_a_case_over_its_time_budget_is_inconclusive_and_the_others_report(monkeypatch):
    _plant_hang(monkeypatch, CASES[1])
    code, doc, _ = verify(monkeypatch, "guard_free", "--timeout", "3")
    assert code == 3
    verdicts = {c["case"]: c["verdict"] for c in doc["cases"]}
    assert verdicts == {CASES[0]: "pass", CASES[1]: "inconclusive", CASES[2]: "pass", CASES[3]: "pass"}
    [late] = doc["violations"]
    assert (late["code"], late["case"]) == ("SC005", CASES[1])
    assert "case's time budget (3 s, --timeout)" in late["message"]


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_a_run_over_its_time_budget_reports_the_cases_done(monkeypatch):
    _plant_hang(monkeypatch, CASES[1])
    code, doc, _ = verify(monkeypatch, "guard_free", "--timeout", "run=6")
    assert code == 3
    cases = {c["case"]: c for c in doc["cases"]}
    assert list(cases) == CASES
    assert cases[CASES[0]]["verdict"] == "pass" and not cases[CASES[0]]["skipped"]
    assert cases[CASES[1]]["verdict"] == "inconclusive" and cases[CASES[1]]["skipped"].startswith("cut short")
    for later in CASES[2:]:
        assert cases[later]["verdict"] == "inconclusive" and cases[later]["skipped"].startswith("not checked")
    messages = {v["case"]: v["message"] for v in doc["violations"]}
    assert "run's time budget (6 s" in messages[CASES[1]]
    assert "ran out after 2 of 4 cases" in messages["*"]
    # the run's budget was this command's: a next command in this process (an audit's import) does not inherit it
    from shapecheck import progress

    assert progress.load_seconds is None


@pytest.mark.slow
def test_a_violation_found_before_the_budget_ran_out_still_fails_the_run(monkeypatch):
    """A counterexample is real whatever the clock says: the run fails (exit 1), the late case inconclusive."""
    _plant_hang(monkeypatch, CASES[3])
    code, doc, _ = verify(monkeypatch, "branches_first_on_n", "--timeout", "case=3")
    assert code == 1
    assert doc["cases"][3]["verdict"] == "inconclusive"


@pytest.mark.parametrize("value", ["0", "-1", "case=", "walltime=3", "run=x"])
def test_a_bad_timeout_is_a_usage_error(monkeypatch, value):
    from shapecheck.cli.main import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_:
        main(["verify", "op", "aten::new_empty", "--timeout", value])
    assert exit_.value.code == 2
    assert "--timeout" in err.getvalue()


def test_the_timer_never_cuts_an_import(tmp_path, monkeypatch):
    """A module cut halfway stays half-made in sys.modules (torch imports torch._dynamo's parts on first use):
    every later case then failed on a name the module lacked, an internal error (SC023) instead of SC005."""
    import sys

    from shapecheck.prove import budget

    (tmp_path / "sc_half_made.py").write_text("import sys\nfrom shapecheck.prove import budget\n"
                                              "INSIDE = budget._in_solver(sys._getframe())\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import sc_half_made  # noqa: F401 - the module records what the timer would see during its import

    assert sys.modules["sc_half_made"].INSIDE is True
    assert budget._in_solver(sys._getframe()) is False  # a case's own code is cut as before


@pytest.mark.slow
def test_a_tiny_case_budget_in_a_cold_process_is_inconclusive_never_an_internal_error():
    """A fresh process imports much of torch during its first cases: a budget that runs out there cuts the
    case, as any other, and the other cases still report (the process boundary is the point: cold imports)."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "shapecheck", "verify", "op", "aten::new_empty", "--contract",
                          CONTRACT, "--meta", f"{KERNEL}:guard_free", "--format", "json", "-j", "1",
                          "--timeout", "0.2", "--no-cache"], capture_output=True, text=True, cwd=ROOT)
    doc = json.loads(res.stdout)
    assert res.returncode in (0, 3), res.stderr[-2000:]
    assert {v["code"] for v in doc["violations"]} <= {"SC005"}
    assert all(c["verdict"] in ("pass", "inconclusive") for c in doc["cases"])


@pytest.mark.slow
@pytest.mark.parametrize("swallowed", [False, True])
def test_a_timer_exception_torch_turns_into_its_own_still_cuts_the_case_short(monkeypatch, swallowed):
    """Raised inside a Python function that torch's C++ calls (a SymInt's is_int while torch parses arguments),
    the timer's OverBudget comes out as torch's RuntimeError; a kernel may even swallow it. Either way the case is
    over its budget (SC005, exit 3): never an internal error (SC023), never the kernel's failure."""
    from shapecheck.prove import budget
    from shapecheck.prove import explore as X

    real = X.trace_case

    def converting(kernel, case, *args, **kw):
        if case.id == CASES[1]:
            try:
                while True:
                    time.sleep(0.05)
            except budget.OverBudget as over:
                if not swallowed:
                    raise RuntimeError(f"aten::empty() Expected a value ... Python error details: {over}") from None
        return real(kernel, case, *args, **kw)

    monkeypatch.setattr(X, "trace_case", converting)
    code, doc, _ = verify(monkeypatch, "guard_free", "--timeout", "2")
    assert code == 3
    verdicts = {c["case"]: c["verdict"] for c in doc["cases"]}
    assert verdicts == {CASES[0]: "pass", CASES[1]: "inconclusive", CASES[2]: "pass", CASES[3]: "pass"}
    assert [(v["code"], v["case"]) for v in doc["violations"]] == [("SC005", CASES[1])]


def _plant_bounded_hang(monkeypatch, where: str, seconds: float = 60.0) -> None:
    """Every trace of a case whose id contains ``where`` hangs for ``seconds`` (bounded, so that a run that
    ignores its budget shows as slow instead of never ending), in this process and in forked workers alike."""
    from shapecheck.prove import explore as X
    from shapecheck.trace import parallel

    real = X.trace_case

    def hanging(kernel, case, *args, **kw):
        if where in case.id:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                time.sleep(0.05)
        return real(kernel, case, *args, **kw)

    monkeypatch.setattr(X, "trace_case", hanging)
    monkeypatch.setattr(parallel, "trace_case", hanging)


needs_fork = pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="--jobs > 1 needs os.fork (POSIX)")
# 12 cases of the SDPA-MPS contract: enough for the workers to start (parallel.MIN_CASES)
MIXED = ("mask=bool,is_causal=false,dtype=float32", "mask=none,is_causal=true,dtype=float16")


@needs_fork
@pytest.mark.slow
@pytest.mark.parametrize("full", [False, True])
def test_with_jobs_a_hanging_case_is_cut_short_by_its_budget_in_the_workers(monkeypatch, full):
    """With --jobs the cases' first traces (or, with --full, whole cases) run ahead in forked workers: a case
    that hangs there is cut short by its own budget, once, and the run ends (it hung forever before). The budget
    leaves room for a loaded CI machine: at 2 s a rank-5 case with --full was cut short too."""
    from shapecheck.prove.verify import Options, verify_op
    from tests.conftest import SDPA_MPS

    _plant_bounded_hang(monkeypatch, "rank=4")
    start = time.monotonic()
    report = verify_op(SDPA_MPS, options=Options(cases=MIXED, jobs=2, budget=(("case", 6.0),), full=full))
    took = time.monotonic() - start
    cut = {r.case for r in report.cases if r.skipped.startswith("cut short")}
    assert cut == {r.case for r in report.cases if "rank=4" in r.case} and len(cut) == 4
    assert all(r.verdict.value == "pass" for r in report.cases if r.case not in cut)
    assert report.verdict.value == "inconclusive"
    assert took < 50, f"{took:.0f} s: a hanging case ran past its 6 s budget"


@needs_fork
@pytest.mark.slow
def test_with_jobs_a_run_budget_ends_the_run_while_the_workers_hang(monkeypatch):
    from shapecheck.prove.verify import Options, verify_op
    from tests.conftest import SDPA_MPS

    _plant_bounded_hang(monkeypatch, "is_causal")
    start = time.monotonic()
    report = verify_op(SDPA_MPS, options=Options(cases=MIXED, jobs=2, budget=(("run", 6.0),)))
    took = time.monotonic() - start
    assert took < 30, f"{took:.0f} s: the run went on past its 6 s budget"
    assert report.verdict.value == "inconclusive"
    assert all(r.verdict.value == "inconclusive" for r in report.cases if "is_causal=true" in r.case)
    assert any("run's time budget (6 s" in v.message for v in report.violations)


def _verify_in_a_process(*extra: str, env: dict | None = None, fn: str = "segfaults_when_causal") -> tuple[int, dict, str]:
    """``shapecheck verify op`` of the crashing kernel in a fresh process: a crash that isolation misses must
    not take the test run with it (the process boundary is the point)."""
    import os
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "shapecheck", "verify", "op", "aten::_scaled_dot_product_attention_math_for_mps",
                          "--meta", f"{KERNELS / 'crashing.py'}:{fn}", "--format", "json", "--no-cache",
                          *[a for c in MIXED for a in ("--case", c)], *extra],
                         capture_output=True, text=True, cwd=ROOT, env={**os.environ, **(env or {})})
    return res.returncode, json.loads(res.stdout) if res.stdout.startswith("{") else {}, res.stderr


@needs_fork
@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_kernel_that_crashes_its_process_costs_only_its_cases(jobs):
    """A kernel that dies of SIGSEGV (a C++ kernel's bug) killed the run with exit 139 and no report. Now each
    crash is its case's SC007 at the kernel's line, the other cases report, and the report is one for any -j."""
    code, doc, err = _verify_in_a_process("-j", jobs)
    assert code == 1, err[-2000:]
    causal = {c["case"] for c in doc["cases"] if "is_causal=true" in c["case"] and not (c["skipped"] or "").startswith("the kernel takes")}
    crashed = {c["case"]: c for c in doc["cases"] if (c["skipped"] or "").startswith("crashed")}
    assert set(crashed) == causal and len(causal) == 6
    assert all(c["verdict"] == "fail" and "SIGSEGV" in c["skipped"] for c in crashed.values())
    others = [c for c in doc["cases"] if c["case"] not in crashed and not (c["skipped"] or "")]
    assert len(others) == 6 and all(c["verdict"] == "pass" for c in others)
    [code7] = {(v["code"], v["expr"], v["location"]["line"]) for v in doc["violations"]}
    assert code7 == ("SC007", "SIGSEGV", 12)  # crashing.py's ctypes line
    assert {v["case"] for v in doc["violations"]} == causal


@needs_fork
@pytest.mark.slow
def test_a_crash_finding_names_the_region_whose_trace_crashed():
    """A kernel that crashes only where L <= 8: the case's first trace stops at that guard, and the crash comes
    while the region L <= 8 is traced. The finding says so: where in the case to look, not only which case.
    Every case crashes here, and the run is a fail (exit 1, its SC007s), not inconclusive as it was."""
    code, doc, err = _verify_in_a_process("-j", "1", fn="segfaults_when_short")
    assert code == 1 and doc["verdict"] == "fail", err[-2000:]
    assert len(doc["cases"]) == 12 and all(c["skipped"].startswith("crashed") for c in doc["cases"])
    crashes = doc["violations"]
    assert {(v["code"], v["expr"], v["location"]["line"]) for v in crashes} == {("SC007", "SIGSEGV", 20)}
    assert all("tracing the kernel on the region L <= 8:" in v["message"] for v in crashes), crashes[0]["message"]


@needs_fork
@pytest.mark.slow
def test_shapecheck_isolate_0_runs_in_one_process_as_before():
    code, _, _ = _verify_in_a_process("-j", "1", "--case", "is_causal=true", env={"SHAPECHECK_ISOLATE": "0"})
    assert code == -11  # the documented way to debug the crash: it is the process's own again


@needs_fork
@pytest.mark.slow
def test_fuzz_stops_at_the_example_a_crashing_kernel_dies_on_and_names_it():
    """fuzz op on a kernel that dies of SIGSEGV on the causal cases: exit 1 with the example as an SC007 failure
    and a replay command that gives the same failure (it was exit 139 and no report)."""
    import os
    import subprocess
    import sys

    def fuzz(*extra: str) -> tuple[int, dict]:
        res = subprocess.run([sys.executable, "-m", "shapecheck", "fuzz", "op", "aten::_scaled_dot_product_attention_math_for_mps",
                              "--meta", f"{KERNELS / 'crashing.py'}:segfaults_when_causal", "--format", "json",
                              "--case", "is_causal=true,dtype=float16", *extra],
                             capture_output=True, text=True, cwd=ROOT, env=dict(os.environ))
        assert res.stdout.startswith("{"), res.stderr[-2000:]
        return res.returncode, json.loads(res.stdout)

    code, doc = fuzz("--seed", "3", "--examples", "20")
    assert code == 1 and doc["verdict"] == "fail"
    [failure] = doc["failures"]
    assert failure["code"] == "SC007" and "SIGSEGV" in failure["got"] and "is_causal=true" in failure["case"]
    assert failure["dims"] and set(failure["dims"].values()) <= set(range(0, 1 << 20))
    assert "--example" in failure["replay"]
    again, doc2 = fuzz("--example", failure["example"])
    assert again == 1 and [(f["code"], f["example"]) for f in doc2["failures"]] == [("SC007", failure["example"])]


def test_every_error_of_shapecheck_survives_the_pipe_from_a_supervised_child():
    """A supervised child's error is pickled to the parent, which raises it: its class, message, notes and exit
    code must arrive (a TargetError once came back as a RuntimeError: exit 4 for bad input)."""
    import pickle

    from shapecheck import errors

    for name, cls in errors._BY_NAME.items():
        err = cls.__new__(cls)
        err.args = (f"bad {name}",)
        err.add_note("the child's traceback")
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is cls and back.args == err.args and back.__notes__ == ["the child's traceback"]
        assert back.exit_code == cls.exit_code


@needs_fork
@pytest.mark.slow
def test_ref_check_loses_only_the_input_an_eager_kernel_crashes_on(tmp_path):
    """A custom op whose C++-like eager kernel dies of SIGSEGV where W == 2: ref check died with exit 139 and no
    report. Now that input is an SC014 with its sizes, and the inputs after it ran in a new process."""
    import os
    import subprocess
    import sys

    from tests.kernels.crashing_ops import CONTRACT

    contract = tmp_path / "doubled.toml"
    contract.write_text(CONTRACT)
    res = subprocess.run([sys.executable, "-m", "shapecheck", "ref", "check", "sc_crash::doubled", "--import",
                          "tests.kernels.crashing_ops", "--contract", str(contract), "--examples", "24", "--format",
                          "json"], capture_output=True, text=True, cwd=ROOT, env=dict(os.environ))
    assert res.returncode == 1 and res.stdout.startswith("{"), res.stderr[-2000:]
    doc = json.loads(res.stdout)
    assert doc["verdict"] == "fail" and doc["paths"][0]["points"] == 24
    [crash] = doc["findings"]
    assert crash["code"] == "SC014" and crash["sizes"]["W"] == 2 and "SIGSEGV" in crash["message"]


@needs_fork
@pytest.mark.slow
def test_fuzz_blames_the_runtime_where_the_eager_kernel_crashes_not_the_meta_kernel(tmp_path):
    """hunt 59: an eager kernel's SIGFPE (_weight_norm_interface at a size of 0) was fuzz's SC007 of the meta
    kernel, which returns there; ``ref check`` says SC014, the runtime's, and so does fuzz now."""
    import os
    import subprocess
    import sys

    from tests.kernels.crashing_ops import CONTRACT

    contract = tmp_path / "doubled.toml"
    contract.write_text(CONTRACT)
    res = subprocess.run([sys.executable, "-m", "shapecheck", "fuzz", "op", "sc_crash::doubled", "--import",
                          "tests.kernels.crashing_ops", "--contract", str(contract), "--example", ";N=1,W=2;seed=0",
                          "--format", "json"], capture_output=True, text=True, cwd=ROOT, env=dict(os.environ))
    assert res.returncode == 1 and res.stdout.startswith("{"), res.stderr[-2000:]
    [failure] = json.loads(res.stdout)["failures"]
    assert failure["code"] == "SC014" and failure["check"] == "runtime" and "SIGSEGV" in failure["got"], failure
    assert "the runtime crashed the process" in failure["message"]


@needs_fork
@pytest.mark.slow
@pytest.mark.parametrize("command", ["verify", "fuzz"])
def test_a_kernel_file_that_crashes_as_it_loads_is_a_one_line_error_naming_its_line(tmp_path, command):
    """A --meta file that dies of SIGSEGV at import (as a C++ extension it loads may): verify died with exit
    139 and no word, fuzz with an internal error. Now both say which line crashed, exit 2: nothing was checked."""
    import os
    import subprocess
    import sys

    kernel = tmp_path / "crashes_at_import.py"
    kernel.write_text("import ctypes\n\nctypes.string_at(0)\n\n\ndef f(query, key, value, **kwargs):\n    return query\n")
    extra = ["--no-cache"] if command == "verify" else ["--examples", "3"]
    res = subprocess.run([sys.executable, "-m", "shapecheck", command, "op", "aten::_scaled_dot_product_attention_math_for_mps",
                          "--meta", f"{kernel}:f", *extra], capture_output=True, text=True, cwd=ROOT, env=dict(os.environ))
    assert res.returncode == 2, res.stderr[-2000:]
    [line] = res.stderr.strip().splitlines()
    assert line.startswith(f"shapecheck: error: {kernel}:3: the process died of SIGSEGV while the kernel was loaded")
