"""The command line: the only code that prints or exits.

Exit codes: 0 pass, 1 violation found, 2 usage/input error, 3 inconclusive, 4 internal error (a bug).
"""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Callable
from typing import Any

import click

from .options import (
    case_era_options,
    check_outputs,
    contract_option,
    debug_flag,
    debug_option,
    debugging,
    emit,
    import_option,
    kernel_source,
    max_cases_option,
    options,
    output_options,
)
from .stdout import echo, guard_for

EXIT_HELP = """Exit codes: 0 pass, 1 violation found, 2 bad input (contract, op, kernel file, usage),
3 inconclusive (the solver gave up; never a pass), 4 internal error (a bug in shapecheck)."""


@click.group(epilog=EXIT_HELP)
@click.version_option(package_name="torch-shapecheck", prog_name="shapecheck")
@debug_flag
def cli() -> None:
    """Prove PyTorch meta kernels against declarative shape contracts, for every size."""


@cli.group()
def verify() -> None:
    """Verify kernels against contracts."""


@verify.command("op", epilog=EXIT_HELP)
@click.argument("op")
@import_option("verify")
@contract_option("verify")
@kernel_source("verify", meta_help="Check this Python function as the op's meta kernel.",
               meta_source_help="A _meta_registrations.py-style file: check the function it registers for OP.")
@output_options("verify")
@options("verify", "max_traces", "timeout_ms", "budget")
@case_era_options("verify")
@max_cases_option("verify")
@options("verify", "full", "explore", "confirm_export", "both_modes", "context", "show_obligations", "jobs", "cache")
@debug_option("verify")
def verify_op_cmd(op, imports, contract, source, fmt, outputs, quiet, max_traces, timeout_ms, budget, cases, eras, full,
                  explore, confirm_export, both_modes, context, show_obligations, jobs, cache):
    """Prove OP's meta kernel against its contract (OP: aten._x or aten::_x)."""
    from dataclasses import replace

    from ..result.run import VerifyRun

    check_outputs(outputs)
    if imports:  # what registers the ops (it may load torch; the cache key then names its files)
        from ..kernel.load import import_modules

        import_modules(imports)
    if max_traces is None:
        max_traces = 32 if explore else 64
    from ..limits import max_cases as limit_in_force
    from ..options import VerifyOptions, pick

    opts = pick(VerifyOptions, locals(), max_cases=limit_in_force())  # each field from the option of its name
    key = None
    if cache:  # nothing up to the answer from the cache imports torch or z3
        from ..cache import store as R

        key = R.verify_key(op, contract, source, tuple(imports), opts.key()) if R.enabled() else None
        hit = R.verify_lookup(key) if key is not None else None
        if hit is not None:
            c, report = hit.value
            report = replace(report, cache=hit.note())
            result = VerifyRun.of(c, report, source)  # c: the cached ContractInfo
            emit(result, fmt, outputs, context=context, quiet=quiet)
            sys.exit(report.exit_code)
    from ..trace.isolate import whole_command

    def load_and_verify() -> tuple:
        from ..kernel.load import load_target
        from ..prove.verify import verify_contract

        c, kernel = load_target(op, contract, source)
        report = verify_contract(c, kernel, opts, _progress(c, opts), isolate=True)
        if key is not None:
            R.verify_store(key, c, kernel, report)
        return c.info, report

    from .. import progress

    # the run's budget covers loading the user's files too; this command's only (an in-process caller's next
    # command, an audit say, kept it: its import cut at this run's 6 s, in CI)
    previous, progress.load_seconds = progress.load_seconds, opts.run_timeout
    try:
        info, report = whole_command(load_and_verify)  # a kernel file that crashes as it loads: exit 2, not 139
    finally:
        progress.load_seconds = previous
    result = VerifyRun.of(info, report, source)
    emit(result, fmt, outputs, context=context, quiet=quiet)
    show_tracebacks(report.violations)
    sys.exit(report.exit_code)


