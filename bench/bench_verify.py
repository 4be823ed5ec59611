"""Whole-process time of `shapecheck verify op` on the SDPA-MPS contract (all cases) next to
(a) one torch.export of the seed's repro with a dynamic query length and (b) a sweep of static exports
over L = 1..64. Every side runs as a fresh process from this one benchmark run; medians of REPEAT runs.

    .venv/bin/python bench/bench_verify.py [--repeat N]
"""

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OP = "aten._scaled_dot_product_attention_math_for_mps"


def timed(cmd, expect=(0,)):
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if res.returncode not in expect:
        sys.exit(f"{' '.join(map(str, cmd))} exited {res.returncode}: {res.stderr[-500:]}")
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    py = sys.executable
    sides = {
        "shapecheck verify op (108 cases, installed kernel)": [py, "-m", "shapecheck", "verify", "op", OP],
        "(a) torch.export, dynamic seq, 1 export": [py, "bench/seed_export.py", "dynamic"],
        "(b) torch.export, static sweep L=1..64": [py, "bench/seed_export.py", "sweep"],
    }
    times = {}
    for name, cmd in sides.items():
        runs = [timed(cmd) for _ in range(args.repeat if "sweep" not in name else 1)]
        times[name] = statistics.median(runs)
    verify = times["shapecheck verify op (108 cases, installed kernel)"]
    print("| what | seconds (whole process) | shapecheck / this |")
    print("|---|---:|---:|")
    for name, t in times.items():
        print(f"| {name} | {t:.2f} | {verify / t:.2f}x |")
    a = times["(a) torch.export, dynamic seq, 1 export"]
    b = times["(b) torch.export, static sweep L=1..64"]
    print()
    print(f"target: verify <= 1.0x (a): {verify / a:.2f}x -> {'met' if verify <= a else 'NOT met'}")
    print(f"target: verify >= 20x faster than (b): {b / verify:.1f}x -> {'met' if b / verify >= 20 else 'NOT met'}")


if __name__ == "__main__":
    main()
