"""The test suite before and after its stratification (issue 21, item 8), side by side in one run.

The old suite is a ``git worktree`` of a commit from before the change (by default the parent of the commit
that split tests/ into unit, cli, acceptance and install); the new one is this checkout. Each side runs in an
environment of its own: a scratch venv whose site-packages links every package of this venv but the editable
shapecheck, plus a path entry for that side's tree, so the suite, the ``python -m shapecheck`` processes it
starts and the wheel its install tests build all come from the same tree. Wall time and CPU time (user plus
system of pytest and every process it waited for) are reported for each run; sides alternate when
``--repeat`` is over 1, and the load average is noted before and after every run, since on a shared machine
only the CPU figure is comparable.

    .venv/bin/python bench/bench_suite.py                      # the whole suite, old and new
    .venv/bin/python bench/bench_suite.py --new-only -m "not slow"   # the edit loop's set, new side only
    .venv/bin/python bench/bench_suite.py --old REV --repeat 2 --json suite.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPLIT = "^tests: stratify"  # the subject of the commit that split the suite


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def pre_change_commit() -> str:
    """The parent of the commit that stratified tests/ (found by its subject)."""
    found = git("log", "--format=%H", "--extended-regexp", f"--grep={SPLIT}", "-1")
    if not found:
        sys.exit(f"bench_suite: no commit matching {SPLIT!r} in this history; pass --old REV")
    return git("rev-parse", f"{found}^")


def side_env(tree: Path, scratch: Path) -> Path:
    """A venv for ``tree``: this venv's packages, linked one by one (the editable install of this checkout left
    out), and a path entry for ``tree``. Returns its python."""
    venv = scratch / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    ours = Path(sysconfig.get_paths()["purelib"])
    for entry in ours.iterdir():
        name = entry.name
        if name.startswith(("__editable__", "torch_shapecheck")) or name == "__pycache__":
            continue
        target = purelib / name
        if not target.exists():
            target.symlink_to(entry)
    (purelib / "_bench_suite_tree.pth").write_text(f"{tree}\n")
    return python


def run_suite(python: Path, tree: Path, pytest_args: list[str]) -> dict:
    """One pytest run in ``tree``: wall, CPU of the whole process tree, the summary line, the load average."""
    before_load = os.getloadavg()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    res = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args], cwd=tree,
                         capture_output=True, text=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = [line for line in res.stdout.splitlines() if line.strip()]
    summary = next((line.strip("= ") for line in reversed(lines) if re.search(r"\d+ (passed|failed|error)", line)),
                   lines[-1] if lines else "")
    return {"wall_s": round(wall, 1),
            "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 1),
            "exit": res.returncode, "summary": summary,
            "load_before": [round(x, 2) for x in before_load], "load_after": [round(x, 2) for x in os.getloadavg()]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", help="the commit of the old suite (default: the parent of the stratifying commit)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per side, alternating old and new")
    ap.add_argument("--new-only", action="store_true", help="run this checkout's suite only")
    ap.add_argument("-m", dest="marker", help="a pytest -m expression for both sides (the old suite has no marks)")
    ap.add_argument("--pytest-args", default="", help="more pytest arguments for both sides (paths, -k, ...), "
                    "shell-quoted in one string")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()

    pytest_args = (["-m", args.marker] if args.marker else []) + shlex.split(args.pytest_args)
    scratch = Path(tempfile.mkdtemp(prefix="bench-suite-"))
    sides: dict[str, tuple[Path, Path]] = {}
    old_tree = None
    try:
        if not args.new_only:
            old = args.old or pre_change_commit()
            old_tree = scratch / "old"
            git("worktree", "add", "--detach", str(old_tree), old)
            sides[f"old ({old[:10]})"] = (side_env(old_tree, scratch / "old-env"), old_tree)
        sides[f"new ({git('rev-parse', '--short=10', 'HEAD')})"] = (side_env(ROOT, scratch / "new-env"), ROOT)
        rows: list[tuple[str, dict]] = []
        for i in range(args.repeat):
            for label, (python, tree) in sides.items():
                r = run_suite(python, tree, pytest_args)
                rows.append((label, r))
                print(f"[{i + 1}/{args.repeat}] {label}: wall {r['wall_s']} s, CPU {r['cpu_s']} s, exit {r['exit']}, "
                      f"{r['summary']}; load {r['load_before']} -> {r['load_after']}", flush=True)
        print(f"\nnproc {os.cpu_count()}; pytest {' '.join(pytest_args) or '(everything)'}\n")
        print("| suite | wall s | CPU s | result | load average before -> after (1, 5, 15 min) |")
        print("|---|---:|---:|---|---|")
        for label, r in rows:
            print(f"| {label} | {r['wall_s']} | {r['cpu_s']} | {r['summary']} | {r['load_before']} -> {r['load_after']} |")
        if len(sides) == 2:
            by = {label: [r for lab, r in rows if lab == label] for label in sides}
            (o, on), (n, nn) = ((k, min(x["cpu_s"] for x in v)) for k, v in by.items())
            ow, nw = (min(x["wall_s"] for x in v) for v in by.values())
            print(f"\nnew / old: wall {nw / ow:.2f}x, CPU {nn / on:.2f}x (least of each side)")
        if args.json:
            args.json.write_text(json.dumps([{"suite": label, **r} for label, r in rows], indent=2) + "\n")
    finally:
        if old_tree is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(old_tree)], cwd=ROOT, capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
