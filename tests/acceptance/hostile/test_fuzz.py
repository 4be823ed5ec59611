"""The hostile-input fuzzer: mutated contracts and generated expressions through ``contract check`` and
``verify op``, mutated ``pyproject.toml`` files through ``contract check`` and ``verify op``, and mutated gate
and audit baselines through ``gate`` and ``audit``, each run in a forked child under a deadline and a memory
cap (``harness``). Whatever the input: exit 0-3, never 4 (an internal error fails the test), no traceback, no
hang, exit 2 as one line naming the file at fault, and no code of the contract ever runs (``SENTINEL``).

CI runs a fixed, small number of examples (derandomised); ``SHAPECHECK_HOSTILE_EXAMPLES=5000`` runs that
many per test, randomly.
"""

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.acceptance.hostile.harness import judge, run
from tests.acceptance.hostile.inputs import (
    BASES,
    SENTINEL,
    expressions,
    hostile_baselines,
    hostile_configs,
    hostile_files,
    write_toml,
)
from tests.conftest import scratch

LONG = int(os.environ.get("SHAPECHECK_HOSTILE_EXAMPLES", "0"))
WORK = Path(scratch("shapecheck-hostile-"))
CONTRACT = WORK / "contract.toml"
PROJECT = WORK / "project"  # a pyproject.toml and what it names
BASELINE = WORK / "baseline.json"
#: every field an expression can be in, in the rows base: (table path, key)
FIELDS = (("paths", 0, "when"), ("domain", "requires", 0), ("domain", "exclude", 0), ("let", "rows"),
          ("let", "P", 1, "value"), ("args", 0, "shape"), ("args", 1, "value"), ("args", 2, "present"),
          ("paths", 0, "outputs", 0), ("paths", 0, "runtime_outputs", 0, "shape"), ("args", 0, "dtype", 0, "when"),
          ("paths", 0, "outputs", 0, "shape"), ("paths", 0, "outputs", 0, "dtype"), ("paths", 0, "outputs", 0, "layout"))


def fuzz_settings(ci_examples: int):
    return settings(max_examples=LONG or ci_examples, deadline=None, derandomize=not LONG, database=None,
                    suppress_health_check=list(HealthCheck))


def check(text: bytes, argv: list[str], seconds: float) -> None:
    CONTRACT.write_bytes(text)
    outcome = run(argv, seconds=seconds)
    judge(outcome, names=str(CONTRACT))
    assert not SENTINEL.exists(), f"an expression of a contract ran code:\n{outcome}"
    if outcome.code == 0 and argv[0] == "contract":
        assert outcome.stdout.startswith(f"ok: {CONTRACT}"), outcome


@fuzz_settings(120)
@given(hostile_files())
def test_contract_check_answers_every_mutated_contract(warm, case):
    _, text = case
    check(text, ["contract", "check", str(CONTRACT)], seconds=30)


@fuzz_settings(60)
@given(st.sampled_from(FIELDS), expressions(BASES[0].names))
def test_contract_check_answers_every_expression_in_every_field(warm, field, text):
    doc = BASES[0].data
    parent = doc
    for k in field[:-1]:
        parent = parent[k]
    parent[field[-1]] = text
    check(write_toml(doc).encode(), ["contract", "check", str(CONTRACT)], seconds=30)


@fuzz_settings(20)
@given(hostile_files())
def test_verify_answers_every_mutated_contract(warm, case):
    base, text = case
    check(text, ["verify", "op", base.op, "--contract", str(CONTRACT), *base.kernel, "--jobs", "1",
                 "--timeout-ms", "2000", "--max-traces", "8"], seconds=90)


def check_config(text: bytes, argv: list[str], seconds: float) -> None:
    PROJECT.mkdir(exist_ok=True)
    (PROJECT / "pyproject.toml").write_bytes(text)
    outcome = run(argv, seconds=seconds, cwd=PROJECT)
    judge(outcome)
    if outcome.code == 2:  # the project file, or what it names (a contract over its max-cases, a baseline, ...)
        assert str(PROJECT) in outcome.stderr or str(BASES[1].file) in outcome.stderr, outcome


@fuzz_settings(80)
@given(hostile_configs())
def test_contract_check_answers_every_mutated_project_file(warm, text):
    check_config(text, ["contract", "check", str(BASES[1].file)], seconds=30)


@fuzz_settings(10)
@given(hostile_configs())
def test_verify_answers_every_mutated_project_file(warm, text):
    """The command line's --jobs, --timeout-ms and --max-traces win: a valid but slow project file is no hang."""
    mm = BASES[1]
    check_config(text, ["verify", "op", mm.op, "--contract", str(mm.file), "--jobs", "1", "--timeout-ms", "2000",
                        "--max-traces", "8", "--no-cache"], seconds=90)


def check_baseline(text: bytes, argv: list[str], seconds: float) -> None:
    BASELINE.write_bytes(text)
    outcome = run(argv, seconds=seconds)
    judge(outcome, names=str(BASELINE))
    if outcome.code == 2:
        assert outcome.cpu < 10, outcome  # read before any work


@fuzz_settings(40)
@given(hostile_baselines("gate"))
def test_gate_answers_every_mutated_baseline(warm, text):
    mm = BASES[1]
    check_baseline(text, ["gate", str(mm.file), "--baseline", str(BASELINE), "--no-cache", "--jobs", "1",
                          "--timeout-ms", "2000"], seconds=90)


@fuzz_settings(15)
@given(hostile_baselines("audit"))
def test_audit_answers_every_mutated_baseline(warm, text):
    check_baseline(text, ["audit", "--ops", "aten::mm", "--baseline", str(BASELINE), "--no-cache", "--jobs", "1"],
                   seconds=90)
