"""Where a cold `verify op` of the SDPA-MPS contract spends its time beyond `import torch`: one process imports
torch (timed), then runs `shapecheck verify op OP --no-cache --jobs 1` in process under cProfile (--jobs 1: a
forked worker's time would not be profiled). Printed:

- `import torch` alone, then the verify run's wall and CPU time, and the profiled total;
- the packages the run imports beyond torch (module counts), and the time spent importing;
- the time per area (the file each function lives in: shapecheck's subpackages, torch's symbolic shapes,
  dynamo, sympy, z3, the import system), from each function's own time;
- the top functions by cumulative time, shapecheck's own and the rest.

    .venv/bin/python bench/profile_verify.py [--top 25] [--pstats FILE] [-- VERIFY_ARGS...]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import sys
import time

OP = "aten._scaled_dot_product_attention_math_for_mps"
#: (area, a substring of the file path), first match wins
AREAS = (
    ("import system (finding, reading, executing modules)", "<frozen importlib"),
    ("shapecheck/contract (loading, binding cases)", "shapecheck/contract/"),
    ("shapecheck/logic (expressions, z3 front)", "shapecheck/logic/"),
    ("shapecheck/trace", "shapecheck/trace/"),
    ("shapecheck/prove", "shapecheck/prove/"),
    ("shapecheck/_torch", "shapecheck/_torch/"),
    ("shapecheck (other)", "shapecheck/"),
    ("torch symbolic shapes (ShapeEnv, guards)", "torch/fx/experimental/"),
    ("torch._dynamo", "torch/_dynamo/"),
    ("torch._subclasses (FakeTensor)", "torch/_subclasses/"),
    ("torch._prims_common / _refs / _meta_registrations", "torch/_"),
    ("torch (other)", "torch/"),
    ("sympy", "sympy/"),
    ("z3", "z3/"),
    ("hypothesis", "hypothesis/"),
    ("builtins and C calls", "~"),
)


def area(filename: str) -> str:
    for name, needle in AREAS:
        if needle in filename:
            return name
    return "other (stdlib, site-packages)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--pstats", default=None, help="also dump the raw profile here (snakeviz, pstats)")
    ap.add_argument("verify_args", nargs="*", help="more arguments of `verify op` after `--` (--meta-source FILE)")
    args = ap.parse_args()
    os.environ["SHAPECHECK_CACHE"] = "0"
    # the run in this process, where cProfile sees it: a supervised child (trace/isolate.py) left the profile
    # with the parent's wait for it alone
    os.environ["SHAPECHECK_ISOLATE"] = "0"
    t0, c0 = time.perf_counter(), time.process_time()
    import torch  # noqa: F401

    t_torch, c_torch = time.perf_counter() - t0, time.process_time() - c0
    before = set(sys.modules)
    from shapecheck.cli.main import main as shapecheck_main

    prof = cProfile.Profile()
    t1, c1 = time.perf_counter(), time.process_time()
    out = io.StringIO()
    prof.enable()
    try:
        with contextlib.redirect_stdout(out):
            shapecheck_main(["verify", "op", OP, "--no-cache", "--jobs", "1", "--format", "json",
                             *args.verify_args])
    except SystemExit as e:
        code = e.code
    prof.disable()
    t_run, c_run = time.perf_counter() - t1, time.process_time() - c1
    loaded = sorted(set(sys.modules) - before)
    by_pkg: dict[str, int] = {}
    for m in loaded:
        by_pkg[m.split(".")[0]] = by_pkg.get(m.split(".")[0], 0) + 1
    stats = pstats.Stats(prof)
    if args.pstats:
        stats.dump_stats(args.pstats)
    raw = stats.stats  # type: ignore[attr-defined]
    total = sum(tt for (_, _, _), (_, _, tt, _, _) in raw.items())
    areas: dict[str, float] = {}
    for (file, _, _), (_, _, tt, _, _) in raw.items():
        areas[area(file)] = areas.get(area(file), 0.0) + tt
    imports = max((ct for (f, _, fn), (_, _, _, ct, _) in raw.items() if fn == "_find_and_load"), default=0.0)

    print(f"load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores); verify exit code {code}")
    print(f"`import torch`: {t_torch:.2f} s wall, {c_torch:.2f} s CPU")
    print(f"verify op (after torch, --jobs 1, under cProfile): {t_run:.2f} s wall, {c_run:.2f} s CPU; "
          f"profiled own time {total:.2f} s")
    print(f"imports during the run: {imports:.2f} s (cumulative), {len(loaded)} modules: "
          + ", ".join(f"{p} {n}" for p, n in sorted(by_pkg.items(), key=lambda kv: -kv[1])[:12]))
    print("\n| area (own time of its functions) | seconds | share |\n|---|---:|---:|")
    for name, tt in sorted(areas.items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {tt:.2f} | {tt / total:.0%} |")
    for title, keep in (("shapecheck's functions", lambda f: "shapecheck/" in f),
                        ("everything else", lambda f: "shapecheck/" not in f)):
        print(f"\ntop {args.top} of {title} by cumulative time:")
        rows = sorted(((ct, tt, nc, f, ln, fn) for (f, ln, fn), (_, nc, tt, ct, _) in raw.items() if keep(f)),
                      reverse=True)[:args.top]
        for ct, tt, nc, f, ln, fn in rows:
            short = f.split("site-packages/")[-1].split("/shapecheck/", 1)[-1]
            print(f"  {ct:7.3f} cum {tt:7.3f} own {nc:7d} calls  {short}:{ln}({fn})")


if __name__ == "__main__":
    main()
