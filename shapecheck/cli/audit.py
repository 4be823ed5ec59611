"""``shapecheck audit``: every meta/fake kernel of the installed torch (and of imported libraries), without
contracts. Only click and the shared options are imported at module level; torch loads in the callback."""

from __future__ import annotations

import sys

import click

from ..paths import write_text
from .options import check_outputs, debug_option, debugging, import_option, option, options
from .stdout import echo

AUDIT_HELP = """Exit codes: 0 every op traced and no finding (or only findings in the baseline), 1 a new finding, 2
bad input (an --import that fails, a --meta-source file that does not parse, a bad baseline or samples hook,
usage), 3 inconclusive (an op without inputs, not run or explored only in part, that neither the baseline nor
[tool.shapecheck.audit.untraced] lists), 4 internal error."""


@click.command("audit", epilog=AUDIT_HELP)
@option("audit", "patterns")
@import_option("audit")
@option("audit", "meta_source", help="A _meta_registrations.py-style file: audit the functions it registers in place "
        "of the installed ones (the file is never run).")
@options("audit", "fmt", "outputs", "baseline")
@option("audit", "shard", help="Audit the K-th of N interleaved slices of the op list (a CI matrix).")
@options("audit", "max_traces", "draft_dir")
@option("audit", "device", help="The eager kernel's device for the comparison with the fake; without the device "
        "here the run is inconclusive (exit 3), never a pass.")
@options("audit", "differential", "variants", "samples", "both_modes", "op_timeout", "quiet", "cache", "jobs")
@debug_option("audit")
def audit(patterns, imports, meta_source, fmt, outputs, baseline, shard, max_traces, draft_dir, device, differential,
          variants, samples, both_modes, op_timeout, quiet, cache, jobs):
    """Audit every op's meta/fake kernel for guards, specialisations and errors on its input sizes: each input
    dim is its own dynamic dim (self_0, other_1, ...); relations the op demands become inferred requires."""

    from ..audit.run import AuditOptions, device_missing, run_audit
    from ..ci.baseline import apply_audit, load_audit
    from ..config import audit_untraced
    from ..errors import UserError
    from ..kernel.sources import MetaSource
    from ..render.audit import render

    parsed = []
    for spec in outputs:
        out_fmt, sep, file = spec.partition("=")
        if not sep or out_fmt not in ("text", "json", "sarif", "github") or not file:
            raise click.BadParameter(f"{spec!r}: expected FORMAT=FILE", param_hint="--output")
        parsed.append((out_fmt, file))
    check_outputs(tuple(parsed))
    known = load_audit(baseline) if baseline else None  # bad input before any work
    untraced = audit_untraced()
    source = MetaSource(meta_source) if meta_source else None
    if source is not None:
        source.validate()
    options = AuditOptions(max_traces=max_traces, cache=cache, device=device, differential=differential,
                           variants=variants, samples=samples, both_modes=both_modes, op_timeout=op_timeout)
    missing = device_missing(device) if differential else None
    if missing is not None:  # no such device here: nothing is compared, so nothing passes
        click.echo(f"audit: INCONCLUSIVE: --device {device}: {missing}; nothing was compared", err=True)
        sys.exit(3)
    run = run_audit(tuple(patterns), tuple(imports), source, jobs, shard, options, untraced)
    hits = sum(bool(r.get("cached")) for r in run.records)
    if hits:
        click.echo(f"cache: {hits} of {len(run.records)} ops answered from the result cache (--no-cache: "
                   "audit them all again)", err=True)
    if baseline:
        apply_audit(run, baseline, known)
    if draft_dir:
        from ..audit.draft_dir import write_drafts

        n = write_drafts(run, source, draft_dir)
        click.echo(f"audit: {n} draft contracts written under {draft_dir}", err=True)
    for out_fmt, file in parsed:
        try:
            write_text(file, render(run, out_fmt, quiet=quiet) + "\n")
        except OSError as err:
            raise UserError(f"--output {out_fmt}={file}: cannot write ({err.strerror})") from None
    echo(render(run, fmt, quiet=quiet))
    if debugging():  # each op's internal error in full (the report keeps a line of it)
        for rec in run.records:
            if rec.get("traceback"):
                click.echo(f"shapecheck: internal error in {rec['op']}:\n{rec['traceback']}", err=True, nl=False)
    if run.bad_input is not None:  # the report is out: a kernel that cannot be made is bad input (exit 2), as gate's
        click.echo(f"shapecheck: error: {run.bad_input}", err=True)
    sys.exit(run.exit_code)
