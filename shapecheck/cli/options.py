"""Options shared by the commands, declared once. Nothing here loads torch or z3.

``kernel_source`` adds ``--meta`` and ``--meta-source`` and hands the command one ``source`` argument, a
``kernel.sources.KernelSource``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import click

from ..errors import UserError
from ..kernel.sources import INSTALLED, Function, MetaSource
from ..limits import DEFAULT_MAX_CASES, SHARDS, case_limit
from ..options import declared, of_command
from ..paths import special_file, write_text
from ..render.ci import FORMATS
from .stdout import echo


class _Pair(click.ParamType):
    """A value of two parts split at ``sep`` (the last one with ``last``), built by ``build(left, right)``,
    which raises ValueError for a value it refuses; ``expected`` says what is wanted."""

    sep = ":"
    last = False
    expected = ""

    def build(self, left: str, right: str):
        raise NotImplementedError

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value  # already converted (a default)
        left, sep, right = value.rpartition(self.sep) if self.last else value.partition(self.sep)
        try:
            if not (sep and left and right):
                raise ValueError
            return self.build(left, right)
        except ValueError:
            shown = repr(value) if len(value) <= 80 else repr(value[:60]) + f" ... ({len(value)} characters)"
            self.fail(f"{shown}: expected {self.expected}", param, ctx)


class FunctionSpec(_Pair):
    """``FILE.py:FUNC`` -> ``kernel.sources.Function``."""

    name = expected = "FILE.py:FUNC"
    last = True

    def build(self, left, right):
        return Function(left, right)


class RankSpec(_Pair):
    """``ARG=N`` -> (ARG, N) with 0 <= N <= 16."""

    name = "ARG=N"
    sep = "="
    expected = "ARG=N, a schema argument and its rank (0 to 16), e.g. self=4"

    def build(self, left, right):
        if not (right.isascii() and right.isdigit()):
            raise ValueError
        n = int(right)
        if not left.isidentifier() or not 0 <= n <= 16:
            raise ValueError
        return left, n


class ShardSpec(_Pair):
    """``K/N`` -> (K, N) with 1 <= K <= N <= ``limits.SHARDS``."""

    name = "K/N"
    sep = "/"
    expected = f"K/N with 1 <= K <= N <= {SHARDS}, e.g. 2/4"

    def build(self, left, right):
        if len(left) > 12 or len(right) > 12:  # int() of thousands of digits is slow, then refused anyway
            raise ValueError
        if not (left.isascii() and left.isdigit() and right.isascii() and right.isdigit()):
            raise ValueError  # int() takes "١/٢", " 2", "+2" and "1_0" too: only plain ASCII digits are a shard
        k, n = int(left), int(right)
        if not 1 <= k <= n <= SHARDS:
            raise ValueError
        return k, n


def option(command: str, name: str, **overrides) -> Callable:
    """``command``'s click option ``name`` as ``shapecheck/options.py`` declares it (flag, parameter name,
    default, type, help, ...); ``overrides`` replace click keywords (a help text that only this command says)."""
    o = declared(command, name)
    decls = [o.flag, *([o.short] if o.short else []), o.name]
    kw: dict = {"default": o.default, "help": o.help or None, "multiple": o.multiple, "is_flag": o.is_flag,
                "show_default": o.show_default, "metavar": o.metavar}
    if o.type is not None:
        kw["type"] = CUSTOM_TYPES[o.type]() if isinstance(o.type, str) else o.type
    kw = {k: v for k, v in {**kw, **dict(o.extra), **overrides}.items() if v is not None and v is not False}
    if o.is_flag or o.multiple or "/" in o.flag:
        kw.setdefault("default", o.default)  # False and () are click's own defaults; True is not
    return click.option(*decls, **kw)


def options(command: str, *names: str) -> Callable:
    """Several declared options of ``command``, listed top to bottom as ``--help`` shows them."""
    def decorate(f: Callable) -> Callable:
        for name in reversed(names):
            f = option(command, name)(f)
        return f
    return decorate


def kernel_source(command: str, *, meta_help: str, meta_source_help: str) -> Callable:
    """``--meta FILE.py:FUNC`` and ``--meta-source FILE.py`` (exclusive; only those ``command`` declares) as one
    ``source`` argument."""

    def decorate(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args, meta: Function | None = None, meta_source: str | None = None, **kwargs):
            if meta is not None and meta_source is not None:
                ctx = click.get_current_context(silent=True)
                given = ctx.get_parameter_source("meta_source") if ctx is not None else None
                if given is not click.core.ParameterSource.DEFAULT_MAP:
                    raise click.UsageError("--meta and --meta-source are exclusive")
                meta_source = None  # the project file's meta-source: the command line's --meta wins, as every option
            source = meta if meta is not None else MetaSource(meta_source) if meta_source else INSTALLED
            return f(*args, source=source, **kwargs)

        wrapper = option(command, "meta_source", help=meta_source_help)(wrapper)
        if "meta" in of_command(command):
            wrapper = option(command, "meta", help=meta_help)(wrapper)
        return wrapper

    return decorate


def import_option(command: str) -> Callable:
    return option(command, "imports")


def contract_option(command: str) -> Callable:
    return option(command, "contract")


def max_cases_option(command: str) -> Callable:
    """``--max-cases N``: every contract the command loads may have up to N cases (``limits.case_limit``)."""

    def decorate(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args, max_cases: int | None = None, **kwargs):
            with case_limit(max_cases):
                return f(*args, **kwargs)

        return option(command, "max_cases",
                      help="Refuse a contract whose choices make more than N cases; the binding work allowed "
                           f"grows with it [default: {DEFAULT_MAX_CASES}].")(wrapper)
    return decorate


def case_era_options(command: str) -> Callable:
    return options(command, "cases", "eras")


# ---------------------------------------------------------------------------------------------------------
# Output: --format for stdout, --output FORMAT=FILE (repeatable), --quiet



class OutputFile(_Pair):
    """``FORMAT=FILE`` (``-`` for stdout) -> (format, file)."""

    name = "FORMAT=FILE"
    sep = "="
    expected = f"FORMAT=FILE with FORMAT one of {', '.join(FORMATS)} (FILE - for stdout)"

    def build(self, left, right):
        if left not in FORMATS:
            raise ValueError
        return left, right


#: the declarations' own types (``shapecheck/options.py`` names them)
class BudgetSpec(click.ParamType):
    """``S``, ``case=S`` or ``run=S`` (seconds, > 0) -> (scope, seconds)."""

    name = "[case=|run=]S"

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        scope, _, seconds = value.rpartition("=")
        try:
            s = float(seconds)
            if scope not in ("", "case", "run") or not 0 < s < 10**7:
                raise ValueError
        except ValueError:
            self.fail(f"{value[:80]!r}: expected seconds (per case), case=SECONDS or run=SECONDS, a number above 0",
                      param, ctx)
        return (scope or "case", s)


def set_debug(on: bool) -> None:
    """``--debug``: as ``SHAPECHECK_DEBUG=1``."""
    if on:
        import os

        os.environ["SHAPECHECK_DEBUG"] = "1"


def debugging() -> bool:
    """``SHAPECHECK_DEBUG=1`` (``--debug`` sets it): internal errors print their full traceback on stderr."""
    import os

    return os.environ.get("SHAPECHECK_DEBUG", "").strip() not in ("", "0")


def debug_option(command: str) -> Callable:
    """``command``'s ``--debug`` (as declared): set as soon as it is read, before ``--import`` runs."""
    o = declared(command, "debug")
    return click.option(o.flag, o.name, is_flag=True, default=o.default, expose_value=False, is_eager=True,
                        callback=lambda ctx, param, value: set_debug(value), help=o.help)


