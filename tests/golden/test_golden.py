"""Golden tests: one minimal failing example per rule, run through the command line, its report reduced to
the fields that must not drift, and compared with ``tests/golden/<rule>.json``.

Each example lives in ``tests/golden/examples/``:

- SC001-SC005, SC007, SC016, SC022: a kernel file checked with ``verify op aten::new_empty --meta FILE:kernel`` against
  ``new_empty.toml`` (one dynamic dim N, one case, one path);
- SC006: a contract for ``aten::new_empty`` with a path no input reaches beside one every input takes (the
  installed kernel);
- SC008: a contract for ``aten::new_empty`` with a ``[[suppress]]`` table that matches nothing (``gate``);
- SC017-SC019: a kernel file checked with ``verify op golden::attn --meta FILE:kernel`` against
  ``outputs.toml`` (output tables: dtype, layout, an output that is None);
- SC020: a custom op with a fake (``--import``) whose data-dependent size excludes 0 and 1;
- SC021: a kernel file for ``aten::index_select`` checked against ``sc021_index_select.toml``, whose
  ``[[rejects]]`` region (a 2-D index) the kernel accepts;
- SC015: a kernel file fuzzed (``fuzz op --examples 5 --seed 0``) whose output 0 has the contract's shape but not
  the runtime's memory layout;
- SC023: the installed kernel against ``new_empty.toml``, with a bug planted in shapecheck's output check;
- SC030-SC037: ``audit --import audit_classes.py --ops auditex::<op>``, a custom-op library with one fake
  kernel per audit class (its ``relation`` op demands a relation: no finding);
- SC024: a contract for ``aten::avg_pool2d`` on a channels_last input whose output table says contiguous
  (``ref check --examples 2 --seed 0``: the eager kernel keeps the input's memory format);
- SC038-SC044: ``audit --import audit_eager.py --ops auditeg::<op>``, a custom-op library whose eager kernels
  and fakes disagree in one way per rule;
- SC010-SC014: a small contract for ``aten::_scaled_dot_product_attention_math_for_mps`` whose path says
  something the runtime reference (metal_ref) does not do (``ref check --examples 2 --seed 0``); for SC012,
  whose reference agrees with the math by construction, the example plants wrong values in the reference.

The commands run in this process through ``shapecheck.cli.main.main`` with the repository root as the current
directory (torch is imported once; ``-j 1`` everywhere, so nothing forks). Each report is reduced to its
verdict, exit code and, per finding, the rule code, case id, contract path and

- verify and gate: the finding's dims and its location (file relative to the repository root, line);
- ref check: the era and the input sizes (inputs are z3's least models and a seeded generator).

Messages, counterexamples of verify and timings are left out. Besides the comparison, every example must
give findings of its own rule only, with the exit code that rule implies.

Regenerate the golden files after an intended change, then review the diff:

    .venv/bin/python -m pytest tests/golden --regen-golden
    SHAPECHECK_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/golden     # the same

The option lives in tests/golden/conftest.py, so pytest knows it only when tests/golden (or a file in it) is
named on the command line; the variable works from any invocation. A regenerating run still asserts that
each example gives its own rule and exit code; it only skips the comparison.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
EXAMPLES_DIR = "tests/golden/examples"
SDPA_MPS = "aten::_scaled_dot_product_attention_math_for_mps"


@dataclass(frozen=True)
class Example:
    rule: str
    args: tuple[str, ...]
    exit_code: int
    plant: str = ""  # a defect planted in the runtime reference or in shapecheck for the run (a function here)


def _values_off(monkeypatch) -> None:
    """The runtime reference's output 0 shifted by 0.05: wrong values, right shapes and dispatch."""
    import metal_ref

    real = metal_ref.run

    def off_by_a_bit(*a, **k):
        out0, out1 = real(*a, **k)
        return out0 + 0.05, out1

    monkeypatch.setattr(metal_ref, "run", off_by_a_bit)


def _shapecheck_bug(monkeypatch) -> None:
    """A bug in shapecheck while it checks a case's outputs: the case's SC023 finding."""
    from shapecheck.prove import verify

    def buggy(*a, **k):
        raise KeyError("K")

    monkeypatch.setattr(verify, "output_obligations", buggy)


def _verify(contract: str, kernel: str | None = None) -> tuple[str, ...]:
    meta = ("--meta", f"{EXAMPLES_DIR}/{kernel}:kernel") if kernel else ()
    return ("verify", "op", "aten::new_empty", "--contract", f"{EXAMPLES_DIR}/{contract}", *meta,
            "--format", "json", "-j", "1")


def _audit(op: str) -> tuple[str, ...]:
    """``audit`` of one op of the custom-op library whose kernels are written one per audit class."""
    return ("audit", "--import", f"{EXAMPLES_DIR}/audit_classes.py", "--ops", f"auditex::{op}.default",
            "--format", "json", "-j", "1")
