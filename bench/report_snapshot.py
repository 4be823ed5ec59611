"""Snapshot the JSON reports of every command over the shipped contracts and every kernel under tests/kernels,
to show that a refactoring keeps behaviour: run it before and after, then ``--compare BEFORE AFTER``.

    .venv/bin/python bench/report_snapshot.py --out /tmp/before
    .venv/bin/python bench/report_snapshot.py --out /tmp/after
    .venv/bin/python bench/report_snapshot.py --compare /tmp/before /tmp/after

Timings (keys ``seconds``, ``timings``, ``examples_per_second``, and ``1.23s`` in text) are dropped; everything else is compared exactly.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "tests" / "kernels"
SDPA_MPS = "aten::_scaled_dot_product_attention_math_for_mps"
ONE_CASE = "rank=4,mask=bool,is_causal=false,dtype=float32,enable_gqa=false"


def kernel_functions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
            and not n.decorator_list]


def runs() -> dict[str, list[str]]:
    """name -> shapecheck arguments (each prints one JSON document)."""
    out: dict[str, list[str]] = {}
    for contract in sorted((ROOT / "contracts").rglob("*.toml")):
        op = f"{contract.parent.name}::{contract.stem}"
        out[f"verify-{contract.stem}"] = ["verify", "op", op, "--format", "json", "-j", "1"]
        out[f"ref-{contract.stem}"] = ["ref", "check", op, "--examples", "4", "--seed", "0", "--format", "json"]
        out[f"fuzz-{contract.stem}"] = ["fuzz", "op", op, "--examples", "20", "--seed", "0", "--format", "json"]
    for fn in kernel_functions(KERNELS / "sdpa_kernels.py"):
        out[f"verify-sdpa_kernels-{fn}"] = ["verify", "op", SDPA_MPS, "--meta", f"tests/kernels/sdpa_kernels.py:{fn}",
                                            "--case", ONE_CASE, "--format", "json", "-j", "1"]
    for fn in kernel_functions(KERNELS / "fuzz_mutants.py"):
        out[f"fuzz-fuzz_mutants-{fn}"] = ["fuzz", "op", SDPA_MPS, "--meta", f"tests/kernels/fuzz_mutants.py:{fn}",
                                          "--examples", "20", "--seed", "0", "--format", "json"]
    out["verify-regressed-meta-source"] = ["verify", "op", SDPA_MPS, "--meta-source",
                                           "tests/kernels/regressed_registrations.py", "--format", "json", "-j", "1"]
    out["gate"] = ["gate", "--json", "{json}", "-j", "1"]
    out["gate-regressed"] = ["gate", "--meta-source", "tests/kernels/regressed_registrations.py", "--json",
                             "{json}", "-j", "1"]
    return out


TIMING_KEYS = {"seconds", "timings", "examples_per_second"}
_SECONDS = re.compile(r"\b\d+\.\d+s\b")


def strip_timings(doc):
    if isinstance(doc, dict):
        return {k: strip_timings(v) for k, v in doc.items() if k not in TIMING_KEYS}
    if isinstance(doc, list):
        return [strip_timings(v) for v in doc]
    if isinstance(doc, str):
        return _SECONDS.sub("<t>s", doc)
    return doc


def snapshot(out_dir: Path, only: list[str]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, args in runs().items():
        if only and not any(o in name for o in only):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            json_file = Path(tmp) / "report.json"
            res = subprocess.run([sys.executable, "-m", "shapecheck", *(a.format(json=json_file) for a in args)],
                                 capture_output=True, text=True, cwd=ROOT)
            text = json_file.read_text() if json_file.is_file() else res.stdout
        text = text.replace(str(ROOT) + "/", "").replace(str(ROOT), ".")  # the same tree at another place
        start = text.find("{")
        try:
            doc = strip_timings(json.loads(text[start:])) if start >= 0 else None
        except json.JSONDecodeError:
            doc = None
        stderr = res.stderr.replace(str(ROOT) + "/", "").strip().splitlines()[-1:] if doc is None else []
        record = {"args": args, "exit": res.returncode, "json": doc, "stderr": stderr}
        (out_dir / f"{name}.json").write_text(json.dumps(record, indent=1, sort_keys=True))
        print(f"{name}: exit {res.returncode}", flush=True)


def diff(a, b, where="") -> list[str]:
    if type(a) is not type(b):
        return [f"{where}: {a!r} -> {b!r}"]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{where}.{k}: {'added' if k in b else 'removed'}")
            else:
                out += diff(a[k], b[k], f"{where}.{k}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items -> {len(b)} items"] + diff(a[:min(len(a), len(b))], b[:min(len(a), len(b))], where)
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} -> {b!r}"]


def compare(before: Path, after: Path) -> int:
    differences = 0
    for file in sorted(before.glob("*.json")):
        other = after / file.name
        if not other.is_file():
            print(f"{file.stem}: missing after")
            differences += 1
            continue
        d = diff(json.loads(file.read_text()), json.loads(other.read_text()))
        differences += bool(d)
        for line in d[:40]:
            print(f"{file.stem}{line}")
        if len(d) > 40:
            print(f"{file.stem}: ... {len(d) - 40} more")
    print(f"{differences} of {len(list(before.glob('*.json')))} runs differ")
    return 1 if differences else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--only", action="append", default=[], help="runs whose name contains this text")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    ns = parser.parse_args()
    if ns.compare:
        return compare(*ns.compare)
    if not ns.out:
        parser.error("--out DIR or --compare BEFORE AFTER")
    snapshot(ns.out, ns.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
