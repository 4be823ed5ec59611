"""A cold `shapecheck verify op` of the SDPA-MPS contract (all its cases, no result cache) next to one
`torch.export(strict=True)` process of the seed's repro (bench/seed_export.py dynamic: one export of the same op
with a dynamic query length), side by side in one run: N paired runs, each side a fresh process, the order
alternating within pairs. Wall time and CPU time (user + system of the process and its children, from
``getrusage(RUSAGE_CHILDREN)``) per process; ratios of the medians, and the median of the per-pair ratios.

CPU time is the figure to trust on a loaded machine: wall time grows with whatever else runs, CPU time much
less. The load average is printed with the figures.

    .venv/bin/python bench/bench_cold.py [--pairs 5] [--jobs N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OP = "aten._scaled_dot_product_attention_math_for_mps"


def measure(cmd: list[str], expect: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh process (and the processes it starts)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "SHAPECHECK_CACHE": "0"})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode not in expect:
        sys.exit(f"{' '.join(cmd)} exited {res.returncode}: {res.stderr[-800:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--jobs", default=None, help="verify's --jobs (default: verify's own default)")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args()
    py = sys.executable
    verify = [py, "-m", "shapecheck", "verify", "op", OP, "--no-cache"] + (["--jobs", args.jobs] if args.jobs else [])
    export = [py, "bench/seed_export.py", "dynamic"]
    load0 = os.getloadavg()
    rows: list[dict[str, float]] = []
    for i in range(args.pairs):
        order = (("verify", verify), ("export", export)) if i % 2 == 0 else (("export", export), ("verify", verify))
        row: dict[str, float] = {}
        for name, cmd in order:
            row[f"{name}_wall"], row[f"{name}_cpu"] = measure(cmd)
        rows.append(row)
        print(f"pair {i + 1}: verify {row['verify_wall']:.2f} s wall, {row['verify_cpu']:.2f} s CPU; "
              f"export {row['export_wall']:.2f} s wall, {row['export_cpu']:.2f} s CPU", file=sys.stderr)
    load1 = os.getloadavg()

    def med(key: str) -> float:
        return statistics.median(r[key] for r in rows)

    figures = {k: med(k) for k in ("verify_wall", "verify_cpu", "export_wall", "export_cpu")}
    figures["wall_ratio"] = figures["verify_wall"] / figures["export_wall"]
    figures["cpu_ratio"] = figures["verify_cpu"] / figures["export_cpu"]
    figures["pair_wall_ratio"] = statistics.median(r["verify_wall"] / r["export_wall"] for r in rows)
    figures["pair_cpu_ratio"] = statistics.median(r["verify_cpu"] / r["export_cpu"] for r in rows)
    figures["load_before"], figures["load_after"] = load0[0], load1[0]
    print(f"{args.pairs} paired runs, load average {load0[0]:.1f} before, {load1[0]:.1f} after "
          f"({os.cpu_count()} cores)")
    print("| what | wall s (median) | CPU s (median) |")
    print("|---|---:|---:|")
    print(f"| `shapecheck verify op {OP} --no-cache` | {figures['verify_wall']:.2f} | {figures['verify_cpu']:.2f} |")
    print(f"| one `torch.export(strict=True)` process (seed_export.py dynamic) | {figures['export_wall']:.2f} | "
          f"{figures['export_cpu']:.2f} |")
    print(f"| verify / export (ratio of medians) | {figures['wall_ratio']:.2f}x | {figures['cpu_ratio']:.2f}x |")
    print(f"| verify / export (median of per-pair ratios) | {figures['pair_wall_ratio']:.2f}x | "
          f"{figures['pair_cpu_ratio']:.2f}x |")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, **figures}, indent=1) + "\n")


if __name__ == "__main__":
    main()
