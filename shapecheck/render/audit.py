"""An audit run (``audit.run.AuditRun``) rendered: a ranked text table, JSON, SARIF 2.1.0 and GitHub annotations;
and its baseline (``--baseline FILE``: the first run records the findings, later runs fail only on new ones).

Torch-free and z3-free: it reads the run's records, which are plain data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..edges import JSON
from ..findings import SourceLoc
from ..paths import base_uris, locate
from ..rules import RULES, Command, RuleCode, rules_of
from .ci import SARIF_SCHEMA, _gh, _sarif_location, _sarif_rule, terminal_safe

if TYPE_CHECKING:
    from ..audit.run import AuditRun

FORMATS = ("text", "json", "sarif", "github")


def _where(f: dict[str, JSON], rec: dict[str, JSON]) -> SourceLoc | None:
    loc = f.get("location") or rec.get("definition")
    return SourceLoc(loc["file"], loc["line"], loc.get("function", ""), loc.get("text", "")) if loc else None


def _shown(loc: SourceLoc | None, op: str, rec: dict[str, JSON] | None = None) -> str:
    if loc:
        return f"{locate(loc.file)[0]}:{loc.line}"
    kernel = (rec or {}).get("kernel") or ""
    if (rec or {}).get("kernel_kind") == "c++" and kernel.startswith("C++"):
        return f"({kernel})"
    return f"(C++ kernel of {op})" if (rec or {}).get("kernel_kind", "c++") == "c++" else f"({kernel or op})"


def _names(ops: list[str], limit: int = 12) -> str:
    shown = ", ".join(ops[:limit])
    return shown + (f", ... ({len(ops) - limit} more)" if len(ops) > limit else "")


def coverage_line(run: AuditRun) -> str:
    """What was traced, first: ``114 of 258 ops traced (96 compared with the eager kernel on cpu); 30 without
    inputs: ...``."""
    c = run.coverage()
    parts = [f"coverage: {c['traced']} of {c['ops']} ops traced ({c['compared_with_eager']} compared with the "
             f"eager kernel on {run.device}; {c['variants']} argument variants)"]
    for key, what in (("no_inputs", "without inputs"), ("not_run", "not run"), ("inconclusive", "explored in part"),
                      ("not_compared", "traced but not compared with the eager kernel (it returned on no input tried)")):
        if c.get(key):
            parts.append(f"{len(c[key])} {what}: {_names(c[key])}")
    if c["excused"]:
        parts.append(f"{len(c['excused'])} of them excused by the config or baseline")
    if c.get("excused_unknown"):
        parts.append(f"{len(c['excused_unknown'])} untraced op(s) the config or baseline excuses name no op "
                     f"(ns::name.overload): {_names(c['excused_unknown'], 6)}")
    if c["no_fake_kernel"]:
        parts.append(f"{len(c['no_fake_kernel'])} without a fake kernel (FakeTensorMode and export cannot run them; "
                     f"not audited, never a pass): {_names(c['no_fake_kernel'], 6)}")
    return "; ".join(parts)


def _point(p: dict[str, int] | None) -> str:
    """``x_0=3, x_1=4``; a finding with no size to name (its inputs have none: a 0-d tensor, ints; or no one input
    shows it) says so rather than leave the line empty, and never that it holds everywhere (hunt 43: one call with
    a 0-d input read "it holds at every input tried")."""
    return ", ".join(f"{k}={v}" for k, v in p.items()) if p else "no sizes to name (the message says at which inputs)"


def summary_line(run: AuditRun) -> str:
    c = run.counts()
    k, n = run.shard
    shard = f"shard {k}/{n}: {c['ops']} of {run.total_ops} ops" if n > 1 else f"{c['ops']} ops"
    classes = ", ".join(f"{RULES[code].name.removeprefix('audit-')} {c['by_class'].get(cls, 0)}"
                        for cls, code in _classes().items() if c["by_class"].get(cls))
    base = f", {c['baselined']} in the baseline" if run.baseline else ""
    verdict = "ERROR" if run.exit_code == 2 else run.verdict.value.upper()  # bad input, as gate's line says
    uncompared = f" ({c['clean_not_compared']} of them not compared with the eager kernel)" \
        if c["clean_not_compared"] else ""
    partial = f" ({c['partial_findings']} of them explored in part)" if c["partial_findings"] else ""
    return (f"audit: {verdict} ({shard}: {c['clean']} clean{uncompared}, {c['relation_only']} relation-only, "
            f"{c['with_findings']} with findings{partial}, {c['inconclusive']} inconclusive, {c['no_inputs']} without "
            f"inputs, {c['not_run']} not run; {c['findings']} findings{base}" + (f" [{classes}]" if classes else "")
            + f"; torch {run.torch_version}; {run.seconds:.1f}s)")


def _classes() -> dict[str, RuleCode]:
    from ..audit.classify import CLASSES

    return CLASSES


def _differential() -> frozenset[str]:
    from ..audit.classify import DIFFERENTIAL

    return DIFFERENTIAL


#: SC032's words for a C++ kernel that reads sizes as plain ints (``audit.explore``)
_PLAIN_INTS = "its C++ code reads the size as a plain int"
CXX_GROUP = 4  # an op's C++ specialisations shown one by one up to this many, else as one line


def _cxx_grouped(rows: list[tuple[dict[str, JSON], dict[str, JSON]]]) -> list[tuple[dict[str, JSON], dict[str, JSON]]]:
    """The text report's rows with an op's C++ specialisations (SC032 of a kernel that is not SymInt-aware, one
    per input dim) as one row where there are more than ``CXX_GROUP`` (hunt 36: 58 rows for 7 of ExecuTorch's
    ``.out`` kernels); the machine formats keep each finding."""
    per_op: dict[str, list[dict[str, JSON]]] = {}
    for rec, f in rows:
        if f["class"] == "specialization" and _PLAIN_INTS in str(f.get("message", "")):
            per_op.setdefault(str(rec["op"]), []).append(f)
    big = {op for op, fs in per_op.items() if len(fs) > CXX_GROUP}
    out, done = [], set()
    for rec, f in rows:
        op = str(rec["op"])
        if op not in big or f not in per_op[op]:
            out.append((rec, f))
        elif op not in done:
            done.add(op)
            dims = [str(x["expr"]) for x in per_op[op]]
            out.append((rec, {**f, "expr": f"{len(dims)} sizes, each needed as a concrete value ({_PLAIN_INTS}, "
                                           f"as code that is not SymInt-aware does; one finding each in the "
                                           f"machine formats): {', '.join(dims[:8])}{', ...' if len(dims) > 8 else ''}"}))
    return out


def render_text(run: AuditRun, *, quiet: bool = False) -> str:
    """The findings ranked (most likely to break torch.export first), one line each with its counterexample,
    then each op's inferred requires (unless ``quiet``), then the summary."""
    lines = [coverage_line(run)]
    rows = _cxx_grouped(run.findings())
    for i, (rec, f) in enumerate(rows, 1):
        lines.append(f"{i:>4}. {f['code']} {f['class']:<20} {rec['op']}  {_shown(_where(f, rec), rec['op'], rec)}")
        lines.append(f"        guard: {f['expr']}")
        lines.append(f"        counterexample: {_point(f['counterexample'])}"
                     + (f"; other side: {_point(f['witness'])}" if f.get("witness") else ""))
        if f["class"] in _differential():
            lines.append(f"        {f['message']}")
    if not quiet:
        for rec in run.records:
            for r in rec["requires"]:
                where = _shown(_where(r, rec), rec["op"]) if r.get("location") else f"(kernel of {rec['op']})"
                lines.append(f"requires {rec['op']}: {r['expr']}  [{where}; {r['evidence']}]")
            for note in rec["notes"]:
                lines.append(f"note {rec['op']}: {note}")
            evidence = (rec.get("eager") or {}).get("evidence")
            if evidence:
                lines.append(f"evidence {rec['op']}: {evidence}")
    lines.append(summary_line(run))
    return "\n".join(lines)