def debug_flag(f: Callable) -> Callable:
    """``--debug`` of the command group (``shapecheck --debug verify op ...``)."""
    return click.option("--debug", is_flag=True, expose_value=False, is_eager=True,
                        callback=lambda ctx, param, value: set_debug(value),
                        help="Print the full traceback of an internal error (exit 4) on stderr; the same as "
                             "SHAPECHECK_DEBUG=1.")(f)


CUSTOM_TYPES: dict[str, type[click.ParamType]] = {"FILE.py:FUNC": FunctionSpec, "ARG=N": RankSpec, "K/N": ShardSpec,
                                                  "FORMAT=FILE": OutputFile, "[case=|run=]S": BudgetSpec}


def output_options(command: str) -> Callable:
    return options(command, "fmt", "outputs", "quiet")


def check_outputs(outputs: tuple[tuple[str, str], ...]) -> None:
    """Fail before any work when an output file's directory does not exist, when two outputs go to one file
    (or both to stdout): the second would overwrite the first, or when an output would overwrite a file the
    command reads (its contract, baseline, kernel file): the report would replace the input."""
    import os
    from pathlib import Path

    seen: dict[str, str] = {}
    written = [(f"{fmt}={file}", file) for fmt, file in outputs]
    ctx = click.get_current_context(silent=True)
    params = ctx.params if ctx is not None else {}
    if params.get("write_baseline"):  # a file gate writes too
        written.append((f"--write-baseline {params['write_baseline']}", str(params["write_baseline"])))
    read = _read_by(params)
    for what, file in written:
        where = "-" if file == "-" else os.path.realpath(file)  # realpath: a loop of links is refused below, not raised
        inside = _read_inside(where, read) if file != "-" else None
        if inside is not None:
            raise click.BadParameter(f"{what} would overwrite a file under {inside}, which this command reads: give "
                                     "the report a file of its own", param_hint="--output")
        if file != "-" and not Path(where).parent.is_dir():
            raise click.BadParameter(f"{what}: the directory {Path(where).parent} does not exist",
                                     param_hint="--output")
        if file != "-" and special_file(file):  # opening one to write waits for a reader: refused before any work
            raise click.BadParameter(f"{what}: a FIFO or socket, not a file", param_hint="--output")
        if file != "-" and os.path.islink(file) and not os.path.exists(file):
            raise click.BadParameter(f"{what}: a link that leads nowhere (a loop, or a missing target)",
                                     param_hint="--output")
        if where in seen:
            raise click.BadParameter(f"{seen[where]} and {what} write to the same "
                                     f"{'stdout' if file == '-' else 'file'}: give each report its own file",
                                     param_hint="--output")
        same = read.get(where) or read.get(_identity(where))  # a hard link is the same file by another name
        if same:  # (a file under a directory input was refused above, by ``_read_inside``)
            raise click.BadParameter(f"{what} would overwrite {same}, which this command reads: give the "
                                     "report a file of its own", param_hint="--output")
        seen[where] = what


