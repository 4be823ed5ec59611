"""What the output-table obligations (dtype SC017, layout SC018, None SC019) cost `shapecheck gate` over the
shipped contract family: the shipped contracts against the same contracts with every output table reduced to
its plain shape string ("none" to "unspecified", the SC019 suppressions dropped), gated alternately in one
run, each by a fresh process. Prints a markdown table (median wall times; the least CPU time, which other jobs
on the machine disturb least) and the ratios new / baseline; exits 1 when the CPU ratio is over budget.

    .venv/bin/python bench/bench_outputs.py [--repeat N]
"""

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "contracts"
LIMIT = 1.30  # the budget: at most 30% more

_TABLE = re.compile(r'\{ shape = ("[^"]*")(?:, (?:dtype|layout|strides|layout_match) = "[^"]*")+ \}')
_NONE = re.compile(r'^(\s*)"none",$', re.M)
_SC019 = re.compile(r'\n\[\[suppress\]\]\nrule = "SC019"\n(?:[^\[\n].*\n)*', re.M)


def baseline_text(text: str) -> str:
    """A contract without output tables: each table -> its shape, "none" -> "unspecified", no SC019 suppression."""
    text = _TABLE.sub(lambda m: m.group(1), text)
    text = _NONE.sub(lambda m: f'{m.group(1)}"unspecified",', text)
    return _SC019.sub("\n", text + "\n")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def gate(folder: Path, out: Path) -> tuple[float, float, float, str]:
    """(whole-process seconds, the gate's own seconds, the process's CPU seconds, verdict) of one
    `shapecheck gate FOLDER -j 1`. CPU time is the figure a busy machine disturbs least."""
    cmd = [sys.executable, "-m", "shapecheck", "gate", str(folder), "-j", "1", "--json", str(out)]
    env = {**os.environ, "SHAPECHECK_CACHE": "0"}  # every run proves: a cache hit would time a lookup
    t0, c0 = time.perf_counter(), _cpu()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    if res.returncode not in (0, 1, 3):
        sys.exit(f"{' '.join(cmd)} exited {res.returncode}: {res.stderr[-800:]}")
    doc = json.loads(out.read_text())
    return wall, doc["seconds"], cpu, doc["verdict"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5, help="runs per side, alternating (median)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_outputs_") as tmp:
        tmp = Path(tmp)
        base = tmp / "baseline"
        for f in sorted(SHIPPED.rglob("*.toml")):
            dst = base / f.relative_to(SHIPPED)
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_text(baseline_text(f.read_text()))
            # every output table is gone; an input's layout stays (both sides have it)
            assert not re.search(r'\{ shape = "[^"]*", (?:dtype|layout|strides|layout_match) =', dst.read_text()), dst
        runs: dict[str, list[tuple[float, float, float, str]]] = {"baseline": [], "with output tables": []}
        for _ in range(args.repeat):
            runs["baseline"].append(gate(base, tmp / "b.json"))
            runs["with output tables"].append(gate(SHIPPED, tmp / "n.json"))
    # medians of wall time (disturbed by other jobs), and the least CPU time (the intrinsic cost)
    med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v), min(r[2] for r in v),
               {r[3] for r in v}) for k, v in runs.items()}
    print(f"`SHAPECHECK_CACHE=0 shapecheck gate contracts -j 1`, {args.repeat} runs per side, alternating\n")
    print("| contracts | verdict | process s (median) | gate s (median) | process CPU s (least) |")
    print("|---|---|---:|---:|---:|")
    for k, (wall, own, cpu, verdicts) in med.items():
        print(f"| {k} | {'/'.join(sorted(verdicts))} | {wall:.2f} | {own:.2f} | {cpu:.2f} |")
    new, old = med["with output tables"], med["baseline"]
    ratios = [new[i] / old[i] for i in range(3)]
    print(f"\nratio: process {ratios[0]:.2f}, gate {ratios[1]:.2f}, CPU {ratios[2]:.2f} (budget {LIMIT:.2f})")
    if ratios[2] > LIMIT:
        sys.exit(1)


if __name__ == "__main__":
    main()
