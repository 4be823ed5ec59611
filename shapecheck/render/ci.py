"""A run of any command (``result.run.RunResult``) rendered: text, GitHub annotations, JSON, SARIF 2.1.0 and
JUnit XML. ``render`` is the one entry point; ``FORMATS`` names what it takes.

Every finding carries its rule id in every format. Paths are shown relative to the working directory when
the file lies under it (SARIF: relative URIs against ``%SRCROOT%``), else absolute.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Never, Protocol, TypeVar, cast
from urllib.parse import quote

from ..edges import JSON
from ..findings import Finding, SourceLoc
from ..paths import base_uris, locate, relpath
from ..result.run import ContractRun, FuzzRun, RefRun, RunResult, VerifyRun
from ..rules import FAILING, RULES, Rule, RuleCode, Severity, counted, help_uri, rules_of
from .runtime import fuzz_text, ref_text
from .text import group, located

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def level(code: RuleCode) -> str:
    """SARIF level: findings that fail the gate are errors, inconclusive is a warning, the rest notes."""
    return RULES[code].severity.sarif_level


def where(v: Finding, run: ContractRun) -> SourceLoc:
    """The finding's kernel line; without one (e.g. a refined range), the line of the contract table it is
    about (its path's, recorded when the contract loaded), else the contract's first."""
    if v.location is not None and v.location.line > 0:
        return v.location
    return SourceLoc(run.contract.file, v.path.line if v.path is not None and v.path.line else 1, "", "")


def _counts(result: RunResult) -> dict[str, int]:
    runs = result.runs
    active = [v for r in runs for v in r.report.violations if not v.suppressed]
    return {"contracts": len(runs), "passed": sum(r.verdict.value == "pass" for r in runs),
            "failed": sum(r.verdict.value == "fail" for r in runs),
            "inconclusive": sum(r.verdict.value == "inconclusive" and not r.error for r in runs),
            "not_run": sum(1 for r in runs if r.error),
            "cases": sum(len(r.report.cases) for r in runs), "violations": len(active),
            "suppressed": sum(1 for r in runs for v in r.report.violations if v.suppressed),
            "stale_suppressions": sum(len(r.stale) for r in runs),
            "expired_suppressions": sum(len(r.expired) for r in runs)}


def summary_line(result: RunResult) -> str:
    c = _counts(result)
    k, n = result.shard
    shard = f"shard {k}/{n}: {c['contracts']} of {result.total_contracts} contracts" if n > 1 else \
        f"{c['contracts']} contracts"
    verdict = "ERROR" if result.errors else result.verdict.value.upper()
    active = counted([v for r in result.runs for v in r.report.violations if not v.suppressed])
    not_run = f", {len(result.errors)} not run (bad input)" if result.errors else ""
    return (f"{result.command}: {verdict} ({shard}: {c['passed']} passed, {c['failed']} failed, "
            f"{c['inconclusive']} inconclusive{not_run}; {c['cases']} cases; {active}, "
            f"{c['suppressed']} suppressed, {c['stale_suppressions']} stale suppressions; "
            f"torch {result.torch_version}; {result.seconds:.2f}s)")


def _notes(run: ContractRun, cwd: Path) -> list[str]:
    out = [f"error: {run.error}"] if run.error else []
    if run.kernel_note:
        out.append(f"note: {run.kernel_note}")
    for e in run.expired:
        out.append(f"note: {relpath(e.location.file, cwd)}:{e.location.line}: the suppression of {e.rule} "
                   f"expired on {e.expires}: it no longer suppresses; {e.matched} violation(s) count again")
    return out


# ---------------------------------------------------------------------------------------------------------
# text and GitHub


def render_text(result: RunResult, cwd: Path, *, quiet: bool = False) -> str:
    """One verdict line per contract with its findings as ``file:line: SCxxx kind: message``, then a summary."""
    lines = []
    for run in result.runs:
        r = run.report
        active = [v for v in r.violations if not v.suppressed]
        sup = [v for v in r.violations if v.suppressed]
        checked = sum(1 for c in r.cases if not c.skipped)
        crashed = sum(1 for c in r.cases if c.crashed)
        lost = f"{crashed} crashed, " if crashed else ""
        label = "ERROR" if run.error else run.verdict.value.upper()
        lines.append(f"{label:<12} {r.op}  {relpath(r.contract, cwd)}  ({checked} cases, "
                     f"{len(r.cases) - checked - crashed} skipped, {lost}{counted(active)}, {len(sup)} suppressed, "
                     f"{r.seconds:.2f}s; kernel: {r.kernel})")
        for v, cases in group(_shown(active, quiet)) + [(v, [""]) for v in run.stale]:
            loc = where(v, run)
            more = f" (+{len(cases) - 1} more)" if len(cases) > 1 else ""
            case = f" [case {cases[0]}{more}]" if cases[0] else ""
            cex = ", ".join(f"{d}={x}" for d, x in v.counterexample.items())
            lines.append(f"  {relpath(loc.file, cwd)}:{loc.line}: {v.code} {v.kind}: {v.message}{case}"
                         + (f"; {v.point_label}: {cex}" if cex else ""))
        if quiet:
            continue
        for v, cases in group(sup):
            loc = where(v, run)
            lines.append(f"  suppressed: {relpath(loc.file, cwd)}:{loc.line}: {v.code} {v.kind}: {v.expr} "
                         f"[{len(cases)} case(s)]: {v.suppressed}")
        lines.extend(f"  {t}" for t in _notes(run, cwd))
    if result.shard[1] > 1 and not result.runs:
        lines.append(f"note: shard {result.shard[0]}/{result.shard[1]} holds none of the "
                     f"{result.total_contracts} contracts")
    if cache_line(result):
        lines.append(cache_line(result))
    lines.append(summary_line(result))
    return "\n".join(lines)


def _shown(violations: list[Finding], quiet: bool) -> list[Finding]:
    """With ``quiet``, only findings that fail or leave the run inconclusive (no notes such as SC006)."""
    return [v for v in violations if not quiet or RULES[v.code].severity is not Severity.NOTE]


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)  # a raw NUL or ESC in a log line: shown, not sent
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def _gh(kind: str, loc: SourceLoc | None, title: str, message: str, cwd: Path) -> str:
    props = []
    if loc is not None:
        props += [f"file={_gh_escape(relpath(loc.file, cwd), True)}", f"line={loc.line}"]
    props.append(f"title={_gh_escape(title, True)}")
    return f"::{kind} {','.join(props)}::{_gh_escape(message)}"


def render_github(result: RunResult, cwd: Path, *, quiet: bool = False) -> str:
    """GitHub Actions workflow commands: ``::error`` per failing finding, ``::warning`` for inconclusive
    ones and expired suppressions, ``::notice`` for suppressed ones; then the verdict lines."""
    lines = []
    for run in result.runs:
        r = run.report
        for v, cases in group(_shown([v for v in r.violations if not v.suppressed], quiet)) + [(v, [""]) for v in run.stale]:
            kind = {"error": "error", "warning": "warning"}.get(level(v.code), "notice")
            more = f" (+{len(cases) - 1} more cases)" if len(cases) > 1 else ""
            case = f" [{r.op} case {cases[0]}{more}]" if cases[0] else f" [{r.op}]"
            cex = ", ".join(f"{d}={x}" for d, x in v.counterexample.items())
            lines.append(_gh(kind, where(v, run), f"{v.code} {v.kind}",
                             f"{v.message}{case}" + (f"; {v.point_label}: {cex}" if cex else ""), cwd))
        for v, cases in group([v for v in r.violations if v.suppressed and not quiet]):
            lines.append(_gh("notice", where(v, run), f"{v.code} {v.kind} (suppressed)",
                             f"{v.expr} [{r.op}, {len(cases)} case(s)]: suppressed: {v.suppressed}", cwd))
        for e in run.expired:
            lines.append(_gh("warning", e.location, f"{e.rule} expired suppression",
                             f"expired on {e.expires}: {e.matched} violation(s) count again ({e.reason})", cwd))
        if run.kernel_note:
            lines.append(_gh("notice", None, "shapecheck kernel", run.kernel_note, cwd))
        if run.error:
            lines.append(_gh("error", SourceLoc(r.contract, 1), "shapecheck (bad input)", run.error, cwd))
    lines.extend(f"{run.verdict.value.upper()}: {run.report.op} ({relpath(run.report.contract, cwd)})"
                 for run in result.runs)
    lines.append(summary_line(result))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# JSON


def to_json(result: RunResult) -> dict[str, JSON]:
    """``reports`` holds one ``verify --format json`` document per contract, plus the gate's own fields
    (``kernel_note``, ``stale_suppressions``, ``expired_suppressions``)."""
    k, n = result.shard
    return {"tool": f"shapecheck {result.command}", "verdict": result.verdict.value, "exit_code": result.exit_code,
            "torch": result.torch_version, "shard": f"{k}/{n}", "meta_source": result.meta_source,
            "total_contracts": result.total_contracts, "summary": _counts(result),
            "reports": [located(run.to_json()) for run in result.runs], "seconds": round(result.seconds, 3)}


def render_json(result: RunResult) -> str:
    return json.dumps(to_json(result), indent=2)


# ---------------------------------------------------------------------------------------------------------
# SARIF 2.1.0


def _artifact(file: str, cwd: Path) -> dict[str, JSON]:
    path, base = locate(file, cwd)
    if base is None:
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path, safe="/"), "uriBaseId": base}  # a URI reference: `my kernel%41.py` is not `A`


def _sarif_rule(r: Rule) -> dict[str, JSON]:
    """A rule with its help: markdown of what it means and the fix, and its section in docs/rules.md."""
    text = f"{r.summary}." + (f" Fix: {r.fix}." if r.fix else "")
    markdown = f"**{r.code} {r.name}**: {r.summary}." + (f"\n\n**Fix.** {r.fix}." if r.fix else "")
    out = {"id": r.code, "name": r.name, "shortDescription": {"text": r.name}, "fullDescription": {"text": r.summary},
           "help": {"text": text, "markdown": markdown}, "defaultConfiguration": {"level": r.severity.sarif_level}}
    uri = help_uri(r)
    if uri:
        out["helpUri"] = uri
    return out


def _sarif_location(loc: SourceLoc, cwd: Path) -> dict[str, JSON]:
    region: dict[str, JSON] = {"startLine": max(loc.line, 1)}
    if loc.text:
        region["snippet"] = {"text": loc.text}
    return {"physicalLocation": {"artifactLocation": _artifact(loc.file, cwd), "region": region}}


def to_sarif(result: RunResult, cwd: Path) -> dict[str, JSON]:
    """One SARIF run; one result per finding grouped over cases (``properties.cases`` lists them all)."""
    from .._version import __version__

    # the command's rules, and any other rule a finding here has (ref check's [[rejects]] regions give SC021)
    reported = rules_of(result.command) | {v.code: RULES[v.code] for run in result.runs
                                           for v in (*run.report.violations, *run.stale)}
    ids = sorted(reported)
    rules = [_sarif_rule(r) for _, r in sorted(reported.items())]
    results = []
    notes = []
    for run in result.runs:
        r = run.report
        for v, cases in group(list(r.violations)) + [(v, [""]) for v in run.stale]:
            res: dict[str, JSON] = {
                "ruleId": v.code, "ruleIndex": ids.index(v.code), "level": "note" if v.suppressed else level(v.code),
                "message": {"text": f"{v.code} {v.kind}: {v.message}"},
                "locations": [_sarif_location(where(v, run), cwd)],
                "properties": {"op": r.op, "contract": relpath(r.contract, cwd), "case": cases[0] or None,
                               "cases": [c for c in cases if c], "path": None if v.path is None else str(v.path),
                               "expr": v.expr,
                               "dims": list(v.dims), "counterexample": v.counterexample}}
            if v.suppressed:
                res["suppressions"] = [{"kind": "external", "status": "accepted", "justification": v.suppressed,
                                        "location": _sarif_location(run.suppressed_at(v), cwd)}]
            results.append(res)
        for t in _notes(run, cwd):
            notes.append({"level": "error" if t.startswith("error:") else "warning" if "expired" in t else "note",
                          "message": {"text": t}})
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "shapecheck", "version": __version__,
                            "rules": rules}},
        "originalUriBaseIds": base_uris(cwd),
        "invocations": [{"executionSuccessful": not result.errors, "exitCode": result.exit_code,
                         "toolExecutionNotifications": notes}],
        "results": results,
        "properties": {"verdict": result.verdict.value, "shard": f"{result.shard[0]}/{result.shard[1]}",
                       "torch": result.torch_version}}]}


def render_sarif(result: RunResult, cwd: Path) -> str:
    return json.dumps(to_sarif(result, cwd), indent=2)


# ---------------------------------------------------------------------------------------------------------
# JUnit XML


def _finding_text(v: Finding, run: ContractRun, cwd: Path) -> str:
    loc = where(v, run)
    cex = ", ".join(f"{d}={x}" for d, x in v.counterexample.items()) or "-"
    path = f"\n  path: {v.path}" if v.path else ""
    return (f"{v.code} {v.kind}: {v.message}{path}\n  expr: {v.expr}\n  at: {relpath(loc.file, cwd)}:{loc.line}"
            f"\n  {v.point_label}: {cex}")


def to_junit(result: RunResult, cwd: Path) -> ET.Element:
    """``<testsuite>`` per contract, ``<testcase classname=OP name=CASE>`` per case: ``<failure>`` lists the
    failing findings, ``<error>`` the inconclusive ones, ``<skipped>`` a case the kernel cannot take.
    A stale suppression is a failing testcase named after its ``[[suppress]]`` table."""
    root = ET.Element("testsuites", name=f"shapecheck {result.command}")
    totals = dict(tests=0, failures=0, errors=0, skipped=0)
    for run in result.runs:
        r = run.report
        suite = ET.SubElement(root, "testsuite", name=r.op, file=relpath(r.contract, cwd),
                              time=f"{r.seconds:.3f}")
        props = ET.SubElement(suite, "properties")
        for name, text in (("contract", relpath(r.contract, cwd)), ("kernel", r.kernel),
                           ("torch", r.torch_version)):
            ET.SubElement(props, "property", name=name, value=text)
        counts = dict(tests=0, failures=0, errors=0, skipped=0)
        by_case: dict[str, list[Finding]] = {}
        for v in r.violations:
            by_case.setdefault(v.case, []).append(v)
        for c in r.cases:
            tc = ET.SubElement(suite, "testcase", classname=r.op, name=c.case, file=relpath(r.contract, cwd))
            counts["tests"] += 1
            found = by_case.get(c.case, [])
            failing = [v for v in found if not v.suppressed and v.code in FAILING]
            unknown = [v for v in found if not v.suppressed and v.code == RuleCode.INCONCLUSIVE]
            if c.skipped:
                ET.SubElement(tc, "skipped", message=c.skipped)
                counts["skipped"] += 1
            elif failing:
                codes = sorted({v.code for v in failing})
                el = ET.SubElement(tc, "failure", type=",".join(codes),
                                   message="; ".join(f"{v.code} {v.expr}" for v in failing))
                el.text = "\n\n".join(_finding_text(v, run, cwd) for v in failing)
                counts["failures"] += 1
            elif unknown:
                el = ET.SubElement(tc, "error", type=RuleCode.INCONCLUSIVE, message="; ".join(f"{v.code} {v.expr}" for v in unknown))
                el.text = "\n\n".join(_finding_text(v, run, cwd) for v in unknown)
                counts["errors"] += 1
            sup = [v for v in found if v.suppressed]
            if sup:
                ET.SubElement(tc, "system-out").text = "\n".join(
                    f"suppressed: {v.code} {v.kind}: {v.expr} ({v.suppressed})" for v in sup)
        if run.error:  # the contract could not run: one erroring testcase
            tc = ET.SubElement(suite, "testcase", classname=r.op, name="contract", file=relpath(r.contract, cwd))
            ET.SubElement(tc, "error", type="bad input", message=run.error).text = run.error
            counts["tests"] += 1
            counts["errors"] += 1
        for v in run.stale:
            tc = ET.SubElement(suite, "testcase", classname=r.op, name=v.location.function if v.location else "suppress",
                               file=relpath(r.contract, cwd), line=str(v.location.line if v.location else 0))
            el = ET.SubElement(tc, "failure", type=RuleCode.STALE_SUPPRESSION, message=f"{v.code} {v.expr}")
            el.text = _finding_text(v, run, cwd)
            counts["tests"] += 1
            counts["failures"] += 1
        notes = _notes(run, cwd)
        if notes:
            ET.SubElement(suite, "system-out").text = "\n".join(notes)
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{result.seconds:.3f}")
    return root


def render_junit(result: RunResult, cwd: Path) -> str:
    return _xml(to_junit(result, cwd))


#: characters XML 1.0 cannot hold (controls but tab, newline and return; lone surrogates, as a file name that is
#: not UTF-8 decodes to; U+FFFE and U+FFFF), and the controls a log line should not carry raw
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # C0 and C1 (a CSI \x9b, NEL \x85) but tab, LF, CR
_TEXT_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")  # and CR and line separators, in text


def terminal_safe(text: str) -> str:
    """A text report as a terminal shows it: a raw control character (a kernel's ESC or BEL, a CR that would
    overwrite the line) as ``\\xNN``; tabs and line breaks stay."""
    return _TEXT_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else
                             f"\\u{ord(m.group()):04x}", text)


def _xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else "\ufffd", text)


def _xml(root: ET.Element) -> str:
    """The document of ``root``, every text and attribute value made one XML 1.0 can hold (a kernel's message
    with a BEL, a contract file name that is not UTF-8): the report stays well-formed."""
    for el in root.iter():
        el.text = _xml_text(el.text) if el.text else el.text
        el.tail = _xml_text(el.tail) if el.tail else el.tail
        for key, value in el.attrib.items():
            el.set(key, _xml_text(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------------------------------------------------
# The registry

def _verify_text(result: VerifyRun, cwd: Path, *, context: int = 2, quiet: bool = False) -> str:
    from .text import render_text as verify_text

    return verify_text(result.runs[0].report, context=context, quiet=quiet) + _cache_tail(result)


def _verify_json(result: VerifyRun, cwd: Path, **_: object) -> str:
    from .text import render_json as verify_json

    return verify_json(result.runs[0].report)


def _contract_located(doc: dict[str, JSON]) -> str:
    """fuzz's and ref check's JSON with the contract's path as reports name files (``paths.locate``); a replay
    command keeps the paths it was given, so that it runs from where the report was made."""
    return json.dumps(dict(doc, contract=locate(str(doc["contract"]))[0]) if doc.get("contract") else doc, indent=2)


def _cache_tail(result: RunResult) -> str:
    line = cache_line(result)
    return f"\n{line}" if line else ""


R = TypeVar("R", bound=RunResult, contravariant=True)


class Renderer(Protocol[R]):
    """A format's renderer of the results of one type (``R``): ``(result, cwd, *, context=, quiet=)`` -> the
    document. ``FORMATS`` holds renderers of different types, so each is a ``Renderer[Never]`` there, and
    ``render`` calls the one of its result's own type (or of a base of it) as a ``Renderer[RunResult]``."""

    def __call__(self, result: R, cwd: Path, *, context: int = 2, quiet: bool = False) -> str: ...


#: every format of every result type: a result type's own text and JSON where it has them (verify's, fuzz's and
#: ref check's documented formats), else the shared one (the gate's, and GitHub, SARIF and JUnit for all)
FORMATS: dict[str, dict[type, Renderer[Never]]] = {
    "text": {VerifyRun: _verify_text,
             FuzzRun: lambda result, cwd, **_: fuzz_text(result.fuzz),
             RefRun: lambda result, cwd, **_: ref_text(result.ref),
             RunResult: lambda result, cwd, *, quiet=False, **_: render_text(result, cwd, quiet=quiet)},
    "json": {VerifyRun: _verify_json,
             FuzzRun: lambda result, cwd, **_: _contract_located(result.fuzz.to_json()),
             RefRun: lambda result, cwd, **_: _contract_located(result.ref.to_json()),
             RunResult: lambda result, cwd, **_: render_json(result)},
    "github": {RunResult: lambda result, cwd, *, quiet=False, **_: render_github(result, cwd, quiet=quiet)},
    "sarif": {RunResult: lambda result, cwd, **_: render_sarif(result, cwd)},
    "junit": {RunResult: lambda result, cwd, **_: render_junit(result, cwd)},
}


def render(result: RunResult, fmt: str, cwd: Path, *, context: int = 2, quiet: bool = False) -> str:
    """``result`` in format ``fmt`` (a key of ``FORMATS``), by the most specific renderer of its type there. Text
    has one more line when results came from the cache (``cache_line``): verify's last, the gate's above its
    summary."""
    table = FORMATS[fmt]
    kind = next(t for t in type(result).__mro__ if t in table)
    renderer = cast("Renderer[RunResult]", table[kind])  # picked by the result's type: it takes the result
    text = renderer(result, cwd, context=context, quiet=quiet)
    return terminal_safe(text) if fmt == "text" else text  # a kernel's message, a contract's doc: shown, not sent


def cache_line(result: RunResult) -> str:
    """One line naming the results answered from the cache (their reports' ``cache``), else empty. Nothing else
    in any format differs from the run that stored them."""
    hits = [run.report.cache for run in result.runs if run.report.cache is not None]
    if not hits:
        return ""
    if isinstance(result, VerifyRun):
        return (f"cache: the result of the run of {hits[0].stored_at}, reused: the kernel and the helpers it "
                "reaches, the contract, the options, torch and shapecheck are unchanged (--no-cache runs it again)")
    return (f"cache: {len(hits)} of {len(result.runs)} contracts answered from the cache: their kernels, contracts, "
            "options, torch and shapecheck are unchanged (--no-cache runs them again)")


# ---------------------------------------------------------------------------------------------------------
# A run that could not run (bad input, exit 2; internal error, exit 4): reports that say so


def render_error(fmt: str, command: str, message: str, exit_code: int) -> str:
    """The report of a run that stopped before a verdict, so that CI uploads show the real error: SARIF with a
    failed invocation and its notification, JUnit with one erroring testcase, JSON with the error, a GitHub
    ``::error`` line; text is empty (the error line is on stderr)."""
    from .._version import __version__

    tool = f"shapecheck {command}".strip()
    if fmt == "sarif":
        return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
            "tool": {"driver": {"name": "shapecheck", "version": __version__, "rules": []}},
            "invocations": [{"executionSuccessful": False, "exitCode": exit_code, "toolExecutionNotifications": [
                {"level": "error", "message": {"text": message}}]}],
            "results": []}]}, indent=2)
    if fmt == "junit":
        root = ET.Element("testsuites", name=tool, tests="1", failures="0", errors="1", skipped="0")
        suite = ET.SubElement(root, "testsuite", name=tool, tests="1", failures="0", errors="1", skipped="0")
        case = ET.SubElement(suite, "testcase", classname="shapecheck", name=command or "shapecheck")
        ET.SubElement(case, "error", type=f"exit {exit_code}", message=message).text = message
        return _xml(root)
    if fmt == "json":
        return json.dumps({"tool": tool, "verdict": "error", "exit_code": exit_code, "error": message}, indent=2)
    if fmt == "github":
        return _gh("error", None, f"{tool} (exit {exit_code})", message, Path.cwd())
    return ""
