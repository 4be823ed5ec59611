"""Hostile input, round 3 (2026-12-03): a sweep of 525 inputs as a hostile user makes them found these, each run
here the way it was found (in a forked child under a deadline): a name no file can have, a seed torch cannot
take, a module attribute that is no function of the file, and user code that ends the process with os._exit."""

import pytest

from tests.acceptance.hostile.harness import ROOT, judge, run
from tests.acceptance.hostile.inputs import BASES
from tests.acceptance.hostile.test_round2 import refused, verify, write

ROWS = BASES[0]
LONG = "x" * 300  # over the 255 bytes a file name may have: the path's lookup raised OSError, exit 4


def _own(contract, *kernel) -> list:
    """verify of the base contract with a kernel of the test's own."""
    return ["verify", "op", ROWS.op, "--contract", contract, *map(str, kernel), "--no-cache"]


@pytest.mark.parametrize("command", [["verify", "op"], ["fuzz", "op"], ["ref", "check"]])
def test_an_op_name_too_long_for_a_file_is_an_unknown_op(warm, command):
    refused([*command, f"aten::{LONG}"], "aten::", "no contract for aten::")


def test_a_path_too_long_is_bad_input(warm, tmp_path):
    refused(["contract", "check", tmp_path / f"{LONG}.toml"], "File name too long")
    refused(_own(ROWS.file, "--meta-source", tmp_path / f"{LONG}.py"), "File name too long")


def test_a_seed_beyond_64_bits_is_taken(warm):
    # torch.Generator.manual_seed takes [0, 2**63): the seed is reduced into it (was ValueError, exit 4)
    for seed in (str(2**64), str(-10**13), str(2**63 - 1)):
        o = run(["ref", "check", "aten::index_select", "--seed", seed, "--examples", "2"])
        judge(o)
        assert o.code == 0 and o.stdout.startswith("PASS"), o


def test_a_module_attribute_that_is_no_function_of_the_file_is_bad_input(warm, tmp_path):
    kernel = write(tmp_path, "def rows(x, pad=0, mode='zeros'):\n    return x\n", "k.py")
    for name in ("__class__", "__builtins__", "__spec__"):
        refused(_own(ROWS.file, "--meta", f"{kernel}:{name}"), str(kernel),
                f"no function '{name}'")


def test_os_exit_in_a_kernel_is_its_failure_and_in_a_module_bad_input(warm, tmp_path):
    kernel = write(tmp_path, "import os\n\n\ndef rows(*args, **kwargs):\n    os._exit(0)\n", "k.py")
    for jobs in ("1", "2"):  # a forked worker too
        o = run(_own(ROWS.file, "--meta", f"{kernel}:rows", "--jobs", jobs))
        judge(o)
        assert o.code == 1 and "SC007" in o.stdout and "os._exit(0) called at" in o.stdout, o
    lib = write(tmp_path, "import os\nos._exit(0)\n", "stops.py")
    refused(verify(ROWS.file, "--import", lib), f"--import {lib}", "os._exit(0)", "nothing can be checked")


def test_os_exec_in_a_kernel_is_its_failure_and_in_a_module_bad_input(warm, tmp_path):
    # the process would become /bin/true, whose exit status 0 would read as a pass (round 4, 2026-12-04)
    kernel = write(tmp_path, "import os\n\n\ndef rows(*args, **kwargs):\n    os.execv('/bin/true', ['true'])\n",
                   "k.py")
    o = run(_own(ROWS.file, "--meta", f"{kernel}:rows", "--jobs", "1"))
    judge(o)
    assert o.code == 1 and "SC007" in o.stdout and "os.execv(...) called at" in o.stdout, o
    lib = write(tmp_path, "import os\nos.execvp('true', ['true'])\n", "becomes.py")
    refused(verify(ROWS.file, "--import", lib), f"--import {lib}", "os.execvp(...)", "nothing can be checked")


SHUFFLE = (ROOT / "contracts" / "aten" / "pixel_shuffle.toml").read_text()


@pytest.mark.parametrize("old, new, key", [
    ('outputs = ["(B, C, H * r, W * r)"]', 'outputs = ["(B, C, H * r, W * r + W // (B - B))"]', "paths.shuffle.outputs[0]"),
    ('outputs = ["(B, C, H * r, W * r)"]', 'outputs = ["(B, C, H * r, W * r + W // (B - 1) - W // (B - 1))"]',
     "paths.shuffle.outputs[0]"),
    ('when = "true"', 'when = "H // (W - 1) >= 0"', "paths.shuffle.when"),
])
def test_an_expression_that_divides_by_zero_in_the_domain_is_refused_at_load(warm, tmp_path, old, new, key):
    # was: contract check ok, then verify exit 4 (ZeroDivisionError) or a pass resting on an unspecified quotient
    path = write(tmp_path, SHUFFLE.replace(old, new, 1))
    assert old in SHUFFLE
    for argv in (["contract", "check", path], ["verify", "op", "aten::pixel_shuffle", "--contract", path, "--no-cache"]):
        refused(argv, str(path), f"[{key}]", "divides by zero")


@pytest.mark.parametrize("text, words", [
    ("[tool.shapecheck.gate]\ncontracts = 5\n", "[tool.shapecheck.gate] contracts: read from [tool.shapecheck] only"),
    ("[tool.shapecheck.verify]\ncontracts = [\"c\"]\n", "[tool.shapecheck.verify] contracts: read from"),
    ("[tool.shapecheck]\ncontracts = 5\n", "[tool.shapecheck] contracts: expected a list of paths"),
    ("[tool.shapecheck]\nuntraced = 5\n", "read from [tool.shapecheck.audit] only"),
    ("[tool.shapecheck]\ntimeout-ms = 20000\ntimeout_ms = 30000\n", "the same option as timeout-ms"),
])
def test_a_project_key_that_would_be_ignored_is_bad_input(warm, tmp_path, text, words):
    # each was exit 0: a key never read (contracts in a command's table, a top-level untraced), one never checked
    # where the run did not need it (contracts with --contract), or one of two spellings winning silently
    (tmp_path / "pyproject.toml").write_text(text)
    refused(["verify", "op", "aten::pixel_shuffle", "--contract", ROOT / "contracts" / "aten" / "pixel_shuffle.toml",
             "--no-cache"], "pyproject.toml", words, cwd=tmp_path)


@pytest.mark.parametrize("doc", [
    '{"tool": "shapecheck", "version": true, "findings": []}',
    '{"tool": "shapecheck", "version": 1.0, "findings": []}',
    '{"tool": "evil", "version": 1, "findings": []}',
    '{"tool": "shapecheck audit", "version": 1, "findings": []}',
])
def test_a_gate_baseline_of_another_version_type_or_tool_is_bad_input(warm, tmp_path, doc):
    # each was taken as a gate baseline (exit 1 on the findings it did not hold, instead of 2)
    path = write(tmp_path, doc, "b.json")
    refused(["gate", ROOT / "contracts" / "aten" / "pixel_shuffle.toml", "--baseline", path, "--no-cache"], str(path),
            "not a shapecheck baseline")
