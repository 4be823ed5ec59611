"""What the [[rejects]] obligations (SC021) add to `shapecheck gate` over the shipped SDPA family, in one run:
the family as shipped next to the same contracts with every `[[rejects]]` turned into a `dispatcher-limit`
(the same domains, no obligation on the meta kernel). Runs alternate, each a fresh process; medians.

    .venv/bin/python bench/bench_rejects.py [--repeat N]
"""

import argparse
import re
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gate import SHIPPED, gate  # noqa: E402


def without_obligations(text: str) -> str:
    """Every [[rejects]] a dispatcher limit (its kind line replaced or added); SC021 suppressions dropped."""
    text = re.sub(r'(?m)^kind = "(runtime-check|dispatcher-limit)"\n', "", text)
    text = re.sub(r"(?m)^\[\[rejects\]\]\n", '[[rejects]]\nkind = "dispatcher-limit"\n', text)
    return re.sub(r'\[\[suppress\]\]\nrule = "SC021"\n(?:[a-z]+ = .*\n)*', "", text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    family = sorted(p for p in (SHIPPED / "aten").glob("_scaled_dot_product_*.toml"))
    with tempfile.TemporaryDirectory(prefix="bench_rejects_") as tmp:
        tmp = Path(tmp)
        plain = tmp / "plain"
        plain.mkdir()
        for p in family:
            (plain / p.name).write_text(without_obligations(p.read_text()))
        out = tmp / "gate.json"
        rows = {"with [[rejects]] obligations": [], "rejects as dispatcher limits": []}
        for _ in range(args.repeat):
            for label, paths in (("with [[rejects]] obligations", family), ("rejects as dispatcher limits", [plain])):
                wall, doc = gate(paths, out)
                rows[label].append((wall, sum(r["seconds"] for r in doc["reports"]), doc["exit_code"]))
    print(f"gate over the {len(family)} SDPA contracts, median of {args.repeat} runs each (fresh processes)\n")
    print("| contracts | whole process (s) | verify time in gate (s) | exit |")
    print("|---|---:|---:|---:|")
    med = {}
    for label, runs in rows.items():
        med[label] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
        print(f"| {label} | {med[label][0]:.2f} | {med[label][1]:.2f} | {runs[0][2]} |")
    a, b = med["with [[rejects]] obligations"], med["rejects as dispatcher limits"]
    print(f"\nadded by the obligations: {100 * (a[0] / b[0] - 1):+.0f}% whole process, "
          f"{100 * (a[1] / b[1] - 1):+.0f}% verify time (target: at most +30%)")


if __name__ == "__main__":
    main()
