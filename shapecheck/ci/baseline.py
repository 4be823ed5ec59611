"""Baselines, as mypy and linters keep them: ``gate --write-baseline FILE`` records today's findings, and
``gate --baseline FILE`` fails only on findings that are not in it. A finding is known by its fingerprint:
rule, op, contract, case, contract path, expression, and the file and function of its kernel line (not the
line number, which moves when code above it changes). Suppressions in contracts stay for findings that have
a reason and an expiry; a baseline is for accepting what exists when a project adopts shapecheck.
Torch-free."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

from ..errors import UserError
from ..findings import Violation, verdict_of
from ..paths import locate
from ..result.run import ContractRun, RunResult

VERSION = 1
REASON = "in the baseline"


def fingerprint(v: Violation, run: ContractRun) -> str:
    loc = v.location
    where = (locate(loc.file)[0], loc.function) if loc is not None else ("", "")
    parts = [v.code, run.report.op, locate(run.contract.file)[0], v.case, v.path or "", v.expr, *where]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:20]


def _findings(run: ContractRun) -> list[Violation]:
    return [v for v in run.report.violations if not v.suppressed] + list(run.stale)


def write(result: RunResult, file: str) -> int:
    """Record every active finding of the run; the number recorded."""
    entries = []
    for run in result.runs:
        for v in _findings(run):
            loc = v.location
            entries.append({"fingerprint": fingerprint(v, run), "rule": v.code, "op": run.report.op, "case": v.case,
                            "expr": v.expr, "file": locate(loc.file)[0] if loc else None,
                            "line": loc.line if loc else None})
    entries.sort(key=lambda e: (e["op"], e["rule"], e["file"] or "", e["line"] or 0, e["case"]))
    doc = {"tool": "shapecheck", "version": VERSION, "findings": entries}
    try:
        Path(file).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    except OSError as err:
        raise UserError(f"--write-baseline {file}: cannot write ({err.strerror})") from None
    return len(entries)


def load(file: str) -> set[str]:
    try:
        doc = json.loads(Path(file).read_text(encoding="utf-8"))
    except OSError as err:
        raise UserError(f"--baseline {file}: cannot read ({err.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise UserError(f"--baseline {file}: not a shapecheck baseline ({err})") from None
    entries = doc.get("findings") if isinstance(doc, dict) and doc.get("version") == VERSION else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("fingerprint"), str)
                                                for e in entries):
        raise UserError(f"--baseline {file}: not a shapecheck baseline (version {VERSION}, a list of findings)")
    return {e["fingerprint"] for e in entries}


def apply(result: RunResult, file: str) -> int:
    """Mark the run's findings that the baseline holds as accepted (like a suppression), and recompute each
    contract's verdict: only new findings fail. The number of findings the baseline accepted."""
    known = load(file)
    accepted = 0
    for run in result.runs:
        marked = []
        for v in run.report.violations:
            if not v.suppressed and fingerprint(v, run) in known:
                v = replace(v, suppressed=f"{REASON} {file}")
                accepted += 1
            marked.append(v)
        run.report.violations = marked
        if any(not c.skipped for c in run.report.cases):  # a run with no case checked stays inconclusive
            run.report.verdict = verdict_of(marked)
        stale = [v for v in run.stale if fingerprint(v, run) not in known]
        accepted += len(run.stale) - len(stale)
        run.stale = stale
    return accepted
