"""Time each metal_ref path against torch's own CPU ``scaled_dot_product_attention`` on the same shapes.

Run: ``python bench/bench_metal_ref.py [--reps N] [--warmup N]``. Prints a markdown table of medians and
the ratio reference/torch (target for the decode paths: <= 5x).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import metal_ref  # noqa: E402

CASES = [
    # (path, L, S, head_dim, dtype, extra run() options)
    *[("vector_1pass", n_l, 1000, 128, torch.float32, {}) for n_l in (1, 4, 8)],
    *[("vector_1pass", n_l, 4096, 128, torch.float32, {}) for n_l in (1, 8)],
    *[("vector_2pass", n_l, 4096, 128, torch.float32, {}) for n_l in (1, 2, 4, 8)],
    ("vector_2pass", 8, 4096, 128, torch.float16, {}),
    ("vector_1pass", 8, 1000, 128, torch.float32, {"sequential": True}),
    ("vector_2pass", 8, 4096, 128, torch.float32, {"sequential": True}),
    ("general", 128, 128, 128, torch.float32, {}),
    ("prefill", 128, 128, 128, torch.float32, {}),
    ("mpp", 128, 128, 128, torch.float16, {}),
]
BATCH, HEADS = 1, 8


def median_seconds(fn: Callable[[], object], reps: int, warmup: int) -> float:
    """Median wall time of ``fn`` over ``reps`` calls after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=25)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, B={BATCH}, H={HEADS}; "
          f"median of {args.reps} after {args.warmup} warm-up runs\n")
    print("| path | options | dtype | L | S | E | metal_ref ms | torch sdpa ms | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for path, n_l, n_s, e, dtype, opts in CASES:
        q = torch.randn(BATCH, HEADS, n_l, e, dtype=dtype)
        k = torch.randn(BATCH, HEADS, n_s, e, dtype=dtype)
        v = torch.randn(BATCH, HEADS, n_s, e, dtype=dtype)
        ref_t = median_seconds(
            lambda q=q, k=k, v=v, path=path, opts=opts: metal_ref.run(q, k, v, path=path, era="current", **opts),
            args.reps,
            args.warmup,
        )
        torch_t = median_seconds(lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v), args.reps, args.warmup)
        label = ",".join(f"{key}={val}" for key, val in opts.items()) or "-"
        dt = str(dtype).removeprefix("torch.")
        print(f"| {path} | {label} | {dt} | {n_l} | {n_s} | {e} | {ref_t * 1e3:.3f} | {torch_t * 1e3:.3f} | "
              f"{ref_t / torch_t:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
