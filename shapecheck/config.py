"""``[tool.shapecheck]`` in the nearest ``pyproject.toml`` (the current directory or a parent): contract
directories, and defaults for every command option that makes sense in a project file. The command line
takes precedence over the file.

    [tool.shapecheck]
    contracts = ["shape_contracts/"]   # gate: checked besides the shipped contracts
    imports = ["mylib.ops"]            # what registers the ops (modules, or files relative to this file)
    jobs = 2                           # any option of any command that has it (dashes or underscores)
    cache = false                      # verify and gate: no result cache (docs/cache.md)
    timeout-ms = 20000

    [tool.shapecheck.gate]             # for one command only (verify, gate, fuzz, ref, audit)
    format = "github"
    baseline = "shapecheck-baseline.json"

    [tool.shapecheck.audit]
    samples = "mylib.testing:samples_for"   # sample calls per op (docs/audit.md)

    [tool.shapecheck.audit.untraced]   # ops the audit may leave untraced, each with its reason
    "mylib::cuda_only.default" = "no CPU kernel and a fake that needs a CUDA stream"

Paths in the file (``contracts``, ``baseline``, ``meta-source``, ``output``) are relative to the file.
Every value is checked against the option it sets (its click type, whether it repeats) before click sees it:
a wrong value is bad input naming the file and the key. Torch-free; read once per run, before the command
parses its options.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import click

from .errors import UserError
from .limits import CONFIG_BYTES, key_text, read_input
from .options import config_keys

#: command tables and the click path of each command
COMMANDS = {"verify": ("verify", "op"), "gate": ("gate",), "fuzz": ("fuzz", "op"), "ref": ("ref", "check"),
            "audit": ("audit",)}
#: options a project file may set: file key (dashes) -> click parameter name, from their declarations
OPTIONS = config_keys()
_PATHS = {"baseline", "meta-source"}
_PATH_LISTS = {"imports"}  # entries that name a file are relative to the pyproject; module names stay
_NOT_OPTIONS = {"contracts", "untraced"}  # read by the gate itself; [tool.shapecheck.audit.untraced] by audit
_HOMES = {"contracts": "tool.shapecheck", "untraced": "tool.shapecheck.audit"}  # the one table each is read from


def find_pyproject(start: Path) -> Path | None:
    """The ``pyproject.toml`` in ``start`` or its nearest parent: whatever is there by that name (a FIFO or a
    directory is then refused when it is read, not passed over)."""
    for d in (start, *start.parents):
        cand = d / "pyproject.toml"
        if cand.exists() or cand.is_symlink():
            return cand
    return None


def table(pyproject: Path) -> dict[str, Any]:
    """The file's ``[tool.shapecheck]`` table (empty when it has none)."""
    raw = read_input(pyproject, CONFIG_BYTES, str(pyproject))
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError, RecursionError) as err:
        raise UserError(f"{pyproject}: cannot read it as TOML ({err})") from None
    found: Any = data
    for key, where in (("tool", "tool"), ("shapecheck", "tool.shapecheck")):
        found = found.get(key, {})
        if not isinstance(found, dict):
            raise UserError(f"{pyproject}: [{where}]: expected a table, found {_type_name(found)} {_short(found)}")
    return found


def configured_contract_paths(pyproject: Path) -> list[Path]:
    """``[tool.shapecheck] contracts = [...]``, relative to the pyproject file."""
    entries = table(pyproject).get("contracts", [])
    if not isinstance(entries, list) or not all(isinstance(e, str) and "\x00" not in e for e in entries):
        raise UserError(f"{pyproject}: [tool.shapecheck] contracts: expected a list of paths, found {entries!r}")
    return [pyproject.parent / e for e in entries]


def audit_untraced(cwd: Path | None = None) -> dict[str, str]:
    """``[tool.shapecheck.audit.untraced]``: op name -> why the audit may leave it untraced (a reason each)."""
    pyproject = find_pyproject(cwd or Path.cwd())
    if pyproject is None:
        return {}
    own = table(pyproject).get("audit", {})
    found = own.get("untraced", {}) if isinstance(own, dict) else {}
    if not isinstance(found, dict):
        raise UserError(f"{pyproject}: [tool.shapecheck.audit.untraced]: expected op = \"reason\" entries, each "
                        "with a reason")
    for k, v in found.items():  # the entry named (hunt 60: a list of 40 ops, and only the table said)
        if not (isinstance(v, str) and v.strip()):
            raise UserError(f"{pyproject}: [tool.shapecheck.audit.untraced] {k!r}: expected a reason (a non-empty "
                            f"string), got {v!r:.40}")
    return dict(found)