def _audit_eager(op: str) -> tuple[str, ...]:
    """``audit`` of one op of the custom-op library whose eager kernels and fakes disagree, one way per rule."""
    return ("audit", "--import", f"{EXAMPLES_DIR}/audit_eager.py", "--ops", f"auditeg::{op}.default",
            "--format", "json", "-j", "1")


def _outputs(kernel: str) -> tuple[str, ...]:
    return ("verify", "op", "golden::attn", "--contract", f"{EXAMPLES_DIR}/outputs.toml", "--meta",
            f"{EXAMPLES_DIR}/{kernel}:kernel", "--format", "json", "-j", "1")


def _ref(contract: str) -> tuple[str, ...]:
    return ("ref", "check", SDPA_MPS, "--contract", f"{EXAMPLES_DIR}/{contract}", "--examples", "2", "--seed", "0",
            "--format", "json")


EXAMPLES = [
    Example("SC001", _verify("new_empty.toml", "sc001_guard_on_dynamic_dim.py"), 1),
    Example("SC002", _verify("new_empty.toml", "sc002_output_shape_mismatch.py"), 1),
    Example("SC003", _verify("new_empty.toml", "sc003_value_specialization.py"), 1),
    Example("SC004", _verify("new_empty.toml", "sc004_assert_narrows_range.py"), 1),
    Example("SC005", _verify("new_empty.toml", "sc005_inconclusive.py"), 3),
    Example("SC006", _verify("sc006_unreachable_path.toml"), 0),  # reported, but an unreachable path fails nothing
    Example("SC007", _verify("new_empty.toml", "sc007_kernel_error.py"), 1),
    Example("SC008", ("gate", f"{EXAMPLES_DIR}/sc008_stale_suppression.toml", "--json", "{json}", "-j", "1"), 1),
    Example("SC010", _ref("sc010_dispatch_mismatch.toml"), 1),
    Example("SC011", _ref("sc011_runtime_output_shape.toml"), 1),
    Example("SC012", _ref("sc012_runtime_values.toml"), 1, plant="_values_off"),
    Example("SC013", _ref("sc013_runtime_output1_shape.toml"), 1),
    Example("SC014", _ref("sc014_runtime_rejects.toml"), 1),
    Example("SC015", ("fuzz", "op", SDPA_MPS, "--meta", f"{EXAMPLES_DIR}/sc015_meta_runtime_mismatch.py:kernel",
                      "--case", "rank=4,mask=none,is_causal=false,dtype=float32,enable_gqa=false", "--era", "current",
                      "--examples", "5", "--seed", "0", "--no-verify-examples", "--format", "json"), 1),
    Example("SC016", _verify("new_empty.toml", "sc016_guard_torch_cannot_discharge.py"), 1),
    Example("SC017", _outputs("sc017_output_dtype_mismatch.py"), 1),
    Example("SC018", _outputs("sc018_output_layout_mismatch.py"), 1),
    Example("SC019", _outputs("sc019_output_presence_mismatch.py"), 1),
    Example("SC020", ("verify", "op", "golden::keep_positive", "--contract",
                      f"{EXAMPLES_DIR}/sc020_dynamic_size_range.toml", "--import",
                      f"{EXAMPLES_DIR}/sc020_dynamic_size_range.py", "--format", "json", "-j", "1"), 1),
    Example("SC021", ("verify", "op", "aten::index_select", "--contract", f"{EXAMPLES_DIR}/sc021_index_select.toml",
                      "--meta", f"{EXAMPLES_DIR}/sc021_meta_accepts_rejected_input.py:kernel", "--format", "json",
                      "-j", "1"), 1),
    Example("SC022", _verify("new_empty.toml", "sc022_guard_in_torch_helper.py"), 1),
    Example("SC023", _verify("new_empty.toml"), 4, plant="_shapecheck_bug"),
    Example("SC024", ("ref", "check", "aten::avg_pool2d", "--contract", f"{EXAMPLES_DIR}/sc024_runtime_output_layout.toml",
                      "--examples", "2", "--seed", "0", "--format", "json"), 1),
    Example("SC030", _audit("constant_comparison"), 1),
    Example("SC031", _audit("zero_one"), 1),
    Example("SC032", _audit("specialization"), 1),
    Example("SC033", _audit("modulo"), 1),
    Example("SC034", _audit("data_dependent"), 1),
    Example("SC035", _audit("undischargeable"), 1),
    Example("SC036", _audit("kernel_error"), 1),
    Example("SC037", _audit("dim_branch"), 1),
    Example("SC038", _audit_eager("eager_shape"), 1),
    Example("SC039", _audit_eager("eager_dtype"), 1),
    Example("SC040", _audit_eager("eager_strides"), 1),
    Example("SC041", _audit_eager("fake_accepts"), 1),
    Example("SC042", _audit_eager("fake_rejects"), 1),
    Example("SC043", _audit_eager("eager_formula"), 1),
    Example("SC044", _audit_eager("eager_alias"), 1),
]
VERDICTS = {0: "pass", 1: "fail", 3: "inconclusive", 4: "error"}


