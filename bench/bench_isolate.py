"""What the supervised child costs (prove/crashes.py, trace/isolate.py): a cold `shapecheck verify op` of the
SDPA-MPS contract (108 cases, the installed kernel, the default --jobs) with the child (the default on Linux)
next to the same run with SHAPECHECK_ISOLATE=0 (one process, as before), each a fresh process, the pairs in
alternating order. Then the crashing kernel of tests/kernels/crashing.py on the whole contract: how long a run
takes that survives a crash in every causal case (with the child; in one process it dies at the first).

    .venv/bin/python bench/bench_isolate.py [--pairs N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OP = "aten._scaled_dot_product_attention_math_for_mps"


def timed(extra: list[str], isolate: bool) -> tuple[float, float, int]:
    """One fresh process: (wall s, CPU s of it and its children, exit code)."""
    env = dict(os.environ, SHAPECHECK_CACHE="0", PYTHONWARNINGS="ignore", SHAPECHECK_ISOLATE="1" if isolate else "0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "shapecheck", "verify", "op", OP, "-q", *extra], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, res.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    sides: dict[bool, list[tuple[float, float, int]]] = {True: [], False: []}
    for i in range(args.pairs):
        for isolate in ((True, False) if i % 2 == 0 else (False, True)):
            sides[isolate].append(timed([], isolate))
    print("| verify op, installed kernel | wall s (median) | CPU s (median) | exit |")
    print("|---|---:|---:|---:|")
    for isolate, name in ((True, "in a supervised child (default)"), (False, "SHAPECHECK_ISOLATE=0 (one process)")):
        runs = sides[isolate]
        print(f"| {name} | {statistics.median(r[0] for r in runs):.2f} | {statistics.median(r[1] for r in runs):.2f} "
              f"| {sorted({r[2] for r in runs})} |")
    w = [a[0] / b[0] for a, b in zip(sides[True], sides[False])]
    c = [a[1] / b[1] for a, b in zip(sides[True], sides[False])]
    print(f"\nchild / one process, median of per-pair ratios: wall {statistics.median(w):.3f}x, "
          f"CPU {statistics.median(c):.3f}x")
    crash = ["--meta", f"{ROOT / 'tests' / 'kernels' / 'crashing.py'}:segfaults_when_causal"]
    wall, cpu, code = timed(crash, True)
    print(f"crashing kernel (every causal case dies of SIGSEGV), with the child: {wall:.2f} s wall, {cpu:.2f} s CPU, "
          f"exit {code}")
    wall, cpu, code = timed(crash, False)
    print(f"the same in one process: {wall:.2f} s wall, exit {code} (killed by signal {-code if code < 0 else 0})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
