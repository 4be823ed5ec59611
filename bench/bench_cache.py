"""The result cache, cold against warm, in one run: (a) `verify op` of the SDPA-MPS contract (installed kernel),
(b) `gate` over the shipped family, (c) the gate of a PR that changes one kernel: `--meta-source` a file holding
the installed SDPA-MPS kernel, then the same file with that kernel edited (one contract re-checked, the others
from the cache). Each run is a fresh process with a cache folder of this benchmark's own. Prints wall seconds
and the process's CPU seconds (user + system: this machine is shared, so wall time is noisy), medians of
`--repeat` runs for the warm and uncached sides. Prints a markdown table.

    .venv/bin/python bench/bench_cache.py [--repeat N]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OP = "aten::_scaled_dot_product_attention_math_for_mps"
TARGET_S = 0.3  # issue 16: a warm verify of the SDPA-MPS contract


def run(args, env) -> tuple[float, float, dict | None]:
    """(wall seconds, CPU seconds, the --format json document) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "shapecheck", *args, "--format", "json"], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode not in (0, 1):
        sys.exit(f"shapecheck {' '.join(args)} exited {res.returncode}: {res.stderr[-800:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(res.stdout)


def hits(doc: dict) -> tuple[int, int]:
    reports = doc.get("reports", [doc])
    return sum(1 for r in reports if r.get("cache")), len(reports)


def median_run(args, env, repeat):
    runs = [run(args, env) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), runs[-1][2]


def kernel_file(folder: Path) -> Path:
    """A _meta_registrations.py-style file holding the installed torch's SDPA-MPS kernel, as a PR would."""
    code = ("import inspect, torch\nfrom shapecheck import _compat as C\n"
            f"print(inspect.getsource(C.installed_meta(C.resolve_op({OP!r}))))")
    source = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout
    path = folder / "registrations.py"
    if not source.lstrip().startswith("@register_meta"):
        source = f"@register_meta([aten._scaled_dot_product_attention_math_for_mps])\n{source}"
    path.write_text(f"import torch\nfrom torch._meta_registrations import register_meta\n\naten = torch.ops.aten\n\n\n{source}")
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3, help="runs of each warm and uncached side (median)")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_cache_") as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, SHAPECHECK_CACHE="1", SHAPECHECK_CACHE_DIR=str(tmp / "cache"),
                   XDG_CONFIG_HOME=str(tmp / "config"))  # a key file of its own
        verify = ["verify", "op", OP]
        rows.append(("(a) verify op SDPA-MPS, --no-cache", *median_run([*verify, "--no-cache"], env, args.repeat)))
        rows.append(("(a) verify op SDPA-MPS, cold (empty cache: runs, stores)", *run(verify, env)))
        rows.append(("(a) verify op SDPA-MPS, warm (answered from the cache)", *median_run(verify, env, args.repeat)))
        rows.append(("(b) gate, shipped family, --no-cache", *median_run(["gate", "--no-cache"], env, args.repeat)))
        rows.append(("(b) gate, shipped family, cold", *run(["gate"], env)))
        rows.append(("(b) gate, shipped family, warm", *median_run(["gate"], env, args.repeat)))
        kernel = kernel_file(tmp)
        gate_pr = ["gate", "--meta-source", str(kernel)]
        rows.append(("(c) gate --meta-source PR file, cold", *run(gate_pr, env)))
        rows.append(("(c) gate --meta-source PR file, warm", *median_run(gate_pr, env, args.repeat)))
        kernel.write_text(kernel.read_text().replace("    def ensure_4d(x):", "    def ensure_4d(x):  # edited", 1))
        rows.append(("(c) the same, the SDPA-MPS kernel edited", *run(gate_pr, env)))
    print("| run | wall s | CPU s | from the cache |")
    print("|---|---:|---:|---:|")
    for name, wall, cpu, doc in rows:
        h, n = hits(doc)
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {h} of {n} |")
    by = {name: (wall, cpu) for name, wall, cpu, _ in rows}
    for what, cold, warm in (
            ("verify", "(a) verify op SDPA-MPS, --no-cache", "(a) verify op SDPA-MPS, warm (answered from the cache)"),
            ("gate", "(b) gate, shipped family, --no-cache", "(b) gate, shipped family, warm")):
        print(f"\n{what}: uncached / warm = {by[cold][0] / by[warm][0]:.1f}x wall, {by[cold][1] / by[warm][1]:.1f}x CPU")
    wall, cpu = by["(a) verify op SDPA-MPS, warm (answered from the cache)"]
    print(f"warm verify: {wall:.2f} s wall, {cpu:.2f} s CPU; target {TARGET_S} s: "
          f"{'met' if wall <= TARGET_S else 'met in CPU time only' if cpu <= TARGET_S else 'not met'}")


if __name__ == "__main__":
    main()