def run_command(args: tuple[str, ...], tmp_path: Path, monkeypatch) -> tuple[int, dict, str]:
    """Run ``shapecheck ARGS`` in this process from the repository root: (exit code, JSON report, stderr)."""
    from shapecheck.cli.main import main

    json_file = tmp_path / "report.json"
    argv = [a.format(json=json_file) for a in args]
    monkeypatch.chdir(ROOT)
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    text = json_file.read_text(encoding="utf-8") if "{json}" in args else out.getvalue()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        pytest.fail(f"shapecheck {shlex.join(argv)} exited {code} without a JSON report:\n"
                    f"{out.getvalue()[-2000:]}\n{err.getvalue()[-2000:]}")
    return code, doc, err.getvalue()


def _file(path: str | None) -> str | None:
    """A location's file relative to the repository root (reports keep the path they were given)."""
    if path is None:
        return None
    p = Path(path)
    if p.is_absolute():
        with contextlib.suppress(ValueError):
            p = p.resolve().relative_to(ROOT)
    return p.as_posix()


def _verify_finding(v: dict) -> dict:
    loc = v.get("location") or {}
    return {"code": v["code"], "case": v["case"], "path": v["path"], "dims": list(v["dims"]),
            "file": _file(loc.get("file")), "line": loc.get("line")}


def _ref_finding(f: dict) -> dict:
    return {"code": f["code"], "case": f["case"], "era": f["era"], "path": f["path"], "sizes": f["sizes"]}


def reduce(args: tuple[str, ...], code: int, doc: dict) -> dict:
    """The stable part of a report: verdict, exit code and each finding's identifying fields, sorted."""
    if args[0] == "ref":
        findings = [_ref_finding(f) for f in doc["findings"]]
        suppressed = [_ref_finding(f) for f in doc["suppressed"]]
    elif args[0] == "audit":
        findings = [{"code": f["code"], "op": f["op"], "expr": f["expr"],
                     "file": _file((f.get("location") or {}).get("file")), "line": (f.get("location") or {}).get("line")}
                    for f in doc["findings"]]
        suppressed = []
    elif args[0] == "fuzz":
        findings = [{"code": f["code"], "case": f["case"], "check": f["check"]} for f in doc["failures"]]
        suppressed = []
    elif args[0] == "gate":
        assert doc["exit_code"] == code, (doc["exit_code"], code)
        findings = [_verify_finding(v) for r in doc["reports"] for v in r["violations"] + r["stale_suppressions"]]
        suppressed = [_verify_finding(v) for r in doc["reports"] for v in r["suppressed"]]
    else:
        findings = [_verify_finding(v) for v in doc["violations"]]
        suppressed = [_verify_finding(v) for v in doc["suppressed"]]

    def order(items: list[dict]) -> list[dict]:
        return sorted(items, key=lambda d: json.dumps(d, sort_keys=True))

    shown = [a.format(json="REPORT.json") for a in args]
    return {"command": "shapecheck " + shlex.join(shown), "exit_code": code, "verdict": doc["verdict"],
            "findings": order(findings), "suppressed": order(suppressed)}


def golden_path(rule: str) -> Path:
    return HERE / f"{rule}.json"


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=[e.rule for e in EXAMPLES])
def test_golden(example: Example, tmp_path, monkeypatch, regen_golden):
    if example.plant:
        globals()[example.plant](monkeypatch)
    code, doc, err = run_command(example.args, tmp_path, monkeypatch)
    got = reduce(example.args, code, doc)
    # the example does what it is for, whatever the golden file says
    assert code == example.exit_code, (code, err[-2000:], got)
    assert got["verdict"] == VERDICTS[code]
    assert got["findings"] and {f["code"] for f in got["findings"]} == {example.rule}, got["findings"]
    golden = golden_path(example.rule)
    if regen_golden:
        golden.write_text("\n".join(_lines(got)) + "\n", encoding="utf-8")
        return
    assert golden.is_file(), f"{golden} is missing: run pytest tests/golden --regen-golden"
    want = json.loads(golden.read_text(encoding="utf-8"))
    if got != want:
        diff = difflib.unified_diff(_lines(want), _lines(got), f"{golden.name} (golden)", "this run", lineterm="")
        pytest.fail(f"{example.rule}: the reduced report differs from {golden.name} (if the change is intended, "
                    f"run pytest tests/golden --regen-golden and review the diff):\n" + "\n".join(diff),
                    pytrace=False)


def _lines(doc: dict) -> list[str]:
    return json.dumps(doc, indent=2, sort_keys=True).splitlines()


def test_every_rule_has_one_example_and_one_golden_file():
    """The rule registry, the rules reference (a heading per rule), the examples and the golden files name
    the same rules."""
    from shapecheck.rules import RULES

    rules = sorted(RULES)
    doc = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert sorted(re.findall(r"(?m)^## (SC\d{3}) ", doc)) == rules
    assert all(f"## {r.code} {r.name}" in doc for r in RULES.values())
    assert [e.rule for e in EXAMPLES] == rules
    assert sorted(p.stem for p in HERE.glob("SC*.json")) == rules
