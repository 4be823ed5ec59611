"""verify's report for people (``render_text``: the verdict, what to change, every finding by file and line, path
maps, export confirmations and notes) and as JSON (``render_json``); ``group`` puts together the findings that
differ only by case, for every text format."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, cast

from ..edges import JSON
from ..findings import Finding, PathStatus, SourceLoc
from ..paths import locate, relpath
from ..result.report import CaseResult, Report
from ..rules import counted
from .pathmap import render_path_map

if TYPE_CHECKING:
    from ..prove.export import ExportResult
    from ..prove.pathmap import PathMap


def render_json(report: Report) -> str:
    return json.dumps(located(report.to_json()), indent=2)


def located(doc: dict[str, JSON]) -> dict[str, JSON]:
    """A verify JSON document with its file paths as reports name them (``paths.locate``): relative to the
    repository root or to site-packages (``location.base`` says which), else absolute."""
    doc = dict(doc, contract=locate(doc["contract"])[0])
    for key in ("violations", "suppressed", "stale_suppressions"):
        items = []
        for v in doc.get(key) or []:
            if v.get("location"):
                path, base = locate(v["location"]["file"])
                v = dict(v, location=dict(v["location"], file=path, base=base))
            items.append(v)
        if key in doc:
            doc[key] = items
    return doc


def _fmt_point(point: dict[str, int] | None) -> str:
    if not point:
        return "-"
    return ", ".join(f"{k}={v}" for k, v in point.items())


def group(violations: list[Finding]) -> list[tuple[Finding, list[str]]]:
    """Violations that differ only by case, grouped: (first, [cases])."""
    groups: dict[tuple, tuple[Finding, list[str]]] = {}
    for v in violations:
        loc = (v.location.file, v.location.line) if v.location else None
        key = (v.code, v.path, v.expr, loc, v.suppressed, v.fix)  # each case keeps its own fix
        if key in groups:
            groups[key][1].append(v.case)
        else:
            groups[key] = (v, [v.case])
    return list(groups.values())


def render_text(report: Report, *, context: int = 0, quiet: bool = False) -> str:
    """For people: the verdict, what to change (one entry per source line, each fix once), then the details
    of every finding sorted by file:line. ``quiet``: the verdict and what fails only."""
    checked = [c for c in report.cases if not c.skipped]
    crashed = [c for c in report.cases if c.crashed]
    skipped = [c for c in report.cases if c.skipped and c not in crashed]
    active = [v for v in report.violations if not v.suppressed]
    lost = f"{len(crashed)} crashed, " if crashed else ""
    lines = [f"{report.verdict.value.upper()}: {report.op} against {relpath(report.contract)} "
             f"({len(checked)} cases checked, {len(skipped)} skipped, {lost}{counted(active)}, "
             f"{report.seconds:.2f}s; kernel: {report.kernel})"]
    if report.kernel_modes:
        lines.append("  torch runs two kernels for this op; both were checked:")
        lines += [f"    {m.runs}: {m.kernel}: {m.verdict.value.upper()}" for m in report.kernel_modes]
    lines += [f"  note: {n}" for n in report.notes]
    if not quiet:
        lines.extend(_path_summary(checked))
    groups = sorted(group(active), key=lambda g: _place_key(g[0]))
    if groups:
        lines += ["", "what to change:"] + _what_to_change(groups)
        lines += ["", "findings, by file and line:"]
        for v, cases in groups:
            lines.extend(_finding_block(v, cases, context))
    if quiet:
        return "\n".join(lines)
    sup = [v for v in report.violations if v.suppressed]
    if sup:
        lines.append("")
        lines.append(f"suppressed ({len(sup)}):")
        for v, cases in group(sup):
            lines.append(f"  {v.code} {v.expr} [{len(cases)} cases]: {v.suppressed}")
    lines.extend(_appendix(report, skipped))
    lines.extend(_obligations(report))
    return "\n".join(lines)


def _obligations(report: Report) -> list[str]:
    """``--show-obligations``: per case, each obligation discharged: what is proved, its premises, the kernel
    line and the contract key it comes from, and how it ended."""
    lines = []
    for c in report.cases:
        if not c.obligations:
            continue
        lines += ["", f"obligations of case {c.case} ({len(c.obligations)}):"]
        for o in c.obligations:
            where = f"{relpath(o.line.rpartition(':')[0])}:{o.line.rpartition(':')[2]}" if o.line else "-"
            lines.append(f"  [{o.status}] {o.kind}: {o.what}")
            lines.append(f"      premises: {' and '.join(o.premises) or 'true'}")
            lines.append(f"      kernel:   {where}    contract: {o.key}")
    return lines


def _place_key(v: Finding) -> tuple:
    loc = v.location
    return (loc is None, relpath(loc.file) if loc else "", loc.line if loc else 0, v.code, v.expr)


def _what_to_change(groups: list[tuple[Finding, list[str]]]) -> list[str]:
    """One entry per source line: the findings there, then each distinct fix once."""
    places: dict[tuple, list[tuple[Finding, list[str]]]] = {}
    for v, cases in groups:
        key = (relpath(v.location.file), v.location.line, v.location.function) if v.location else ("", 0, "")
        places.setdefault(key, []).append((v, cases))
    lines = []
    for (file, line, function), found in places.items():
        where = f"{file}:{line}" + (f" in {function}" if function else "") if file else "(no kernel line)"
        n = len({c for _, cases in found for c in cases})
        what = "; ".join(dict.fromkeys(f"{v.code} {v.expr}" for v, _ in found))
        lines.append(f"  {where}: {what} ({n} case{'s' if n != 1 else ''})")
        fixes: dict[str, list[str]] = {}
        for v, cases in found:
            if v.fix:
                fixes.setdefault(v.fix, []).extend(cases)
        for fix, cases in fixes.items():
            whose = "" if len(fixes) == 1 else f" [{_cases_text(cases)}]"
            lines.append(f"      fix{whose}: {fix}")
    return lines


def _cases_text(cases: list[str]) -> str:
    cases = list(dict.fromkeys(cases))
    return ", ".join(c or "the case" for c in cases[:2]) + (f" and {len(cases) - 2} more" if len(cases) > 2 else "")


def _finding_block(v: Finding, cases: list[str], context: int) -> list[str]:
    lines = ["", f"{v.code} {v.kind}: {v.message}"]
    if v.path:
        lines.append(f"  path:     {v.path}")
    more = f" (+{len(cases) - 1} more)" if len(cases) > 1 else ""
    if cases[0] or more:  # a contract with no choices has one case, named by nothing
        lines.append(f"  case:     {cases[0]}{more}")
    lines.append(f"  expr:     {v.expr}")
    if v.restricts:
        lines.append(f"  range:    {v.restricts}")
    if v.location:
        lines.append(f"  at:       {relpath(v.location.file)}:{v.location.line} in {v.location.function}")
        if v.location.text:
            lines.append(f"            {v.location.text}")
        if context:
            lines.extend(_context(v.location, context))
    lines.append(f"  {v.point_label + ':':<9} {_fmt_point(v.counterexample)}")
    if v.witness:
        lines.append(f"  other side:     {_fmt_point(v.witness)}")
    return lines


def _appendix(report: Report, skipped: list[CaseResult]) -> list[str]:
    """Path maps, export confirmations and notes."""
    lines: list[str] = []
    maps = [c.path_map for c in report.cases if c.path_map is not None]
    if maps:
        lines.append("")
        lines.append("path maps (--explore):")
        for pm in maps:  # result.report names them by their JSON alone (prove is a later layer): verify's are these
            lines.extend(render_path_map(cast("PathMap", pm)))
    exported = [c for c in report.cases if c.export is not None]
    if exported:
        lines.append("")
        lines.append("torch.export (--confirm-export):")
        for c in exported:
            x = cast("ExportResult", c.export)
            if not x.ran:
                lines.append(f"  {c.case or 'the case'}: not run ({x.message})")
                continue
            state = "succeeded" if x.succeeded else "failed"
            agree = {True: "agrees", False: "DISAGREES", None: "no verdict to compare"}[x.agrees]
            lines.append(f"  {c.case or 'the case'}: export {state} at {', '.join(f'{k}={v}' for k, v in (x.example or {}).items())}"
                         f"; {agree} with shapecheck's {c.verdict.value}")
            if x.ints:
                lines.append(f"      int sizes: {x.ints}")
            if not x.succeeded:
                lines.append(f"      {x.message.splitlines()[0][:200]}")
            if x.explanation:
                lines.append(f"      why: {x.explanation}")
            if x.refuses:
                lines.append(f"      note: the exported program refuses {', '.join(f'{k}={v}' for k, v in x.refuses.items())}"
                             f", a point of the contract's domain ({x.refusal[:200]}): "
                             f"{_refusal_cause(x.refusal, x.refused_from_two, x.explanation or '')}")
    trunc = [c.case for c in report.cases if c.truncated and not c.shared_with]
    if trunc:
        lines.append("")
        example = f", e.g. {trunc[0]}" if trunc[0] else ""  # a contract of one case has no case id
        lines.append(f"note: exploration stopped at the trace bound in {len(trunc)} case(s){example}")
    shared = [c for c in report.cases if c.shared_with]
    if shared:
        left = [c for c in shared if c.truncated]
        lines.append(f"note: {len(shared)} case(s) share their first violating guard with an earlier case (e.g. "
                     f"{shared[0].case} with {shared[0].shared_with}): their outputs were checked on that case's "
                     f"regions, their guards were not explored one by one (--full does)"
                     + (f"; {len(left)} of them stopped at the trace bound, e.g. {left[0].case}" if left else ""))
    for c in skipped[:3]:
        lines.append(f"note: skipped {c.case or 'the case'}: {c.skipped}")
    lines.extend(f"note: {n}" for n in dict.fromkeys(n for c in report.cases for n in c.notes))
    return lines


def _path_summary(cases: list[CaseResult]) -> list[str]:
    """Per contract path, in how many cases output obligations were proved (or not), and the trace count."""
    if not cases:
        return []
    counts: dict[str, dict[PathStatus, int]] = {}
    for c in cases:
        for p in c.paths:
            counts.setdefault(str(p.path), {}).setdefault(p.status, 0)
            counts[str(p.path)][p.status] += 1
    traces = sum(c.traces for c in cases)
    guard_free = sum(1 for c in cases if c.traces == 1 and c.meta_paths == 1)
    lines = [f"  traces: {traces} for {len(cases)} cases; {guard_free} cases guard-free in a single trace",
             "  output obligations per contract path (number of cases):"]
    width = max((len(k) for k in counts), default=0)
    for path, st in counts.items():
        parts = ", ".join(f"{s} {st[s]}" for s in PathStatus if s in st)
        lines.append(f"    {path:<{width}}  {parts}")
    return lines


def _context(loc: SourceLoc, n: int) -> list[str]:
    from ..limits import SOURCE_BYTES, TooLarge, read_bounded

    try:  # the kernel's file, for context only: a regular file within the kernel limit, else no context
        src = read_bounded(loc.file, SOURCE_BYTES).decode("utf-8", "replace").splitlines()
    except (OSError, TooLarge):
        return []
    lo, hi = max(1, loc.line - n), min(len(src), loc.line + n)
    return [f"    {'>' if i == loc.line else ' '}{i:5d} | {src[i - 1]}" for i in range(lo, hi + 1)]


def _refusal_cause(refusal: str, from_two: bool = False, why: str = "") -> str:
    """Why the exported program refuses a point of the domain, from its guard: an input size pinned to a constant
    (``inputs[1].size()[0] == 6``) is a size export took as static, not its 0/1 assumption; a point it refuses with
    its sizes below 2 raised to 2 as well, or with a guard ``why`` (the agreement's explanation) showed it refusing
    sizes from 2, a guard it keeps (hunt 65: replication_pad3d's ``W + L - 8 + R != 0`` at the least point, blamed
    on the sizes below 2 there)."""
    if from_two:
        return ("it refuses the same point with its sizes below 2 raised to 2 too: a guard the program keeps refuses "
                "it, not export's assumption that dynamic sizes are at least 2")
    failed = refusal.partition("Guard failed: ")[2].strip()
    if failed and f"Guard failed: {failed}." in why:
        return ("the guard that refuses it is one the program keeps, shown above refusing sizes from 2 too: not "
                "export's assumption that dynamic sizes are at least 2")
    if re.search(r"size\(\)\[\d+\] == \d+\b", refusal) and "!=" not in refusal:
        return ("the program took that input size as static (the contract's size is no Dim export can state, or export "
                "specialised it at the example), so it accepts no other value there")
    low = re.search(r"size\(\)\[\d+\] >= (\d+)\b", refusal)
    if low is not None and int(low.group(1)) > 2:  # a composite size's Dim minimum (``prove.composite.composite_axes``)
        return (f"the program checks that input size against the least value of its Dim ({low.group(1)}): a size "
                "the contract builds from several dims has a Dim of its own from its least value with each dim at 2 "
                "or more, export's sizes, and this point has dims below 2")
    return ("torch.export assumes every dynamic size is at least 2, so a guard torch settles from 2 up is still checked "
            "there")