#: option name (``output``) -> where the project file set it (``pyproject.toml [tool.shapecheck] output``), for
#: errors found only when the value is used (a file that cannot be written), which name the option
FROM_FILE: dict[str, str] = {}


def default_map(root: click.Group, cwd: Path | None = None, argv: list[str] | None = None) -> dict[str, Any]:
    """click's ``default_map`` for the command tree ``root``, from the nearest ``[tool.shapecheck]``; every
    value checked against the option of each command it goes to. A shared value another command's option
    refuses (``format = "junit"``, which audit lacks) is left out for that command, and refused only where
    ``argv`` runs it (None: refused everywhere)."""
    FROM_FILE.clear()
    pyproject = find_pyproject(cwd or Path.cwd())
    if pyproject is None:
        return {}
    found = table(pyproject)
    if "contracts" in found:  # checked whether or not this run reads it (gate with paths, verify --contract)
        configured_contract_paths(pyproject)
    if "audit" in found and isinstance(found["audit"], dict) and "untraced" in found["audit"]:
        audit_untraced(pyproject.parent)
    shared = {k: v for k, v in found.items() if k not in COMMANDS}
    out: dict[str, Any] = {}
    refused: dict[str, UserError] = {}  # shared key -> why a command this run does not invoke refused it
    taken: set[str] = set()  # shared keys some command's option takes
    for command, click_path in COMMANDS.items():
        own = found.get(command, {})
        if not isinstance(own, dict):
            raise UserError(f"{pyproject}: [tool.shapecheck.{command}]: expected a table, found {_type_name(own)}")
        params = _options_of(root, click_path)
        runs = argv is None or tuple(str(a) for a in argv[:len(click_path)]) == click_path
        given = {name for name, p in params.items() if argv is not None and runs and any(
            str(a) == opt or str(a).startswith(opt + "=") for a in argv for opt in (*p.opts, *p.secondary_opts))}
        common = _params(pyproject, {k: v for k, v in shared.items() if OPTIONS.get(k.replace("_", "-")) not in given},
                         "tool.shapecheck", params, strict=runs, refused=refused)
        taken.update(k for k in shared if OPTIONS.get(k.replace("_", "-")) in common)
        values = {**common,
                  **_params(pyproject, own, f"tool.shapecheck.{command}", params, own_table=True)}
        node = out
        for part in click_path[:-1]:
            node = node.setdefault(part, {})
        node[click_path[-1]] = values
    for key, err in refused.items():
        if key not in taken:  # no command takes the value: a mistake, whichever command runs
            raise err
    # contract check and contract draft load ops too: the shared table's imports (and case limit) apply
    for command in ("check", "draft"):
        params = _options_of(root, ("contract", command))
        values = _params(pyproject, shared, "tool.shapecheck", params)
        out.setdefault("contract", {})[command] = {k: v for k, v in values.items() if k in ("imports", "max_cases")}
    return out


def _options_of(root: click.Group, click_path: tuple[str, ...]) -> dict[str, click.Parameter]:
    """The parameters of the command at ``click_path`` under ``root``, by name (none when it is not there)."""
    node: Any = root
    for part in click_path:
        node = node.commands.get(part) if isinstance(node, click.Group) else None
    return {p.name: p for p in node.params} if node is not None else {}


