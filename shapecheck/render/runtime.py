"""The text reports of the runtime commands: ``fuzz op`` (``fuzz_text``) and ``ref check`` (``ref_text``), as each
has always printed them. Their other formats are the shared ones (``render.ci``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..rules import RULES, RuleCode

if TYPE_CHECKING:  # the reports are data; loading the runtime engine would load torch and z3
    from ..runtime.fuzz_report import FuzzReport
    from ..runtime.ref_findings import RefFinding
    from ..runtime.refcheck import RefReport


def fuzz_text(report: FuzzReport) -> str:
    """The text report: a verdict line, the run's figures, then each failure (with the runtime rule of a runtime
    finding, as ``ref check`` names it) and its replay command."""

    verdict = report.verdict.value.upper()
    lines = [f"{verdict}: {report.op} fuzzed against {report.contract} (kernel: {report.kernel}; "
             f"{report.examples} examples, {report.examples_per_second:.1f} examples/s, {report.seconds:.2f}s"
             + (f", seed {report.seed}" if report.replay else "") + ")"]
    if report.explicit or report.verify:
        lines.append(f"  explicit examples: {report.explicit}" + (f" (verify: {report.verify})" if report.verify else ""))
    lines.append(f"  reference: {report.reference}")
    total = sum(report.timings.values()) or 1.0
    lines.append("  time: " + ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in report.timings.items()))
    if report.paths:
        lines.append("  contract paths hit: " + ", ".join(f"{k} {v}" for k, v in report.paths.items()))
    if report.notes:
        lines.append("  notes (not failures):")
        lines += [f"    {n:6d}  {text}" for text, n in report.notes.items()]
    if report.replay:
        lines.append(f"  replay the run: {report.replay}")
    for f in report.failures:
        lines += ["", f"{f.check}" + (f" ({f.code} {RULES[RuleCode(f.code)].name})" if f.code else "") + f": {f.message}",
                  f"  example:  {f.example}",
                  f"  case:     {f.case}",
                  f"  dims:     {', '.join(f'{k}={v}' for k, v in f.dims.items())}",
                  f"  paths:    {'; '.join(e + ': ' + (', '.join(p) or '-') for e, p in f.paths.items())}"]
        if f.runtime_paths:
            lines.append(f"  runtime:  {'; '.join(f'{e}: {p}' for e, p in f.runtime_paths.items())}")
        lines += [f"  expected: {f.expected}", f"  got:      {f.got}"]
        if f.replay:
            lines.append(f"  replay:   {f.replay}")
    return "\n".join(lines)


def ref_text(report: RefReport) -> str:
    lines = [f"{report.verdict.value.upper()}: ref check of {report.op} against {report.contract} "
             f"({sum(p.points for p in report.paths)} inputs, {len(report.findings)} findings, "
             f"{len(report.suppressed)} suppressed, {report.seconds:.1f}s; {report.mps})"]
    for p in report.paths:
        active = [f for f in p.findings if not f.suppressed]
        state = "ok" if not active else f"{len(active)} finding(s)"
        if len(active) != len(p.findings):
            state += f", {len(p.findings) - len(active)} suppressed"
        lines.append(f"  {p.path}@{p.era}: {p.points} inputs, {state}" + (f" ({p.note})" if p.note else ""))
    groups: dict[tuple, list[RefFinding]] = {}
    for f in report.findings + report.suppressed:
        groups.setdefault((f.code, f.era, f.path, f.message.split(",")[0][:60], f.suppressed), []).append(f)
    for (code, era, path, _, why), fs in groups.items():
        f = fs[0]
        lines.append("")
        lines.append(f"{code} {f.kind} on {path}@{era}: {f.message}" + (" [suppressed]" if why else ""))
        lines.append(f"  case:  {f.case}" + (f" (+{len(fs) - 1} more inputs)" if len(fs) > 1 else ""))
        lines.append(f"  sizes: {', '.join(f'{k}={v}' for k, v in f.sizes.items())}")
        if why:
            lines.append(f"  why accepted: {why}")
    for u in report.unexercised:
        lines.append(f"note: {u} matched no input in this run (inputs are sampled; try more --examples)")
    return "\n".join(lines)
