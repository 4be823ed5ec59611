"""A verify run's time should not depend on what ran before it in the process (a test worker, an embedding
tool, the gate's parent): the same ``verify_contract`` run again and again in one process, each run's seconds
and their ratio to the first. The default target is the toy contract whose domain is nonlinear
(tests/kernels/shuffle_channels.toml, ``Ci == Co * PH * PW``), where z3's shared global context made every run
after the first about 9 times slower (1.1 s, then 10.1 s each) until each solver session got a context of its
own. The reports are compared too: they must be equal apart from timings.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_repeat.py [--runs N] [--op OP --contract FILE --meta FILE:FN]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--op", default="sctest::shuffle_channels")
    ap.add_argument("--contract", default=str(ROOT / "tests" / "kernels" / "shuffle_channels.toml"))
    ap.add_argument("--meta", default=f"{ROOT / 'tests' / 'kernels' / 'size_helpers.py'}:unshuffle_channels_wrong")
    args = ap.parse_args()
    from shapecheck.kernel import sources
    from shapecheck.kernel.load import load_target
    from shapecheck.prove.verify import Options, verify_contract

    contract, kernel = load_target(args.op, args.contract, sources.from_options(args.meta, None))
    seconds, docs = [], []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        report = verify_contract(contract, kernel, Options(jobs=1))
        seconds.append(time.perf_counter() - t0)
        doc = report.to_json()
        doc.pop("seconds", None)
        docs.append(json.dumps(doc, sort_keys=True, default=str))
    print(f"verify op {args.op} ({Path(args.contract).name}, {args.meta.rpartition('/')[2]}), {args.runs} runs in "
          "one process, -j 1")
    print("| run | seconds | / first |\n|---:|---:|---:|")
    for i, s in enumerate(seconds, 1):
        print(f"| {i} | {s:.2f} | {s / seconds[0]:.2f}x |")
    print(f"\nreports equal apart from timings: {all(d == docs[0] for d in docs)}")


if __name__ == "__main__":
    main()
