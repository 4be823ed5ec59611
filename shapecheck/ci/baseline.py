"""Baselines, as mypy and linters keep them, for ``gate`` and ``audit``: a file of today's findings, after which
only findings that are not in it fail. A finding is known by its fingerprint (``digest``): for the gate, rule,
op, contract, case, contract path, expression, and the file and function of its kernel line; for the audit,
rule, op, guard and the kernel's file and function (never the line number, which moves when code above it
changes). ``gate --write-baseline FILE`` records, ``gate --baseline FILE`` applies (``write``, ``apply``);
``audit --baseline FILE`` records when FILE is missing and applies otherwise (``apply_audit``). Each keeps its
own file format (``"tool"``) and messages. Suppressions in contracts stay for findings that have a reason and
an expiry; a baseline is for accepting what exists when a project adopts shapecheck. Torch-free."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..findings import Finding, verdict_of
from ..limits import BASELINE_BYTES, read_json
from ..paths import locate, write_text
from ..result.run import ContractRun, RunResult
from ..rules import NEVER_ACCEPTED

VERSION = 1
AUDIT_VERSION = 1
REASON = "in the baseline"


def digest(parts: list[str]) -> str:
    """A finding's fingerprint: its identifying parts, hashed."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:20]


def fingerprint(v: Finding, run: ContractRun) -> str:
    loc = v.location
    where = (locate(loc.file)[0], loc.function) if loc is not None else ("", "")
    return digest([v.code, run.report.op, locate(run.contract.file)[0], v.case, str(v.path or ""), v.expr, *where])


def _findings(run: ContractRun) -> list[Finding]:
    """The findings a baseline records: active ones, never an inconclusive or internal-error one (no verdict)."""
    return [v for v in run.report.violations if not v.suppressed and v.code not in NEVER_ACCEPTED] + list(run.stale)


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
    _write(file, {"tool": "shapecheck", "version": VERSION, "findings": entries}, "--write-baseline")
    return len(entries)


def load(file: str) -> set[str]:
    """The fingerprints a gate baseline holds (bad input naming the file when it is not one)."""
    return _read(file, "a shapecheck baseline", VERSION, "shapecheck")


def _write(file: str, doc: dict[str, Any], option: str) -> None:
    try:
        write_text(file, json.dumps(doc, indent=1) + "\n")
    except OSError as err:
        raise UserError(f"{option} {file}: cannot write ({err.strerror})") from None


def _read(file: str, what: str, version: int, tool: str | None = None) -> set[str]:
    """The fingerprints a baseline file holds (``tool``: the ``"tool"`` it must name, when given), read within
    ``limits.BASELINE_BYTES`` as a regular file (a FIFO or ``/dev/zero`` is refused before a byte is read)."""
    doc = read_json(file, BASELINE_BYTES, "--baseline", what)
    # the version an int (JSON's true and 1.0 equal 1 in Python), the tool the writer's
    entries = doc.get("findings") if isinstance(doc, dict) and type(doc.get("version")) is int \
        and doc.get("version") == version and (tool is None or doc.get("tool") == tool) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("fingerprint"), str)
                                                for e in entries):
        raise UserError(f"--baseline {file}: not {what} (version {version}, a list of findings)")
    fields = GATE_FIELDS if tool == "shapecheck" else AUDIT_FIELDS
    top = ("tool", "version", "findings") if tool == "shapecheck" else ("tool", "version", "findings", "untraced")
    extra = [k for k in doc if k not in top]
    if extra:
        raise UserError(f"--baseline {file}: [{extra[0]}]: unknown key (a baseline has {', '.join(top)})")
    from ..rules import Command

    command = Command.GATE if tool == "shapecheck" else Command.AUDIT
    for i, e in enumerate(entries):
        problem = _entry_problem(e, fields, command)
        if problem:
            raise UserError(f"--baseline {file}: [findings[{i}]{problem}")
    return {e["fingerprint"] for e in entries}


