"""``shapecheck gate``: the CI command. Only click and the shared options (no torch, no z3) are imported here
at module level; the gate and torch load inside the callback."""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

import click

from .options import (
    ShardSpec,
    cache_option,
    check_outputs,
    emit,
    import_option,
    jobs_option,
    kernel_source,
    max_cases_option,
    output_options,
    timeout_option,
)

GATE_HELP = """Exit codes: 0 every contract passes, 1 a violation or a stale suppression, 3 inconclusive and
nothing failed (never a pass), 2 bad input (a malformed contract anywhere in the set, a missing file, an
unknown op, a kernel file that does not parse, usage), 4 internal error (a bug in shapecheck)."""


def in_ci() -> bool:
    """Whether the ``CI`` variable says so: set and not a false word (``CI=false`` or ``CI=0`` is not CI)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")


class Progress:
    """A single updating ``gate: 12/40 cases`` line on a terminal's stderr, shown once a run has taken more
    than ``delay`` seconds. Silent when the stream is not a TTY or when running in CI (``in_ci``)."""

    def __init__(self, stream: TextIO, *, enabled: bool | None = None, delay: float = 1.0,
                 clock=time.monotonic):
        if enabled is None:
            enabled = stream.isatty() and not in_ci()
        self.stream, self.enabled, self.delay, self.clock = stream, enabled, delay, clock
        self.start = clock()
        self.last = float("-inf")
        self.shown = False

    def __call__(self, done: int, total: int, label: str) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if now - self.start < self.delay or now - self.last < 0.1:
            return
        self.last = now
        self.stream.write(f"\rgate: {done}/{total} cases  {label[:70]}\x1b[K")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


@click.command("gate", epilog=GATE_HELP)
@click.argument("contract_paths", nargs=-1, type=click.Path(exists=False))
@import_option
@kernel_source(allow_meta=False, meta_help="", meta_source_help=(
    "Check the kernels this _meta_registrations.py-style file registers instead of the installed torch's; ops it "
    "does not register are checked against the installed torch (said so)."))
@click.option("--junit", type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE",
              help="Write a JUnit XML report (as --output junit=FILE).")
@click.option("--sarif", type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE",
              help="Write a SARIF 2.1.0 report (as --output sarif=FILE).")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE",
              help="Write the JSON report, verify's JSON per contract (as --output json=FILE).")
@output_options()
@click.option("--baseline", type=click.Path(dir_okay=False), metavar="FILE",
              help="Fail only on findings that are not in this baseline (written by --write-baseline).")
@click.option("--write-baseline", type=click.Path(dir_okay=False), metavar="FILE",
              help="Record today's findings in FILE as the baseline, then report as --baseline FILE would.")
@click.option("--shard", type=ShardSpec(), default="1/1", show_default=True,
              help="Run only shard K of N (whole contracts, balanced by case count, deterministic).")
@click.option("--explore", is_flag=True, help="Explore every case in full and map its meta-kernel paths.")
@click.option("--max-traces", type=click.IntRange(1, 10_000), default=64, show_default=True,
              help="Traces per case when exploring the kernel's guards.")
@timeout_option
@jobs_option
@max_cases_option
@cache_option
def gate(contract_paths, imports, source, junit, sarif, json_file, fmt, outputs, quiet, baseline, write_baseline, shard,
         explore, max_traces, timeout_ms, jobs, cache):
    """Verify every contract found: CONTRACT_PATHS (files or directories), or by default the shipped
    contracts/ plus those listed in pyproject.toml under [tool.shapecheck] contracts."""
    from pathlib import Path

    outputs = tuple(outputs) + tuple((f, file) for f, file in (("junit", junit), ("sarif", sarif), ("json", json_file))
                                     if file)
    check_outputs(outputs)
    from ..ci import baseline as B
    from ..ci.gate import GateOptions, run_gate

    known = B.load(baseline) if baseline and not write_baseline else None  # bad input before any work

    if imports:  # what registers the ops (it may load torch; the cache key then names its files)
        from ..kernel.load import import_modules

        import_modules(imports)

    opts = GateOptions(source=source, shard=shard, explore=explore, max_traces=max_traces,
                       timeout_ms=timeout_ms, jobs=jobs, cache=cache, imports=tuple(imports))
    progress = Progress(sys.stderr)
    try:
        result = run_gate(list(contract_paths), opts, cwd=Path.cwd(), progress=progress)
    finally:
        progress.close()
    if write_baseline:
        recorded = B.write(result, write_baseline)
        click.echo(f"gate: {recorded} finding(s) recorded in the baseline {write_baseline}", err=True)
        baseline = write_baseline
    if baseline:
        B.apply(result, baseline, known)
    emit(result, fmt, outputs, quiet=quiet)
    for run in result.errors:  # bad input of one contract: the others ran and were reported
        click.echo(f"shapecheck: error: {run.error}", err=True)
    sys.exit(result.exit_code)
