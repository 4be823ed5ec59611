"""Time of `shapecheck gate` over every shipped contract (one process: torch imported once), per contract,
and how it grows with the number of contracts: (a) the first m shipped contracts (sorted by name), and
(b) the whole family copied 1, 2, 4, ... times into a scratch directory. Each set is gated by one fresh
process. Prints markdown tables.

    .venv/bin/python bench/bench_gate.py [--subsets 1,2,4] [--copies 1,2,4] [--repeat N]
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "contracts"
TARGET_S = 15.0


def gate(paths, out: Path) -> tuple[float, dict]:
    """Whole-process seconds and the --json report of one gate run."""
    cmd = [sys.executable, "-m", "shapecheck", "gate", *map(str, paths), "--json", str(out)]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if res.returncode not in (0, 1, 3):
        sys.exit(f"{' '.join(cmd)} exited {res.returncode}: {res.stderr[-800:]}")
    return dt, json.loads(out.read_text())


def import_seconds() -> float:
    """The fixed cost every gate process pays: python, torch, sympy and z3 imported, nothing verified."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import shapecheck.ci.gate, shapecheck.prove.verify"], cwd=ROOT, check=True,
                   capture_output=True)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--subsets", default="1,2,4", help="comma-separated numbers of distinct contracts")
    ap.add_argument("--copies", default="1,2,4", help="comma-separated numbers of copies of the family")
    ap.add_argument("--repeat", type=int, default=1, help="runs per set (median)")
    args = ap.parse_args()
    copies = [int(x) for x in args.copies.split(",")]
    family = sorted(SHIPPED.rglob("*.toml"))
    subsets = [m for m in (int(x) for x in args.subsets.split(",")) if m < len(family)]
    with tempfile.TemporaryDirectory(prefix="bench_gate_") as tmp:
        tmp = Path(tmp)
        out = tmp / "gate.json"
        base = statistics.median(import_seconds() for _ in range(3))
        rows = []
        family_doc = None
        for m in subsets:
            runs = [gate(family[:m], out) for _ in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            doc = runs[len(runs) // 2][1]
            cases = sum(len(r["cases"]) for r in doc["reports"])
            rows.append((0, m, cases, wall, doc["seconds"], doc["verdict"]))
        for k in copies:
            if k == 1:
                paths = [SHIPPED]
            else:
                paths = []
                for i in range(k):
                    dst = tmp / f"set{k}" / f"copy{i}"
                    shutil.copytree(SHIPPED, dst)
                    paths.append(dst)
            runs = [gate(paths, out) for _ in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            doc = runs[len(runs) // 2][1]
            if k == 1:
                family_doc = doc
            n = len(doc["reports"])
            cases = sum(len(r["cases"]) for r in doc["reports"])
            rows.append((k, n, cases, wall, doc["seconds"], doc["verdict"]))

    print(f"import only (python + torch + sympy + z3, nothing verified): {base:.2f} s\n")
    print("| contracts | cases | whole process (s) | gate, in process (s) | s / contract | ms / case | verdict |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for k, n, cases, wall, inner, verdict in rows:
        label = {0: f"{n} (first {n} shipped)", 1: f"{n} (shipped family)"}.get(k, f"{n} ({k} copies)")
        print(f"| {label} | {cases} | {wall:.2f} | {inner:.2f} | {inner / n:.2f} | {1000 * inner / cases:.1f} | "
              f"{verdict} |")
    copy_rows = [r for r in rows if r[0] >= 1]
    if len(copy_rows) > 1:
        (_, n0, _, w0, _, _), (_, n1, _, w1, _, _) = copy_rows[0], copy_rows[-1]
        slope = (w1 - w0) / (n1 - n0)
        print(f"\ncopies: {slope:.2f} s per added contract (whole process, {n0} -> {n1} contracts); "
              f"intercept {w0 - slope * n0:.2f} s")
    print("\n| shipped contract | cases | seconds | verdict |")
    print("|---|---:|---:|---|")
    for r in sorted(family_doc["reports"], key=lambda r: -r["seconds"]):
        print(f"| {Path(r['contract']).stem} | {len(r['cases'])} | {r['seconds']:.2f} | {r['verdict']} |")
    wall = next((r[3] for r in rows if r[0] == 1), float("nan"))
    print(f"\ntarget: the whole family in under {TARGET_S:.0f} s (whole process): {wall:.2f} s -> "
          f"{'met' if wall < TARGET_S else 'NOT met'}")


if __name__ == "__main__":
    main()
