"""The failing kernel's speed in the default mode (issue 22 item 3): `verify op` on the whole SDPA-MPS contract
with the regressed kernel (tests/kernels/regressed_registrations.py, `--meta-source`) next to its passing twin
(the installed torch's kernel), in the default mode (the case-region shortcut) and with `--full`. Every run is
a fresh process started from this one benchmark run, the cache off; medians of --repeat runs. The target:
the regressed kernel in the default mode within 2x of its twin.

    .venv/bin/python bench/bench_shortcut.py [--repeat N] [--jobs N] [--no-full]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OP = "aten._scaled_dot_product_attention_math_for_mps"
REGRESSED = ("--meta-source", "tests/kernels/regressed_registrations.py")


def verify(extra: tuple[str, ...], jobs: int) -> tuple[float, dict]:
    """One fresh `verify op` process: (wall seconds, its JSON report)."""
    cmd = [sys.executable, "-m", "shapecheck", "verify", "op", OP, *extra, "--format", "json", "--no-cache",
           "-j", str(jobs)]
    env = dict(os.environ, SHAPECHECK_CACHE="0", PYTHONWARNINGS="ignore")
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if res.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} exited {res.returncode}: {res.stderr[-800:]}")
    return seconds, json.loads(res.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1, help="-j of every run (1: one process, the fairest ratio)")
    ap.add_argument("--no-full", action="store_true", help="skip the --full runs")
    args = ap.parse_args()
    modes = [("default", ())] + ([] if args.no_full else [("--full", ("--full",))])
    rows = []
    print(f"verify op {OP}, whole contract, -j {args.jobs}, medians of {args.repeat} fresh processes\n")
    print(f"{'mode':8} {'kernel':17} {'seconds':>8} {'verdict':>8} {'findings':>8} {'traces':>7} {'shared':>6}",
          flush=True)
    sides = (("twin (installed)", ()), ("regressed", REGRESSED))
    pair_ratios: dict[str, list[float]] = {}
    for mode, flags in modes:
        # the two sides alternate, a pair per repeat: a machine that drifts slower or faster during the run moves
        # both sides of a pair alike (the ratio of each pair, and their median, is printed too)
        times: dict[str, list[float]] = {side: [] for side, _ in sides}
        docs: dict[str, dict] = {}
        for _ in range(args.repeat):
            for side, extra in sides:
                t, docs[side] = verify((*extra, *flags), args.jobs)
                times[side].append(t)
        pair_ratios[mode] = [r / t for t, r in zip(times[sides[0][0]], times[sides[1][0]])]
        for side, _ in sides:
            doc = docs[side]
            traces = sum(c["traces"] for c in doc["cases"])
            rows.append((mode, side, statistics.median(times[side]), doc["verdict"], len(doc["violations"]), traces,
                         sum(1 for c in doc["cases"] if c.get("shared_with"))))
            mode_, side_, t, verdict, n, traces, shared = rows[-1]
            print(f"{mode_:8} {side_:17} {t:8.2f} {verdict:>8} {n:8d} {traces:7d} {shared:6d}", flush=True)
    by = {(m, s): t for m, s, t, *_ in rows}
    for mode, _ in modes:
        ratio = by[(mode, "regressed")] / by[(mode, "twin (installed)")]
        pairs = ", ".join(f"{r:.2f}" for r in pair_ratios[mode])
        print(f"\n{mode}: regressed / twin = {ratio:.2f}x (target in the default mode: at most 2x); each pair: "
              f"{pairs}; their median {statistics.median(pair_ratios[mode]):.2f}x")

if __name__ == "__main__":
    main()
