"""Examples per second of `shapecheck fuzz op` on the SDPA-MPS contract (installed kernel, default size bound,
both eras, all cases), and where the time goes: generation (drawing and z3), the meta kernel (meta tensors
and FakeTensorMode), metal_ref, the float64 math, making tensors, and the rest (Hypothesis's engine).
In-process runs after one warm-up run; the verify run that supplies explicit examples is timed apart.

    .venv/bin/python bench/bench_fuzz.py [--examples N] [--seeds S1,S2,...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

OP = "aten::_scaled_dot_product_attention_math_for_mps"
PARTS = ("generation", "meta", "fake", "metal_ref", "math", "tensors", "other")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--examples", type=int, default=300)
    ap.add_argument("--seeds", default="1,2,3,4,5")
    args = ap.parse_args(argv)
    import torch

    from shapecheck.prove.verify import verify_op
    from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op
    from shapecheck.search.strategies import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_SIDE

    fuzz_op(OP, options=FuzzOptions(examples=30, seed=0, verify_examples=False))  # warm-up (imports, first calls)
    start = time.perf_counter()
    verify_op(OP)
    verify_seconds = time.perf_counter() - start
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; max_elements={DEFAULT_MAX_ELEMENTS}, "
          f"max_side={DEFAULT_MAX_SIDE}; {args.examples} examples per run\n")
    print("| seed | verdict | examples run | seconds | examples/s | "
          + " | ".join(PARTS) + " |")
    print("|---:|---|---:|---:|---:|" + "---:|" * len(PARTS))
    rates, shares = [], {p: [] for p in PARTS}
    for seed in (int(s) for s in args.seeds.split(",")):
        r = fuzz_op(OP, options=FuzzOptions(examples=args.examples, seed=seed, verify_examples=False))
        total = sum(r.timings.values())
        row = {p: r.timings.get(p, 0.0) / total for p in PARTS}
        rates.append(r.examples_per_second)
        for p in PARTS:
            shares[p].append(row[p])
        verdict = r.verdict if not r.failures else f"{r.verdict} ({r.failures[0].check})"
        print(f"| {seed} | {verdict} | {r.examples} | {r.seconds:.2f} | {r.examples_per_second:.1f} | "
              + " | ".join(f"{100 * row[p]:.0f}%" for p in PARTS) + " |")
    print(f"| median | | | | {statistics.median(rates):.1f} | "
          + " | ".join(f"{100 * statistics.median(shares[p]):.0f}%" for p in PARTS) + " |")
    print(f"\nverify op (explicit examples, once per run, not in the rates above): {verify_seconds:.2f}s")
    target = 50.0
    met = statistics.median(rates) >= target
    print(f"target >= {target:.0f} examples/s: {'met' if met else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