#: the keys of a baseline's finding, each with the types its value may have (what ``write`` and ``apply_audit``
#: record); ``rule`` must also be a rule of the registry
GATE_FIELDS: dict[str, tuple[type, ...]] = {"fingerprint": (str,), "rule": (str,), "op": (str,), "case": (str,),
                                            "expr": (str,), "file": (str, type(None)), "line": (int, type(None))}
AUDIT_FIELDS: dict[str, tuple[type, ...]] = {"fingerprint": (str,), "rule": (str,), "op": (str,), "expr": (str,)}
REQUIRED = ("fingerprint", "rule", "op")


def _entry_problem(entry: dict[str, Any], fields: dict[str, tuple[type, ...]], command: Any) -> str:
    """What is wrong with one finding of a baseline ("" when nothing), as ``.key]: why``: an unknown key, a value
    of the wrong type (a bool is no line number), a rule the registry lacks, or one ``command``'s runs never
    report (an audit rule in the gate's baseline)."""
    from ..rules import RuleCode, rules_of

    for key, value in entry.items():
        if key not in fields:
            return f"]: unknown key {key!r} (a finding has {', '.join(fields)})"
        if not isinstance(value, fields[key]) or isinstance(value, bool):
            return f".{key}]: expected {' or '.join('null' if t is type(None) else t.__name__ for t in fields[key])}, " \
                   f"found {type(value).__name__}"
    missing = [k for k in REQUIRED if k not in entry]
    if missing:
        return f"]: no {missing[0]!r} (each finding has {', '.join(REQUIRED)})"
    rule = entry["rule"]
    if rule not in {c.value for c in RuleCode}:
        return f".rule]: no rule {rule!r} in the registry (docs/rules.md)"
    if RuleCode(rule) not in rules_of(command):
        return f".rule]: {rule} is never reported by {command.value} (docs/rules.md)"
    return ""


def apply(result: RunResult, file: str, known: set[str] | None = None) -> int:
    """Mark the run's findings that the baseline holds as accepted (like a suppression), and recompute each
    contract's verdict: only new findings fail. The number of findings the baseline accepted. ``known``: the
    baseline's fingerprints when already loaded (the gate reads it before any work)."""
    known = load(file) if known is None else known
    accepted = 0
    for run in result.runs:
        marked = []
        for v in run.report.violations:
            if not v.suppressed and v.code not in NEVER_ACCEPTED and fingerprint(v, run) in known:
                v = replace(v, suppressed=f"{REASON} {file}")
                accepted += 1
            marked.append(v)
        checked = any(not c.skipped for c in run.report.cases)  # a run with no case checked stays inconclusive
        run.report = replace(run.report, violations=tuple(marked),
                             verdict=verdict_of(marked) if checked else run.report.verdict)
        stale = [v for v in run.stale if fingerprint(v, run) not in known]
        accepted += len(run.stale) - len(stale)
        run.stale = stale
    return accepted


# ---------------------------------------------------------------------------------------------------------
# audit --baseline FILE: the audit's records (plain data, one per op)


def audit_fingerprint(rec: dict[str, Any], f: dict[str, Any]) -> str:
    """Rule, op, guard and the kernel's file and function (not the line, which moves when code above it
    changes); for a call only one kernel refuses (SC041, SC042), that kernel's error too, its numbers aside: the
    expression says only "the fake returns where the eager kernel raises", and a check the eager kernel gains
    later is another finding (hunt 52), as it is within one run (``audit.keys.refusal``)."""
    from ..audit.keys import refusal

    loc = f.get("location") or {}
    parts = [f["code"], rec["op"], f["expr"], locate(loc["file"])[0] if loc else "", loc.get("function", "")]
    told = refusal(str(f.get("class", "")), str(f.get("message", "")))
    return digest(parts + [told] if told else parts)