#: the parameters that name files a command writes, never reads
_WRITTEN = frozenset({"outputs", "junit", "sarif", "json_file", "write_baseline"})


def _reads(where: str, read: dict[str, str]) -> str | None:
    """What the command reads at realpath ``where`` (the option that names it), by name, by inode (a hard link)
    or as a file under a directory it reads; None if nothing."""
    return read.get(where) or read.get(_identity(where)) or _read_inside(where, read)


def _read_by(params: dict) -> dict[str, str]:
    """realpath (and ``dev:inode``, for a hard link) -> the option that names it, for every existing file a
    command's parameters name (a kernel given as ``FILE:FUNCTION`` included), the project file whose
    ``[tool.shapecheck]`` it read, and ``dir:`` + realpath for each directory it names (the gate's contracts)."""
    import os
    from pathlib import Path

    from ..config import find_pyproject

    found: dict[str, str] = {}
    named: list[tuple[str, str]] = []
    for name, value in params.items():
        if name in _WRITTEN:
            continue
        for v in value if isinstance(value, (tuple, list)) else (value,):
            if not isinstance(v, (str, os.PathLike)) and isinstance(getattr(v, "file", None), str):
                v = v.file  # a kernel source already parsed (--meta FILE:FUNC, --meta-source FILE)
            if isinstance(v, (str, os.PathLike)):
                text = os.fspath(v)
                named += [(f"--{name.replace('_', '-')} {c}", c) for c in (text, text.rpartition(":")[0]) if c]
    project = find_pyproject(Path.cwd())
    if project is not None:
        named.append((f"the project file {project}", str(project)))
    # the folders an op's contract is looked for in, and the gate's contracts without --contracts: the project's
    # ``[tool.shapecheck] contracts`` and the shipped ones (hunt 54: a report written over a contract found there)
    try:
        from ..contract.find import contract_search

        named += [(f"the contract folder {d}", str(d)) for d in contract_search()]
    except UserError:
        pass  # a malformed project file: its own error comes with the command's reading of it
    for what, candidate in named:
        if os.path.isfile(candidate):
            found.setdefault(os.path.realpath(candidate), what)
            found.setdefault(_identity(candidate), what)
        elif os.path.isdir(candidate):
            found.setdefault("dir:" + os.path.realpath(candidate), what)
    return found


