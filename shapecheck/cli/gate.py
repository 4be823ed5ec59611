"""``shapecheck gate``: the CI command. Only click and the shared options (no torch, no z3) are imported here
at module level; the gate and torch load inside the callback."""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

import click

from .options import (
    check_outputs,
    debug_option,
    emit,
    import_option,
    kernel_source,
    max_cases_option,
    option,
    options,
    output_options,
)

GATE_HELP = """Exit codes: 0 every contract passes, 1 a violation or a stale suppression, 3 inconclusive and
nothing failed (never a pass), 2 bad input (a malformed contract anywhere in the set, a missing file, an
unknown op, a kernel file that does not parse, usage), 4 internal error (a bug in shapecheck)."""


def in_ci() -> bool:
    """Whether the ``CI`` variable says so: set and not a false word (``CI=false`` or ``CI=0`` is not CI)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")


class Progress:
    """A single updating ``gate: 12/40 cases`` line on a terminal's stderr, shown once a run has taken more
    than ``delay`` seconds. Silent when the stream is not a TTY or when running in CI (``in_ci``), unless
    ``plain`` (seconds): then a plain line, at most one per ``plain`` seconds, once the run has taken that long
    (a log shows a long run is alive)."""

    def __init__(self, stream: TextIO, *, enabled: bool | None = None, delay: float = 1.0,
                 clock=time.monotonic, name: str = "gate", plain: float | None = None):
        tty = stream.isatty() and not in_ci()
        if enabled is None:
            enabled = tty or plain is not None
        self.stream, self.enabled, self.delay, self.clock = stream, enabled, delay, clock
        self.name, self.plain = name, None if tty else plain
        self.start = clock()
        self.last = float("-inf")
        self.shown = False

    def __call__(self, done: int, total: int, label: str) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if self.plain is not None:
            if now - self.start >= self.plain and now - max(self.last, self.start) >= self.plain:
                self.last = now
                self.stream.write(f"{self.name}: {done}/{total} cases after {now - self.start:.0f}s  {label[:70]}\n")
                self.stream.flush()
            return
        if now - self.start < self.delay or now - self.last < 0.1:
            return
        self.last = now
        self.stream.write(f"\r{self.name}: {done}/{total} cases  {label[:70]}\x1b[K")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


@click.command("gate", epilog=GATE_HELP)
@click.argument("contract_paths", nargs=-1, type=click.Path(exists=False))
@import_option("gate")
@kernel_source("gate", meta_help="", meta_source_help=(
    "Check the kernels this _meta_registrations.py-style file registers instead of the installed torch's; ops it "
    "does not register are checked against the installed torch (said so)."))
@options("gate", "junit", "sarif", "json_file")
@output_options("gate")
@options("gate", "baseline", "write_baseline")
@option("gate", "shard", help="Run only shard K of N (whole contracts, balanced by case count, deterministic).")
@options("gate", "explore", "max_traces", "timeout_ms", "jobs")
@max_cases_option("gate")
@debug_option("gate")
@option("gate", "cache")
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

    from ..options import pick

    opts = pick(GateOptions, locals())  # every field from the option of its name
    from ..trace.isolate import whole_command

    progress = Progress(sys.stderr)
    try:  # in a child: a kernel file that crashes as it loads is exit 2, not 139 (trace/isolate.py)
        result = whole_command(lambda: run_gate(list(contract_paths), opts, cwd=Path.cwd(), progress=progress))
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
