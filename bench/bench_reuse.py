"""What reusing a backed-size run's trace (``trace/reuse.py``) saves ``fuzz op``, and that it changes no report:
every kernel the fuzz-against-verify test knows (tests/unit/test_fuzz_finds_what_verify_finds.py: the SDPA-MPS
kernels on three cases, the kernels of tests/kernels with their contracts) and the installed SDPA-MPS kernel on
all 108 cases, each fuzzed twice in this one process with the same seed: every example's kernel run afresh, then
with reuse. Reports are compared whole but for their timings.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_reuse.py [--examples N] [--seed S] [--only LABEL]...
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from shapecheck.kernel import sources  # noqa: E402
from shapecheck.kernel.load import load_target  # noqa: E402
from shapecheck.runtime.fuzz import FuzzOptions, prepare, run  # noqa: E402
from shapecheck.trace import reuse  # noqa: E402
from tests.conftest import SDPA_CONTRACT, SDPA_MPS  # noqa: E402
from tests.unit.test_fuzz_finds_what_verify_finds import Target, targets  # noqa: E402


def comparable(report) -> dict:
    """A fuzz report less what differs from run to run (timings)."""
    out = report.to_json()
    for key in ("seconds", "timings", "examples_per_second"):
        out.pop(key, None)
    return out


def fuzz(target: Target, options: FuzzOptions, reused: bool) -> tuple[dict, float]:
    reuse.ENABLED = reused
    contract, kernel = load_target(target.op, target.contract, sources.from_options(target.meta, target.meta_source))
    t0 = time.process_time()
    report = run(prepare(contract, kernel, options))
    return comparable(report), time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", action="append", default=[], help="only the kernels whose label contains this")
    args = ap.parse_args()
    chosen = [Target(SDPA_MPS, str(SDPA_CONTRACT))] + targets()
    chosen = [t for t in chosen if not args.only or any(o in t.id for o in args.only)]
    rows, differ, totals = [], [], [0.0, 0.0]
    for t in chosen:
        if t.module:
            importlib.import_module(t.module)
        options = FuzzOptions(examples=args.examples, seed=args.seed, cases=t.cases, verify_examples=False)
        afresh, s0 = fuzz(t, options, False)
        again, s1 = fuzz(t, options, True)
        same = afresh == again
        if not same:
            differ.append(t.id)
        totals[0] += s0
        totals[1] += s1
        rows.append(f"| {t.id} | {again['verdict']} | {s0:.2f} | {s1:.2f} | {s1 / s0:.2f}x | {'yes' if same else 'NO'} |")
        print(rows[-1], flush=True)
    print("\n| kernel | verdict | CPU s afresh | CPU s reused | ratio | same report |\n|---|---|---:|---:|---:|---|")
    print("\n".join(rows))
    print(f"| all {len(rows)} | | {totals[0]:.1f} | {totals[1]:.1f} | {totals[1] / max(totals[0], 1e-9):.2f}x | "
          f"{len(rows) - len(differ)} of {len(rows)} |")
    if differ:
        print("reports that differ: " + ", ".join(differ))
        sys.exit(1)


if __name__ == "__main__":
    main()