def _identity(file: str) -> str:
    """``dev:inode`` of an existing file ("" for none): two names of one file (a hard link) share it."""
    import os

    try:
        st = os.stat(file)
    except OSError:
        return ""
    return f"{st.st_dev}:{st.st_ino}"


def _read_inside(where: str, read: dict[str, str]) -> str | None:
    """The directory input (its option) under which an existing file ``where`` lies: the command may read it
    (the gate reads every contract a directory holds)."""
    import os

    if not os.path.isfile(where):
        return None
    for key, what in read.items():
        if key.startswith("dir:") and where.startswith(key[4:].rstrip(os.sep) + os.sep):
            return what
    return None


def emit(result, fmt: str, outputs: tuple[tuple[str, str], ...], *, context: int = 2, quiet: bool = False) -> None:
    """Write every ``--output`` and print ``--format`` to stdout (unless an output took stdout)."""
    from pathlib import Path

    from ..errors import UserError
    from ..render.ci import render

    cwd = Path.cwd()
    to_stdout = False
    for out_fmt, file in outputs:
        text = render(result, out_fmt, cwd, context=context, quiet=quiet)
        if file == "-":
            echo(text)
            to_stdout = True
            continue
        try:
            write_text(file, text if text.endswith("\n") else text + "\n")
        except OSError as err:
            raise UserError(f"--output {out_fmt}={file}: cannot write ({err.strerror})") from None
    if not to_stdout:
        echo(render(result, fmt, cwd, context=context, quiet=quiet))


def requested_outputs(argv: list[str], root: click.Command | None = None) -> tuple[str | None, list[tuple[str, str]]]:
    """(--format, [(format, file)]) as the command line asks, read without click's parsing: a run that fails
    before or during option parsing still writes the reports CI is waiting for. Only options the invoked command
    has count (``root``: the CLI, whose subcommands argv names first), and a token that is another option's value
    is never read as an option: ``--case --output=json=f`` or an unknown ``--json f`` writes nothing."""
    fmt, outputs, _ = _scan(argv, root)
    return fmt, outputs


def _scan(argv: list[str], root: click.Command | None) -> tuple[str | None, list[tuple[str, str]], set[int]]:
    """``requested_outputs``, and the positions in argv of the tokens that name a report's file."""
    command = _invoked(argv, root)
    if command is None:
        return None, [], set()
    takes_value = {name: not (p.is_flag or p.count) for p in command.params if isinstance(p, click.Option)
                   for name in (*p.opts, *p.secondary_opts)}
    fmt, outputs, at = None, [], set()
    aliases = {"--sarif": "sarif", "--junit": "junit", "--json": "json"}
    i = 0
    while i < len(argv):
        name, eq, inline = argv[i].partition("=")
        i += 1
        if argv[i - 1] == "--":
            break  # the rest are arguments
        if name not in takes_value or not takes_value[name]:
            continue
        value = inline if eq else (argv[i] if i < len(argv) else None)
        i += 0 if eq else 1  # the next token is this option's value, whatever it looks like
        if value is None:
            continue
        if name == "--format":
            fmt = value
        elif name == "--output":
            out_fmt, sep, file = value.partition("=")
            if sep and out_fmt in FORMATS and file:
                outputs.append((out_fmt, file))
                at.add(i - 1)
        elif name in aliases:
            outputs.append((aliases[name], value))
            at.add(i - 1)
    return fmt, outputs, at