def to_json(run: AuditRun) -> dict[str, JSON]:
    k, n = run.shard
    ranked = [dict(f, op=rec["op"]) for rec, f in run.findings(active=False)]
    return {"tool": "shapecheck audit", "verdict": run.verdict.value, "exit_code": run.exit_code,
            "torch": run.torch_version, "shard": f"{k}/{n}", "total_ops": run.total_ops, "device": run.device,
            "coverage": run.coverage(), "summary": run.counts(),
            "baseline": run.baseline, "findings": ranked, "ops": run.records, "seconds": round(run.seconds, 3)}


def render_github(run: AuditRun) -> str:
    lines = [_gh("error", _where(f, rec), f"{f['code']} {RULES[f['code']].name}",
                 f"{rec['op']}: {f['message']}; counterexample: {_point(f['counterexample'])}", Path.cwd())
             for rec, f in run.findings()]
    lines += [f"::warning::{rec['op']}: not traced ({rec['status']})" for rec in run.untraced()]
    lines.append(coverage_line(run))
    lines.append(summary_line(run))
    return "\n".join(lines)


def to_sarif(run: AuditRun) -> dict[str, JSON]:
    from .._version import __version__

    cwd = Path.cwd()
    reported = rules_of(Command.AUDIT)
    ids = sorted(reported)
    results = []
    for rec, f in run.findings(active=False):
        loc = _where(f, rec)
        res: dict[str, JSON] = {
            "ruleId": f["code"], "ruleIndex": ids.index(f["code"]), "level": "note" if f.get("baselined") else "error",
            "message": {"text": f"{f['code']} {RULES[f['code']].name}: {rec['op']}: {f['message']}"},
            "properties": {"op": rec["op"], "class": f["class"], "expr": f["expr"],
                           "counterexample": f["counterexample"], "witness": f.get("witness")}}
        if loc is not None:
            res["locations"] = [_sarif_location(loc, cwd)]
        if f.get("baselined"):
            res["suppressions"] = [{"kind": "external", "status": "accepted", "justification": f["baselined"]}]
        results.append(res)
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "shapecheck", "version": __version__,
                            "rules": [_sarif_rule(r) for _, r in sorted(reported.items())]}},
        "originalUriBaseIds": base_uris(cwd),
        "invocations": [{"executionSuccessful": True, "exitCode": run.exit_code}],
        "results": results,
        "properties": {"verdict": run.verdict.value, "torch": run.torch_version, "coverage": run.coverage()}}]}


def render(run: AuditRun, fmt: str, *, quiet: bool = False) -> str:
    if fmt == "json":
        return json.dumps(to_json(run), indent=2)
    if fmt == "sarif":
        return json.dumps(to_sarif(run), indent=2)
    if fmt == "github":
        return render_github(run)
    return terminal_safe(render_text(run, quiet=quiet))
