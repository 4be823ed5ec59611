"""Agreement of `shapecheck verify` with `torch.export(strict=True)`, kernel by kernel: every kernel the tests
use (the shipped contracts with the installed kernels, the kernels and contracts of tests/kernels,
tests/golden/examples) is verified with
--confirm-export, in this one process. Writes the table (kernel, case, verify verdict, export outcome, agree,
explanation) into bench/README.md between the agreement markers, and prints the two targets:

- unexplained disagreements (an export outcome that contradicts the verdict with no established cause);
- verify findings whose counterexample does not reproduce (SC005 "did not reproduce at", and every FAIL's
  counterexample replayed once more here at static sizes).

    PYTHONPATH=$PWD .venv/bin/python bench/bench_agreement.py [--quick] [--no-write]

Kernels against the SDPA-MPS contract run on three cases (the unit tests' sample), the rest on every case;
export runs on each failing case and on passing cases covering every choice value (verify's own sample).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from shapecheck.findings import Verdict  # noqa: E402
from shapecheck.prove.verify import Options, verify_op  # noqa: E402

ATEN = ROOT / "contracts" / "aten"
KERNELS = ROOT / "tests" / "kernels"
GOLDEN = ROOT / "tests" / "golden" / "examples"
MPS = "aten::_scaled_dot_product_attention_math_for_mps"
MPS_CONTRACT = ATEN / "_scaled_dot_product_attention_math_for_mps.toml"
SMALL = ("rank=4,mask=bool,is_causal=false,dtype=float32,enable_gqa=false",
         "rank=3,mask=none,is_causal=false,dtype=float16,enable_gqa=false",
         "rank=5,mask=float,is_causal=true,dtype=bfloat16,enable_gqa=true")
BEGIN, END = "<!-- agreement:begin -->", "<!-- agreement:end -->"


@dataclass(frozen=True)
class Target:
    label: str
    op: str
    contract: str | None = None
    meta: str | None = None
    meta_source: str | None = None
    cases: tuple[str, ...] = ()
    module: str | None = None  # imported first: it registers the op


def _functions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]


def targets(quick: bool) -> list[Target]:
    out = []
    for toml in sorted(ATEN.glob("*.toml")):  # the shipped contracts (avg_pool2d too, when it exists)
        text = toml.read_text()
        op = next(line.split("=", 1)[1].strip().strip('"') for line in text.splitlines() if line.startswith("op ="))
        out.append(Target(f"{op} (installed)", op, str(toml), cases=SMALL if op == MPS and quick else ()))
    rel = lambda p: str(p.relative_to(ROOT))  # noqa: E731
    for name in _functions(KERNELS / "sdpa_kernels.py") + [f"fuzz_mutants:{n}" for n in _functions(KERNELS / "fuzz_mutants.py")]:
        file, fn = ("fuzz_mutants.py", name.split(":")[1]) if ":" in name else ("sdpa_kernels.py", name)
        out.append(Target(f"{file}:{fn}", MPS, str(MPS_CONTRACT), meta=f"{rel(KERNELS / file)}:{fn}", cases=SMALL))
    out.append(Target("regressed_registrations.py", MPS, str(MPS_CONTRACT),
                      meta_source=rel(KERNELS / "regressed_registrations.py"), cases=SMALL))
    aten = {"cross_broadcast": "linalg_cross", "cross_keeps_self_shape": "linalg_cross",
            "ceil_planted_in_a_later_case": None, "branch_excluding_a_point": None,
            "two_formulas_behind_one_return": None, "conv_forgets_the_padding": "convolution"}
    for fn, op in aten.items():
        contract = str(ATEN / f"{op}.toml") if op else str(KERNELS / "hidden_case.toml")
        out.append(Target(f"aten_kernels.py:{fn}", f"aten::{op or 'new_empty'}", contract,
                          meta=f"{rel(KERNELS / 'aten_kernels.py')}:{fn}"))
    for ex in sorted(GOLDEN.glob("sc00*.py")):
        out.append(Target(f"golden/{ex.name}", "aten::new_empty", str(GOLDEN / "new_empty.toml"),
                          meta=f"{rel(ex)}:kernel"))
    for toml in sorted(KERNELS.glob("*.toml")):  # the contracts of tests/kernels, with the kernel torch runs
        op = _op(toml)
        module = _registering_module(op)
        if op.startswith("aten::") and op != "aten::new_empty" or module is not None:
            out.append(Target(f"{op} ({rel(toml)})", op, str(toml), module=module))
    return out


def _op(toml: Path) -> str:
    return next(line.split("=", 1)[1].strip().strip('"') for line in toml.read_text().splitlines()
                if line.startswith("op ="))


def _registering_module(op: str) -> str | None:
    """The module of tests/kernels that registers a custom op (imported before verify), None for aten."""
    if op.startswith("aten::"):
        return None
    for py in sorted(KERNELS.glob("*.py")):
        if f'"{op}' in py.read_text():
            return f"tests.kernels.{py.stem}"
    return None


def replayed_again(report, contract_path, meta, meta_source) -> int:
    """The report's failing counterexamples, each replayed once more at static sizes: how many do not show
    the finding (0 is the target)."""
    from shapecheck.kernel import sources
    from shapecheck.kernel.load import load_target
    from shapecheck.prove.replay import REPLAYED, replayer

    _, kernel = load_target(report.op, contract_path, sources.from_options(meta, meta_source))
    from shapecheck.contract.load import load_contract

    cases = {c.id: c for c in load_contract(report.contract).cases()}
    bad = 0
    for v in report.violations:
        if v.code in REPLAYED and v.counterexample and v.case in cases:
            # as verify replays it: a kernel registered by qualified name is followed in its findings' files
            mine = [w for w in report.violations if w.case == v.case]
            if replayer(kernel, cases[v.case], mine).why_not(v) is not None:
                bad += 1
    return bad


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the SDPA-MPS contract on three cases only")
    ap.add_argument("--no-write", action="store_true", help="print the table, leave bench/README.md alone")
    ap.add_argument("--only", action="append", default=[], help="only the kernels whose label contains this")
    args = ap.parse_args()
    rows, stale, again, unexplained, disagree = [], 0, 0, 0, 0
    start = time.perf_counter()
    summary = []
    chosen = [t for t in targets(args.quick) if not args.only or any(o in t.label for o in args.only)]
    for t in chosen:
        t0 = time.perf_counter()
        if t.module:
            importlib.import_module(t.module)
        r = verify_op(t.op, contract=t.contract, meta=t.meta, meta_source=t.meta_source,
                      options=Options(jobs=1, cases=t.cases, confirm_export=True))
        stale += sum("did not reproduce at" in v.message for v in r.violations)
        if r.verdict == Verdict.FAIL:
            again += replayed_again(r, t.contract, t.meta, t.meta_source)
        exported = [c for c in r.cases if c.export is not None and c.export.ran]
        for c in [c for c in r.cases if c.export is not None]:
            x = c.export
            if not x.ran:  # export could not say anything about this kernel: the reason, not a verdict
                rows.append((t.label, c.case or "-", _before_suppressions(r, c), "not run", "-", x.message))
                continue
            outcome = "succeeded" if x.succeeded else "failed"
            agree = {True: "yes", False: "NO", None: "-"}[x.agrees]
            why = x.explanation if x.agrees is False else ""
            if x.agrees is False:
                disagree += 1
                unexplained += (not why) or why.startswith("not explained")
            rows.append((t.label, c.case or "-", _before_suppressions(r, c), outcome, agree, why))
        mine = [c.export for c in exported]
        summary.append(f"{t.label}: {r.verdict.value}, {len(exported)} exported, "
                       f"{sum(x.agrees is False for x in mine)} disagree, "
                       f"{sum(x.agrees is False and (not x.explanation or x.explanation.startswith('not explained')) for x in mine)} "
                       f"unexplained, {time.perf_counter() - t0:.1f}s")
        print(summary[-1], flush=True)
    seconds = time.perf_counter() - start
    table = render(rows, stale, again, disagree, unexplained, len(chosen), seconds, args.quick)
    print(table)
    if not args.no_write and not args.only:
        write(table)


def _before_suppressions(report, case) -> str:
    """The case's verdict with the contract's suppressions set aside: the one export's outcome is compared with
    (a case whose only findings are accepted passes in the report)."""
    from dataclasses import replace

    from shapecheck.findings import verdict_of

    if case.skipped or case.verdict is not Verdict.PASS:
        return case.verdict.value
    return verdict_of(replace(v, suppressed="") for v in report.violations if v.case == case.case).value


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(rows, stale, again, disagree, unexplained, kernels, seconds, quick) -> str:
    from shapecheck._torch import core as C

    lines = [f"{kernels} kernels, {sum(r[3] != 'not run' for r in rows)} exported cases, {seconds:.0f} s on this machine (torch "
             f"{C.TORCH_VERSION}{'; --quick' if quick else ''}).", "",
             f"- disagreements: {disagree}, unexplained: **{unexplained}** (target 0)",
             f"- findings that did not reproduce (SC005 'did not reproduce at'): **{stale}**; FAIL counterexamples "
             f"that do not reproduce when replayed again: **{again}** (target 0)", "",
             "verify is the case's verdict before the contract's suppressions (an accepted SC001 still disagrees "
             "with an export that succeeds); `not run` rows give the reason export said nothing.", "",
             "| kernel | case | verify | export | agree | explanation |", "|---|---|---|---|---|---|"]
    for kernel, case, verdict, outcome, agree, why in rows:
        lines.append(f"| {_cell(kernel)} | {_cell(case)} | {verdict} | {outcome} | {agree} | {_cell(why)} |")
    return "\n".join(lines)


def write(table: str) -> None:
    readme = ROOT / "bench" / "README.md"
    text = readme.read_text()
    block = f"{BEGIN}\n{table}\n{END}"
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip() + "\n\n## `bench_agreement.py`\n\n" + (
            "verify and torch.export side by side on every kernel the tests use ([the script](bench_agreement.py) "
            "says which cases); regenerate with `PYTHONPATH=$PWD .venv/bin/python bench/bench_agreement.py`.\n\n"
        ) + block + "\n"
    readme.write_text(text)


if __name__ == "__main__":
    main()