def _progress(contract: Any, opts: Any) -> Callable[[str], None]:
    """verify's progress on stderr: an updating line on a terminal after a second; elsewhere (a CI log) a
    line a minute once the run has taken a minute."""
    from .gate import Progress

    total = sum(1 for case in contract.cases() if not opts.cases or any(s in case.id for s in opts.cases))
    show = Progress(sys.stderr, name="verify", plain=60.0)
    done = 0

    def on_case(case_id: str) -> None:
        nonlocal done
        done += 1
        # where plain FakeTensorMode runs another kernel, each case runs again for it: a second pass, counted as one
        # (it read "4/2 cases", hunt 49)
        again = total and done > total
        show((done - 1) % total + 1 if total else done, total,
             f"{case_id} (plain FakeTensorMode's kernel)" if again else case_id)
        if total and done % total == 0:
            show.close()

    return on_case


def show_tracebacks(violations) -> None:
    """With debugging on, the traceback of every case's internal error (SC023) on stderr."""
    if debugging():
        for v in violations:
            if v.traceback:
                click.echo(f"shapecheck: internal error{f' in case {v.case}' if v.case else ''}:\n{v.traceback}", err=True,
                           nl=False)


@cli.group()
def contract() -> None:
    """Work with contract files."""


@contract.command("check", epilog=EXIT_HELP)
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=False))
@import_option("contract check")
@max_cases_option("contract check")
def contract_check(files, imports):
    """Load and validate contract files, or every *.toml under a directory (every case is bound once), and
    check each contract's arguments against its op's schema (a note when the op is not registered yet)."""
    from pathlib import Path

    from ..ci.gate import contract_files
    from ..contract.load import load_contract
    from ..kernel.load import import_modules, schema_note

    paths = contract_files(list(files), Path.cwd())
    import_modules(imports)
    for path in paths:
        c = load_contract(path)
        n = sum(1 for _ in c.cases())
        note = schema_note(c)
        echo(f"ok: {path}: {c.op}, {len(c.dims)} dims, {n} cases, {len(c.paths)} paths")
        if note:
            echo(note)


@contract.command("draft", epilog=EXIT_HELP)
@click.argument("op")
@import_option("contract draft")
@options("contract draft", "out", "ranks", "no_trace")
def contract_draft(op, imports, out, ranks, no_trace):
    """Write a starting contract for OP from its schema: one [[args]] per argument, fresh dims per tensor
    dimension, choices for dtypes, bools and ints, and the outputs the meta kernel gives on each case (traced
    symbolically; a path per group of cases with the same outputs). '# TODO' marks what a person must decide. The draft passes
    `contract check` as written."""
    from ..audit.schema_draft import draft_contract
    from ..errors import UserError
    from ..kernel.load import import_modules
    from ..paths import write_text

    twice = sorted({a for a, _ in ranks if sum(b == a for b, _ in ranks) > 1})
    if twice:  # the last value would win silently
        raise UserError(f"--rank {twice[0]}: given more than once ({', '.join(f'{a}={n}' for a, n in ranks if a == twice[0])})")
    import_modules(imports)
    text = draft_contract(op, dict(ranks), trace=not no_trace)
    if out is None:
        echo(text, nl=False)
        return
    try:
        write_text(out, text)
    except OSError as err:
        raise UserError(f"--out {out}: cannot write ({err.strerror or err})") from None
    echo(f"wrote {out}; next: shapecheck contract check {out}")


def _register_commands() -> None:
    """Commands that live in their own modules (each imports only click at module level)."""
    import importlib
    import importlib.util

    for module, attr in (("gate", "gate"), ("fuzz", "fuzz"), ("ref", "ref"), ("audit", "audit")):
        name = f"{__package__}.{module}"
        if importlib.util.find_spec(name) is not None:
            cli.add_command(getattr(importlib.import_module(name), attr))


_register_commands()