def load_audit(file: str) -> set[str] | None:
    """The fingerprints of the audit baseline ``file``, or None when there is nothing by that name yet (the
    run will write it); bad input naming the file when it is not an audit baseline."""
    path = Path(file)
    if not (path.exists() or path.is_symlink()):
        return None
    known = _read(file, "an audit baseline", AUDIT_VERSION, "shapecheck audit")
    _untraced(file)  # its untraced list too: bad input before any work
    return known


def apply_audit(run: Any, file: str, known: set[str] | None = None) -> None:
    """With no file yet: record every finding in it, and every op not traced to the end with its status as the
    reason (the run then passes: today's findings and gaps are accepted). Otherwise: mark the findings it holds
    (``known``, when read before the run) as baselined, and excuse the untraced ops it lists (``"untraced":
    [{"op", "reason"}]``, each with a reason); only the others fail the run or make it inconclusive."""
    run.baseline = file
    if known is None:
        known = load_audit(file)
    if known is None:
        entries = sorted(({"fingerprint": audit_fingerprint(rec, f), "rule": f["code"], "op": rec["op"],
                           "expr": f["expr"]} for rec, f in run.findings(active=False)),
                         key=lambda e: (e["op"], e["rule"], e["expr"]))
        untraced = [{"op": rec["op"], "reason": f"{rec['status']} when the baseline was written"
                     + (f": {shorten(_why_untraced(rec['notes']))}" if rec["notes"] else "")} for rec in run.untraced()]
        _write(file, {"tool": "shapecheck audit", "version": AUDIT_VERSION, "findings": entries,
                      "untraced": untraced}, "--baseline")
        known = {e["fingerprint"] for e in entries}
        excused = {u["op"]: u["reason"] for u in untraced}
    else:
        excused = _untraced(file)
    run.excused.update(excused)
    for rec in run.records:
        for f in rec["findings"]:
            if audit_fingerprint(rec, f) in known:
                f["baselined"] = f"in the baseline {file}"
                run.accepted += 1


def _untraced(file: str) -> dict[str, str]:
    """An audit baseline's ``untraced`` list: op -> reason (every entry must have both); read within the
    baseline's limit like its findings."""
    doc = read_json(file, BASELINE_BYTES, "--baseline", "an audit baseline")
    entries = doc.get("untraced", []) if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise UserError(f"--baseline {file}: untraced: expected a list of {{\"op\", \"reason\"}}, each with a reason")
    for i, e in enumerate(entries):  # the entry named, as the project file's are
        if not (isinstance(e, dict) and isinstance(e.get("op"), str) and isinstance(e.get("reason"), str)
                and e["reason"].strip()):
            raise UserError(f"--baseline {file}: untraced[{i}]: expected {{\"op\", \"reason\"}} with a reason, got "
                            f"{e!r:.60}")
    return {e["op"]: e["reason"] for e in entries}


#: the notes that say why an op was not traced in full (audit.run's record), in the order they are preferred
UNTRACED_WHY = ("not run:", "not traced:", "not compared:", "no input found", "stopped after", "z3 could not",
                "cannot translate", "the kernel cannot run", "stopped:")


def shorten(text: str, limit: int = 240) -> str:
    """``text`` cut to about ``limit`` characters at a clause's end (else a word's), with `` ...`` where it was cut
    (hunt 41: a reason cut at 160 characters ended in "(give the op samples: [")."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = max(head.rfind("; "), head.rfind(": "), head.rfind(", "), head.rfind(" ("))
    if cut < limit // 2:
        cut = head.rfind(" ")
    return head[:cut if cut > 0 else limit].rstrip(" ;:,(") + " ..."


def _why_untraced(notes: list[str]) -> str:
    """The note that says why an op was not traced in full, else its last note."""
    for prefix in UNTRACED_WHY:
        found = next((n for n in notes if n.startswith(prefix)), None)
        if found is not None:
            return found
    return notes[-1]
