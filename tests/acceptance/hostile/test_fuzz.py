"""The hostile-input fuzzer: mutated contracts and generated expressions through ``contract check`` and
``verify op``, each run in a forked child under a deadline and a memory cap (``harness``). Whatever the
input: exit 0-3, never 4 (an internal error fails the test), no traceback, no hang, exit 2 as one line naming
the contract file, and no code of the contract ever runs (``SENTINEL``).

CI runs a fixed, small number of examples (derandomised); ``SHAPECHECK_HOSTILE_EXAMPLES=5000`` runs that
many per test, randomly.
"""

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.acceptance.hostile.harness import judge, run
from tests.acceptance.hostile.inputs import BASES, SENTINEL, expressions, hostile_files, write_toml

LONG = int(os.environ.get("SHAPECHECK_HOSTILE_EXAMPLES", "0"))
WORK = Path(tempfile.mkdtemp(prefix="shapecheck-hostile-"))
CONTRACT = WORK / "contract.toml"
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
