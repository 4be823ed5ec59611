"""No crash loses a run (issue 22 item 3), counted: every kernel `bench_agreement.py` knows (the shipped contracts
with the installed kernels, the kernels and contracts of tests/kernels, tests/golden/examples) verified in the
default mode and with --full, in this one process. A crash is an internal error (SC023, a case's verdict
`error`, exit 4) or an exception out of `verify_op`; both are listed with their first line.

    PYTHONPATH=$PWD .venv/bin/python bench/crash_sweep.py [--jobs N] [--only LABEL]...

Kernels against the SDPA-MPS contract run on all of its cases here (bench_agreement takes three).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_agreement import targets  # noqa: E402

from shapecheck.findings import Verdict  # noqa: E402
from shapecheck.prove.verify import Options, verify_op  # noqa: E402
from shapecheck.rules import RuleCode  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=0, help="verify's --jobs (0: one per core)")
    ap.add_argument("--only", action="append", default=[], help="only the kernels whose label contains this")
    args = ap.parse_args()
    chosen = [t for t in targets(quick=False) if not args.only or any(o in t.label for o in args.only)]
    crashes: list[str] = []
    counts = {"default": [0, 0, 0.0], "--full": [0, 0, 0.0]}  # runs, cases, seconds
    for t in chosen:
        if t.module:
            importlib.import_module(t.module)
        for mode, full in (("default", False), ("--full", True)):
            t0 = time.perf_counter()
            try:
                r = verify_op(t.op, contract=t.contract, meta=t.meta, meta_source=t.meta_source,
                              options=Options(jobs=args.jobs, full=full))
            except Exception as err:  # noqa: BLE001 - what is counted here
                crashes.append(f"{t.label} [{mode}]: {type(err).__name__}: {str(err).splitlines()[0][:200]}")
                continue
            finally:
                counts[mode][2] += time.perf_counter() - t0
            counts[mode][0] += 1
            counts[mode][1] += len(r.cases)
            errors = [c.case for c in r.cases if c.verdict is Verdict.ERROR]
            internal = [v for v in r.violations if v.code is RuleCode.INTERNAL_ERROR]
            if errors or internal:
                first = internal[0].message.splitlines()[0][:200] if internal else ""
                crashes.append(f"{t.label} [{mode}]: {len(errors)} case(s) in error: {first}")
            print(f"{t.label} [{mode}]: {r.verdict.value}, {len(r.cases)} cases, {time.perf_counter() - t0:.1f}s",
                  flush=True)
    print()
    for mode, (runs, cases, seconds) in counts.items():
        print(f"{mode}: {runs} runs, {cases} cases, {seconds:.0f} s")
    print(f"crashes: {len(crashes)} (target 0)")
    for c in crashes:
        print(f"  {c}")


if __name__ == "__main__":
    main()
