"""``shapecheck audit`` (differential checks included) next to a torch.export sweep over torch's OpInfo ops: CPU
per op of each, side by side in one run (issue 23, item 6: the audit may cost no more CPU per op than the
export it stands in for).

    PYTHONPATH=.:DIR .venv/bin/python bench/bench_audit_export.py [--every K] [--limit N] [--json FILE]

DIR holds numpy and expecttest (torch's ``op_db`` needs both; the project's venv has neither):
``pip install --target DIR numpy expecttest``. The OpInfos taken are every K-th of ``op_db`` whose name is an aten
op FakeTensorMode runs. Each side is a fresh process:

- export: for each OpInfo, its first float32 CPU sample as a module, every tensor dim ``Dim.DYNAMIC``,
  ``torch.export.export``; the outcome is ``ok``, ``specialized`` (export refuses a dynamic dim),
  ``data-dependent`` or ``error``;
- audit: ``shapecheck audit --ops`` over the same aten ops (every overload of each name), ``--no-cache -j 1``.

CPU is the process's and its children's (``RUSAGE_CHILDREN``), so the audit's eager worker counts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _call_module(torch: object) -> type:
    class Call(torch.nn.Module):  # type: ignore[attr-defined, name-defined]
        """The OpInfo's op on the sample: its tensor arguments as inputs, its other arguments as constants."""

        def __init__(self, fn: object, consts: list, kwargs: dict) -> None:
            super().__init__()
            self.fn, self.consts, self.kw = fn, consts, kwargs

        def forward(self, *ts: object) -> object:
            it = iter(ts[1:])
            args = [next(it) if isinstance(a, torch.Tensor) else a for a in self.consts]  # type: ignore[attr-defined]
            return self.fn(ts[0], *args, **self.kw)

    return Call