def _invoked(argv: list[str], root: click.Command | None) -> click.Command | None:
    """The command argv invokes under ``root`` (its subcommand names first); None where it names none."""
    command = root
    for word in argv:
        if not isinstance(command, click.Group):
            break
        command = command.commands.get(word)
    return None if command is None or isinstance(command, click.Group) else command


def _configured(argv: list[str], root: click.Command | None) -> tuple[str | None, list[tuple[str, str]]]:
    """The ``format`` and ``output`` the nearest ``[tool.shapecheck]`` sets for the command ``argv`` runs (None and
    [] where it sets none, or cannot be read: a malformed project file is the error being reported)."""
    from ..config import default_map

    if not isinstance(root, click.Group):
        return None, []
    try:
        node: object = default_map(root, argv=argv)
        for part in argv[:2]:
            if not isinstance(node, dict) or part not in node:
                break
            node = node[part]
    except Exception:  # noqa: BLE001 - never raises: the error being reported is what matters
        return None, []
    if not isinstance(node, dict):
        return None, []
    fmt = node.get("fmt") if isinstance(node.get("fmt"), str) else None
    outputs = []
    for item in node.get("outputs") or ():  # "FORMAT=FILE", as on the command line
        out_fmt, sep, file = str(item).partition("=")
        if sep and out_fmt in FORMATS and file:
            outputs.append((out_fmt, file))
    return fmt, outputs


def emit_error(argv: list[str], message: str, exit_code: int, root: click.Command | None = None) -> None:
    """Write every requested report as a failed run (see ``render.ci.render_error``); --format github also
    prints an ``::error`` line. Never raises: the error itself is what matters. ``root``: the CLI (which
    options each command has)."""
    import os

    from ..render.ci import render_error

    fmt, outputs, at = _scan(argv, root)
    if fmt is None or not outputs:  # the project file's ``format`` and ``output`` for the command (hunt 54)
        fmt_set, outputs_set = _configured(argv, root)
        fmt, outputs = fmt or fmt_set, outputs or outputs_set
    read = _read_by({"argv": [t.partition("=")[2] if t.startswith("--") else t
                              for i, t in enumerate(argv) if i not in at]})
    groups = ("verify", "fuzz", "ref", "contract")  # commands of two words: verify op, fuzz op, ref check, ...
    command = " ".join(argv[:2]) if argv[:1] and argv[0] in groups else " ".join(argv[:1])
    written: set[str] = set()
    for out_fmt, file in outputs:
        where = file if file == "-" else os.path.realpath(file)
        if file != "-" and (where in written or _reads(where, read)):
            continue  # two reports asked of one file: the first is written; never over a file the command reads
            # (check_outputs refuses the run)
        written.add(where)
        text = render_error(out_fmt, command, message, exit_code)
        try:
            if file == "-":
                click.echo(text)
            elif text:
                write_text(file, text if text.endswith("\n") else text + "\n")
        except OSError:
            pass
    if fmt and fmt != "text" and not any(f == "-" for _, f in outputs):  # --format: the report on stdout
        click.echo(render_error(fmt, command, message, exit_code))


def device_option(command: str) -> Callable:
    return option(command, "device")


def check_device(device: str) -> None:
    """Stop with a usage error (exit 2) when ``device`` cannot be used here."""
    if device == "cpu":
        return
    from .._torch import core as C
    from ..errors import UserError

    why = C.device_available(device)
    if why is not None:
        raise UserError(f"--device {device}: {why}")