def main(argv: list[str] | None = None) -> None:
    """Entry point: one place turns errors into messages and exit codes."""
    from ..config import default_map
    from ..errors import ShapecheckError, watch_interrupts
    from ..limits import no_hard_exit

    watch_interrupts()  # a kernel's own KeyboardInterrupt is its failure; the user's Ctrl-C stops the run
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        with no_hard_exit(), guard_for(args):  # a kernel's os._exit is its failure, not a silent exit 0
            cli.main(args=args, prog_name="shapecheck", standalone_mode=False, default_map=default_map(cli, argv=args))
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        _fail(args, "shapecheck: aborted", 2)
    except click.exceptions.NoArgsIsHelpError as e:  # `shapecheck` (or a group) alone: its help, as it reads
        click.echo(e.format_message(), err=True)
        sys.exit(2)
    except click.ClickException as e:
        where = f" ({e.ctx.command_path})" if getattr(e, "ctx", None) is not None else ""
        _fail(args, f"shapecheck: error{where}: {_one_line(e.format_message())} (see --help)", 2)
    except ShapecheckError as e:
        if e.exit_code == 2:
            _fail(args, f"shapecheck: error: {_one_line(e)}", 2)
        _internal(args, f"{_one_line(e)}", e.exit_code)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo("shapecheck: interrupted", err=True)
        sys.exit(130)
    except OSError as e:
        if e.errno in _PATH_ERRNOS:  # a name the user gave (an op, a file): no file can have it
            name = str(e.filename or "")
            shown = name if len(name) <= 120 else f"{name[:60]}...{name[-40:]} ({len(name)} characters)"
            _fail(args, f"shapecheck: error: {shown}: {os.strerror(e.errno)}", 2)
        _internal(args, f"{type(e).__name__}: {_one_line(e)}", 4)
    except BaseException as e:  # noqa: BLE001 - the last line of defence: never a traceback, never exit 0
        _internal(args, f"{type(e).__name__}: {_one_line(e)}", 4)


#: errors of a path as such (too long, a loop of links): the path came from the user, so it is bad input
_PATH_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.ELOOP})


def _internal(args: list[str], what: str, code: int) -> None:
    """A bug in shapecheck: one line (saying how to see the traceback), or the traceback when debugging."""
    import traceback

    if debugging():
        click.echo(traceback.format_exc(), err=True, nl=False)
        hint = ""
    else:
        hint = " (SHAPECHECK_DEBUG=1 or --debug prints the traceback)"
    _fail(args, f"shapecheck: internal error (a bug in shapecheck, please report it): {what}{hint}", code)



def _fail(args: list[str], message: str, code: int) -> None:
    """One line on stderr, the requested reports written as a failed run, then exit."""
    from ..config import FROM_FILE
    from .options import emit_error

    for name, where in FROM_FILE.items():  # a value the project file gave, refused only when used
        given = any(a == f"--{name}" or a.startswith(f"--{name}=") for a in args)
        if not given and re.search(rf"--{re.escape(name)}\b", message):
            message = f"{message} (set by {where})"
            break
    click.echo(message, err=True)
    emit_error(args, message.removeprefix("shapecheck: "), code, cli)
    sys.exit(code)


#: every character ``str.splitlines`` breaks a line at (\x1c-\x1e, \x85 and U+2028 besides \r, \n, \v, \f)
_LINE_BREAKS = {c: c.encode("unicode_escape").decode("ascii") for c in "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


def _one_line(message: object, limit: int = 2000) -> str:
    """A message on one line (line breaks from a file name, a TOML key or a user's exception escaped), cut to
    ``limit`` characters."""
    text = str(message).translate(str.maketrans(_LINE_BREAKS))
    return text if len(text) <= limit else text[:limit - 3] + "..."


def run() -> None:
    """The console script: ``main``, then leave without interpreter teardown.

    Once a verification has run, tearing down torch, dynamo and z3 takes about 0.8 s on a 2-core machine
    (torch 2.13), a fifth of a full verify. Everything that goes out (stdout, stderr, report files, which are
    written and closed by then) is flushed first; the exit code is unchanged. ``main`` stays an ordinary
    function for tests and embedding.
    """
    import os

    code: int
    try:
        main()
        code = 0
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code
        else:  # sys.exit("message") prints the message and exits 1
            print(e.code, file=sys.stderr)
            code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (shapecheck ... | head): nothing more to say
            pass
    os._exit(code)