def _params(pyproject: Path, entries: dict[str, Any], where: str, params: dict[str, click.Parameter],
            own_table: bool = False, strict: bool = True,
            refused: dict[str, UserError] | None = None) -> dict[str, Any]:
    """The table's options that the command has (``params``), each value checked; with ``own_table`` (the
    command's own table) a key the command has no option for is refused, as an unknown key is. Not
    ``strict`` (a command this run does not invoke): a shared value its option refuses is left out, and noted
    in ``refused`` (``default_map`` refuses it where no command takes it)."""
    out: dict[str, Any] = {}
    seen: dict[str, str] = {}
    for key, value in entries.items():
        name = key.replace("_", "-")
        if name in seen:  # timeout-ms and timeout_ms: one would win silently
            raise UserError(f"{pyproject}: [{where}] {key_text(key)}: the same option as {key_text(seen[name])}; "
                            "give it once")
        seen[name] = key
        if name in _NOT_OPTIONS:
            home = _HOMES[name]
            if where != home:  # read there only: anywhere else it would be ignored
                raise UserError(f"{pyproject}: [{where}] {key_text(key)}: read from [{home}] only")
            continue
        if name not in OPTIONS:
            # a command's own table: the keys it takes (hunt 62: it listed seed and timeout-ms, which it refuses)
            known = sorted({n for n in OPTIONS if not own_table or OPTIONS[n] in params}
                           | {n for n in _NOT_OPTIONS if _HOMES[n] == where})
            raise UserError(f"{pyproject}: [{where}] {key_text(key)}: not an option shapecheck reads from "
                            f"{'this table' if own_table else 'a project file'} (known: {', '.join(known)})")
        param = params.get(OPTIONS[name])
        if param is None:
            if own_table:
                raise UserError(f"{pyproject}: [{where}] {key}: the command has no option --{name}")
            continue  # a shared key for the commands that have the option
        if name in _PATHS and isinstance(value, str):
            value = str(pyproject.parent / value)
        elif name in _PATH_LISTS and isinstance(value, list):
            value = [str(pyproject.parent / v) if isinstance(v, str) and (v.endswith(".py") or "/" in v) else v
                     for v in value]
        elif name == "output" and isinstance(value, list):
            value = [_output_relative(pyproject, v) for v in value]
        try:
            check_value(f"{pyproject}: [{where}] {key}", value, param)  # paths as they will be used
        except UserError as err:
            # only a choice one command lacks (audit's formats) waits for that command; a malformed value is
            # refused whichever command runs
            if strict or own_table or refused is None or not isinstance(param.type, click.Choice):
                raise
            refused.setdefault(key, err)
            continue
        out[OPTIONS[name]] = value
        FROM_FILE[name] = f"{pyproject} [{where}] {key}"
    return out


def _output_relative(pyproject: Path, spec: Any) -> Any:
    if not isinstance(spec, str) or "=" not in spec:
        return spec  # check_value refuses it
    fmt, _, file = spec.partition("=")
    return spec if file == "-" else f"{fmt}={pyproject.parent / file}"


#: what each kind of click parameter takes from TOML (a bool is not an integer): the first row that the
#: parameter's type is an instance of; every other type (a choice, a path, FORMAT=FILE) takes a string that it
#: then converts as it would from the command line
_NATIVE: tuple[tuple[type, tuple[type, ...], str], ...] = (
    (click.types.BoolParamType, (bool,), "true or false"),
    (click.types.IntParamType, (int,), "an integer"),
    (click.types.FloatParamType, (int, float), "a number"),
    (click.types.ParamType, (str,), "a string"),
)


def check_value(where: str, value: Any, param: click.Parameter) -> None:
    """A project-file value for ``param``, checked as the command line's value would be, before click sees it:
    its TOML type (from the parameter's click type; an array of them for a repeatable option), then the type's
    own conversion (a range, a choice, a ``FORMAT=FILE``). Anything else is bad input naming ``where`` (the
    file and the key)."""
    types, wanted = next((t, w) for kind, t, w in _NATIVE if isinstance(param.type, kind))
    if getattr(param, "multiple", False) or param.nargs != 1:
        if not isinstance(value, list):
            raise UserError(f"{where}: expected an array (each element {wanted}), found {_type_name(value)} "
                            f"{_short(value)}")
        items = [(f"{where}[{i}]", v) for i, v in enumerate(value)]
    else:
        items = [(where, value)]
    for at, item in items:
        if not isinstance(item, types) or (isinstance(item, bool) and bool not in types):
            raise UserError(f"{at}: expected {wanted}, found {_type_name(item)} {_short(item)}")
        if isinstance(item, str) and "\x00" in item:  # no command-line value can hold one (a path would crash)
            raise UserError(f"{at}: a string with a NUL character, {_short(item)}")
        try:
            param.type.convert(item, param, None)
        except click.BadParameter as err:
            raise UserError(f"{at}: {err.message}") from None


def _type_name(value: Any) -> str:
    names = ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"), (list, "an array"),
             (dict, "a table"))
    return next((name for t, name in names if isinstance(value, t)), f"a {type(value).__name__}")


def _short(value: Any) -> str:
    """A value for a message, cut to 60 characters (TOML's spelling of a boolean)."""
    text = ("true" if value else "false") if isinstance(value, bool) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def option_origin(name: str, flag: str) -> str:
    """Where the running command's parameter ``name`` came from, for a message: ``flag`` (the command line),
    or ``PYPROJECT: [tool.shapecheck] KEY`` when the project file gave it (click's default map), so that an
    error never names an option the user did not pass."""
    ctx = click.get_current_context(silent=True)
    source = ctx.get_parameter_source(name) if ctx is not None else None
    if source is not click.core.ParameterSource.DEFAULT_MAP:
        return flag
    key = next((k for k, v in OPTIONS.items() if v == name), name)
    return f"{find_pyproject(Path.cwd()) or 'pyproject.toml'}: [tool.shapecheck] {key}:"