def _export_side(names: list[str], out: str) -> None:
    """Runs in the export process: one export per OpInfo name, the outcome per name to ``out``."""
    import warnings

    import torch
    from torch.export import Dim

    warnings.simplefilter("ignore")
    from torch.testing._internal.common_methods_invocations import op_db

    by_name = {i.name: i for i in op_db}
    _Call = _call_module(torch)
    results = {}
    for name in names:
        info = by_name[name]
        try:
            sample = next(iter(info.sample_inputs("cpu", torch.float32, requires_grad=False)))
        except Exception as err:  # noqa: BLE001 - a sample generator that fails: no export either
            results[name] = f"no sample: {type(err).__name__}"
            continue
        tensors = [sample.input, *[a for a in sample.args if isinstance(a, torch.Tensor)]]
        consts = [a for a in sample.args]
        kwargs = dict(sample.kwargs)
        if not all(isinstance(t, torch.Tensor) for t in tensors):
            results[name] = "no sample: a non-tensor input"
            continue

        shapes = tuple({d: Dim.DYNAMIC for d in range(t.dim())} for t in tensors)
        try:
            torch.export.export(_Call(info.op, consts, kwargs), tuple(tensors), dynamic_shapes=(shapes,))  # *ts: one entry
            results[name] = "ok"
        except Exception as err:  # noqa: BLE001 - the export's verdict
            text = f"{type(err).__name__}: {err}"
            kind = "0/1-of-the-sample" if "0/1 specialized" in text else \
                "specialized" if ("specializ" in text or "Constraints violated" in text) else \
                "data-dependent" if "data-dependent" in text or "GuardOnDataDependent" in text else "error"
            results[name] = f"{kind}: {text[:300]}"
    Path(out).write_text(json.dumps(results), encoding="utf-8")


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=10, help="take every K-th OpInfo (1: all)")
    ap.add_argument("--limit", type=int, default=0, help="at most N OpInfos (0: no limit)")
    ap.add_argument("--json", help="keep the audit's JSON report in this file")
    ap.add_argument("--export-side", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.export_side:
        _export_side(json.loads(Path(args.export_side[0]).read_text(encoding="utf-8")), args.export_side[1])
        return
    from shapecheck._torch import audit as CA
    from shapecheck.audit.inputs import opinfo_names
    from shapecheck.audit.run import enumerate_ops

    db = CA.opinfo_db()
    if not db:
        sys.exit("torch's op_db does not load: put numpy and expecttest on PYTHONPATH (see the docstring)")
    packets: dict[str, list[str]] = {}
    for op in enumerate_ops((), {"aten"}, set()):
        packets.setdefault(op.partition("::")[2].partition(".")[0], []).append(op)
    chosen: list[tuple[str, list[str]]] = []
    for info in db[::args.every]:
        ops = sorted({op for n in opinfo_names(info) for op in packets.get(n, [])})
        if ops and info.name not in dict(chosen):
            chosen.append((info.name, ops))
    if args.limit:
        chosen = chosen[:args.limit]
    ops = sorted({op for _, o in chosen for op in o})
    env = dict(os.environ, PYTHONWARNINGS="ignore", TORCH_COMPILE_DISABLE="1")
    tmp = Path(tempfile.mkdtemp())
    (tmp / "names.json").write_text(json.dumps([n for n, _ in chosen]), encoding="utf-8")
    load = os.getloadavg()[0]
    e_wall, e_cpu, e_res = _run([sys.executable, __file__, "--export-side", str(tmp / "names.json"),
                                 str(tmp / "export.json")], env)
    if e_res.returncode != 0:
        sys.exit(f"export side exited {e_res.returncode}: {e_res.stderr[-2000:]}")
    report = Path(args.json) if args.json else tmp / "audit.json"
    cmd = [sys.executable, "-m", "shapecheck", "audit", "-j", "1", "--no-cache", "-q", "--output", f"json={report}"]
    for op in ops:
        cmd += ["--ops", op]
    a_wall, a_cpu, a_res = _run(cmd, env)
    if a_res.returncode not in (0, 1, 3):
        sys.exit(f"audit exited {a_res.returncode}: {a_res.stderr[-2000:]}")
    exported = json.loads((tmp / "export.json").read_text(encoding="utf-8"))
    doc = json.loads(report.read_text(encoding="utf-8"))
    outcomes: dict[str, int] = {}
    for v in exported.values():
        key = v.split(":")[0]
        outcomes[key] = outcomes.get(key, 0) + 1
    n_e, n_a = len(chosen), len(doc["ops"])
    print(f"{n_e} OpInfos (every {args.every}-th of op_db), {n_a} aten overloads audited; load average "
          f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print("| side | items | wall s | CPU s | CPU s per item |")
    print("|---|---:|---:|---:|---:|")
    print(f"| torch.export sweep (Dim.DYNAMIC, first sample) | {n_e} OpInfos | {e_wall:.1f} | {e_cpu:.1f} | "
          f"{e_cpu / max(n_e, 1):.3f} |")
    print(f"| shapecheck audit (OpInfo inputs, eager comparison, variants) | {n_a} overloads | {a_wall:.1f} | "
          f"{a_cpu:.1f} | {a_cpu / max(n_a, 1):.3f} |")
    print(f"ratio, CPU per item (audit / export): {(a_cpu / max(n_a, 1)) / max(e_cpu / max(n_e, 1), 1e-9):.2f}x")
    print("export outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    cov = doc.get("coverage", {})
    print(f"audit: {doc['summary']}; traced {cov.get('traced')}, compared with eager {cov.get('compared_with_eager')}")
    _agreement(chosen, exported, doc)


#: the audit's classes of a guard on a dim that torch.export with Dim.DYNAMIC installs (or refuses)
GUARDS = ("specialization", "zero-one", "constant-comparison", "modulo", "dim-branch", "data-dependent")
NARROWING = ("constant-comparison", "modulo")  # a guard that narrows one dim's range or values


def _agreement(chosen: list[tuple[str, list[str]]], exported: dict[str, str], doc: dict) -> None:
    """Per OpInfo, export's outcome next to the audit's guard findings on the OpInfo's overloads: recall of
    the specialisations export finds, guard findings where export succeeds (each listed: a false finding, or
    a guard the one sample export ran does not reach), relations inferred where export succeeds, and the
    narrowing guards the audit flags."""
    recs = {r["op"]: r for r in doc["ops"]}
    rows: dict[tuple[str, str], list[str]] = {}
    extra: list[str] = []
    narrowing = relations_ok = 0
    for name, ops in chosen:
        outcome = exported.get(name, "not run").split(":")[0]
        found = [f for op in ops for f in recs.get(op, {}).get("findings", [])]
        classes = sorted({f["class"] for f in found if f["class"] in GUARDS})
        traced = any(recs.get(op, {}).get("status") not in (None, "no-inputs", "not-run") for op in ops)
        pins = any(re.fullmatch(r"\w+ == \d+", q["expr"]) for op in ops for q in recs.get(op, {}).get("requires", []))
        audit = "guard finding" if classes else "pins a dim (requires x == c)" if pins else \
            "no guard finding" if traced else "not traced"
        rows.setdefault((outcome, audit), []).append(name)
        narrowing += sum(1 for f in found if f["class"] in NARROWING)
        if outcome == "ok" and classes:
            extra.append(f"{name}: {', '.join(classes)}")
        if outcome == "ok" and not classes and any(recs.get(op, {}).get("requires") for op in ops):
            relations_ok += 1
    print("\n| export outcome | audit | OpInfos |")
    print("|---|---|---:|")
    for (outcome, audit), names in sorted(rows.items()):
        print(f"| {outcome} | {audit} | {len(names)} |")
    spec = [n for (o, _), ns in rows.items() if o == "specialized" for n in ns]
    hit = [n for (o, a), ns in rows.items() if o == "specialized" and a != "no guard finding" and a != "not traced"
           for n in ns]
    print("\n0/1-of-the-sample: export specialised a dim the OpInfo sample gives size 0 or 1 (its 0/1 rule on the"
          " sample, not a specialisation in the kernel); specialized: the code pinned a dim to a constant")
    print(f"recall of export's specialisations (a guard finding, or an inferred requires pinning the dim): "
          f"{len(hit)} of {len(spec)}"
          + (f" (missed: {', '.join(sorted(set(spec) - set(hit)))})" if set(spec) - set(hit) else ""))
    print(f"export succeeds and the audit infers relations only (no guard finding): {relations_ok} OpInfos")
    print(f"export succeeds and the audit reports a guard: {len(extra)} OpInfos" + "".join(f"\n  - {e}" for e in extra))
    print(f"narrowing guards flagged (constant-comparison, modulo): {narrowing}")


if __name__ == "__main__":
    main()
