"""Whole-process time of `shapecheck verify op` on the SDPA-MPS contract (all 108 cases) next to
(a) one torch.export of the seed's repro with a dynamic query length and (b) a sweep of static exports
over L = 1..64, all started as fresh processes from this one benchmark run (medians of --repeat runs).

The sweep is measured two ways, because "a sweep" is run two ways:
  (b1) one process that exports L = 1..64 in a loop (torch is imported once);
  (b2) one process per L, as a sweep script or a CI matrix runs the seed's repro: sequentially, and two at a
       time (this machine has 2 cores, and verify uses both by default).

    .venv/bin/python bench/bench_verify.py [--repeat N] [--no-per-process]
"""

import argparse
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OP = "aten._scaled_dot_product_attention_math_for_mps"
SWEEP = range(1, 65)


def run(cmd, expect=(0,)):
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if res.returncode not in expect:
        sys.exit(f"{' '.join(map(str, cmd))} exited {res.returncode}: {res.stderr[-500:]}")


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-per-process", action="store_true", help="skip (b2), the 64-process sweeps (~4 min)")
    args = ap.parse_args()
    py = sys.executable
    verify = "shapecheck verify op (108 cases, installed kernel; --jobs auto = 2 here)"
    sides = {
        verify: ([py, "-m", "shapecheck", "verify", "op", OP], args.repeat),
        "shapecheck verify op --jobs 1 (one process)": ([py, "-m", "shapecheck", "verify", "op", OP, "--jobs", "1"],
                                                        args.repeat),
        "(a) torch.export, dynamic seq, 1 export": ([py, "bench/seed_export.py", "dynamic"], args.repeat),
        "(b1) torch.export, static L=1..64, one process": ([py, "bench/seed_export.py", "sweep"], 1),
    }
    times = {}
    for name, (cmd, n) in sides.items():
        times[name] = statistics.median(timed(lambda c=cmd: run(c)) for _ in range(n))
    if not args.no_per_process:
        cmds = [[py, "bench/seed_export.py", "static", str(n)] for n in SWEEP]
        times["(b2) torch.export, static L=1..64, a process per L"] = timed(lambda: [run(c) for c in cmds])
        with ThreadPoolExecutor(2) as pool:
            times["(b2) the same, two processes at a time"] = timed(lambda: list(pool.map(run, cmds)))
    v = times[verify]
    print("| what | seconds (whole process) | shapecheck / this |")
    print("|---|---:|---:|")
    for name, t in times.items():
        print(f"| {name} | {t:.2f} | {v / t:.2f}x |")
    print()
    a = times["(a) torch.export, dynamic seq, 1 export"]
    print(f"target: verify <= 1.0x (a): {v / a:.2f}x -> {'met' if v <= a else 'NOT met'}")
    for name, t in times.items():
        if name.startswith("(b"):
            print(f"target: verify >= 20x faster than {name.split(')')[0]})"
                  f" [{name}]: {t / v:.1f}x -> {'met' if t / v >= 20 else 'NOT met'}")
    floor = statistics.median(timed(lambda: run([py, "-c", "import torch"])) for _ in range(args.repeat))
    print(f"floor: `python -c 'import torch'` alone takes {floor:.2f} s")


if __name__ == "__main__":
    main()
