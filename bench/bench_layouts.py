"""What input layouts cost: ``verify op`` of a contract whose input layout is a choice, with 1, 2 and 3 layouts
in that choice (each layout added is one more case per combination of the other choices), each in a fresh
process, alternating, in one run. Two contracts: the shipped avg_pool2d (16 cases per layout, torch's meta
kernel) and the pooling twin of tests/kernels (1 case per layout, a fake that reads the input's strides).
Prints a markdown table (median wall times, the least CPU time) and the cost of each added layout relative to
one layout.

    .venv/bin/python bench/bench_layouts.py [--repeat N]
"""

import argparse
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# (op, contract, the layout choice, the output's layout for the permuted input, extra verify arguments). The
# permuted input (0, 3, 2, 1) is not channels_last: torch's pooling allocates a contiguous output for it
# (suggest_memory_format), pool_fixed a channels_last one (it reads only the unit channel stride).
TARGETS = [
    ("aten::avg_pool2d", ROOT / "contracts" / "aten" / "avg_pool2d.toml", "memory_format", "contiguous", ()),
    ("sc_layouts::pool2x2", ROOT / "tests" / "kernels" / "layout_pool.toml", "memory_format", "(0, 2, 3, 1)",
     ("--meta", str(ROOT / "tests" / "kernels" / "layout_kernels.py:pool_fixed"))),
]


def variant(text: str, choice: str, n: int, permuted_out: str) -> str:
    """The contract with ``n`` layouts in its layout choice: contiguous, channels_last, then the dim order
    (0, 3, 2, 1) (through a ``{when, value}`` alternative: a choice of layouts takes names only), whose output
    layout ``permuted_out`` replaces ``like ARG`` (so that every variant passes)."""
    names = ["contiguous", "channels_last", "permuted"][:n]
    text = re.sub(rf"^{choice} = \[.*\].*$", f"{choice} = {names!r}".replace("'", '"'), text, count=1, flags=re.M)
    if n < 3:
        return text
    alts = [f'{{ when = "{choice} == \'permuted\'", value = "(0, 3, 2, 1)" }}',
            f'{{ when = "{choice} == \'channels_last\'", value = "channels_last" }}', '{ value = "contiguous" }']
    text = text.replace(f'layout = "{choice}"', f"layout = [{', '.join(alts)}]", 1)
    like = re.search(r'layout = "(like \w+)"', text)
    assert like, "the output follows the input's layout"
    out = f'[{{ when = "{choice} == \'permuted\'", value = "{permuted_out}" }}, {{ value = "{like.group(1)}" }}]'
    return text.replace(like.group(0), f"layout = {out}", 1)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(op: str, contract: Path, extra: tuple[str, ...]) -> tuple[float, float, str]:
    cmd = [sys.executable, "-m", "shapecheck", "verify", "op", op, "--contract", str(contract), "-j", "1", "--no-cache",
           *extra]
    t0, c0 = time.perf_counter(), _cpu()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    if res.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} exited {res.returncode}: {res.stderr[-800:]}{res.stdout[-800:]}")
    first = res.stdout.splitlines()[0]
    cases = re.search(r"\((\d+) cases checked", first)
    return wall, cpu, f"{first.split(':')[0]} {cases.group(1) if cases else '?'} cases"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"`verify op -j 1 --no-cache`, {args.repeat} runs per row, alternating\n")
    print("| contract | layouts | verdict, cases | process s (median) | CPU s (least) | CPU over 1 layout |")
    print("|---|---:|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="bench_layouts_") as tmp:
        for op, path, choice, permuted_out, extra in TARGETS:
            files = []
            for n in (1, 2, 3):
                f = Path(tmp) / f"{path.stem}_{n}.toml"
                f.write_text(variant(path.read_text(), choice, n, permuted_out))
                files.append(f)
            runs: dict[int, list[tuple[float, float, str]]] = {1: [], 2: [], 3: []}
            for _ in range(args.repeat):
                for n, f in zip((1, 2, 3), files):
                    runs[n].append(run(op, f, extra))
            base = min(r[1] for r in runs[1])
            for n in (1, 2, 3):
                wall = statistics.median(r[0] for r in runs[n])
                cpu = min(r[1] for r in runs[n])
                print(f"| {path.relative_to(ROOT)} | {n} | {runs[n][0][2]} | {wall:.2f} | {cpu:.2f} | "
                      f"{cpu / base:.2f}x |")


if __name__ == "__main__":
    main()
