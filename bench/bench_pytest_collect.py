"""Cost of collecting a project's shapecheck pytest entries when `-k` deselects them all: what a developer
pays on every `pytest -k other_test` once a suite holds `shapecheck.fuzz_test(...)` lines. Both sides run as
fresh processes from this one run, several times; medians are printed as a markdown table.

    .venv/bin/python bench/bench_pytest_collect.py [--repeat 5]

(a) `python -c "import torch"`: the floor; (b) `pytest --collect-only -k nothing` on a project of three
`fuzz_test` entries (one op with verify examples, two with --meta kernels); (b) - (a) is what shapecheck adds.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OP = "aten::_scaled_dot_product_attention_math_for_mps"
PROJECT = f"""
import shapecheck

test_installed = shapecheck.fuzz_test("{OP}")
test_wrong_ev = shapecheck.fuzz_test("{OP}", meta="{ROOT}/tests/kernels/fuzz_mutants.py:output0_uses_key_length")
test_guard = shapecheck.fuzz_test("{OP}", meta="{ROOT}/tests/kernels/fuzz_mutants.py:branches_on_query_length")
"""


def seconds(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if res.returncode not in (0, 5):  # 5: pytest collected nothing to run (all deselected)
        sys.exit(f"{' '.join(cmd)} exited {res.returncode}: {res.stdout[-800:]}{res.stderr[-800:]}")
    return dt


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "test_project.py").write_text(PROJECT)
        floor, collect = [], []
        for _ in range(ns.repeat):
            floor.append(seconds([sys.executable, "-c", "import torch"], project))
            collect.append(seconds([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only",
                                    "-k", "nothing", str(project)], project))
    a, b = statistics.median(floor), statistics.median(collect)
    print("| what | median s |\n|---|---:|")
    print(f"| (a) `python -c 'import torch'` | {a:.2f} |")
    print(f"| (b) `pytest --collect-only -k nothing`, 3 `fuzz_test` entries | {b:.2f} |")
    print(f"| (b) - (a): what shapecheck and pytest add | {b - a:.2f} |")


if __name__ == "__main__":
    main()
