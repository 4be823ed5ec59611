"""``shapecheck audit`` over the whole installed torch: wall time of the whole command (a fresh process, as CI
runs it), the counts it reports, and its slowest ops. The target: at most 120 s on a 2-core machine.

    .venv/bin/python bench/bench_audit.py [--jobs N] [--ops GLOB] [--json FILE]

The machine's load average is printed with the figures: on a shared machine, other processes' work shows up
in the wall time. The CPU time of the audit and its forked workers (which the audit waits for) does not
depend on that load; divided by the cores, it estimates the wall time on a machine that is not shared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=0, help="--jobs for the audit (0: one per core)")
    ap.add_argument("--ops", action="append", default=[], help="--ops GLOB (default: every op)")
    ap.add_argument("--json", help="keep the audit's JSON report in this file")
    args = ap.parse_args()
    out = Path(args.json) if args.json else Path(tempfile.mkstemp(suffix=".json")[1])
    cmd = [sys.executable, "-m", "shapecheck", "audit", "-j", str(args.jobs), "--output", f"json={out}", "-q"]
    for g in args.ops:
        cmd += ["--ops", g]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONWARNINGS="ignore"))
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if res.returncode not in (0, 1):
        sys.exit(f"audit exited {res.returncode}: {res.stderr[-2000:]}")
    doc = json.loads(out.read_text(encoding="utf-8"))
    c = doc["summary"]
    print(f"wall: {wall:.1f} s (target 120 s; load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end; --jobs {args.jobs})")
    cores = len(os.sched_getaffinity(0))
    print(f"cpu: {cpu:.1f} s in the audit and its workers; {cpu / cores:.1f} s per core on {cores} cores "
          "(the wall time of a machine with those cores to itself, if the work splits evenly)")
    print(f"ops audited: {c['ops']}: clean {c['clean']}, relation-only {c['relation_only']}, with findings "
          f"{c['with_findings']}, inconclusive {c['inconclusive']}, no inputs {c['no_inputs']}, "
          f"not run {c['not_run']}")
    print(f"findings: {c['findings']}: " + ", ".join(f"{k} {v}" for k, v in c["by_class"].items()))
    slow = sorted(doc["ops"], key=lambda r: -r["seconds"])[:5]
    print("slowest ops: " + ", ".join(f"{r['op']} {r['seconds']:.2f}s ({r['traces']} traces)" for r in slow))


if __name__ == "__main__":
    main()
