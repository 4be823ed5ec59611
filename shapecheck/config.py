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
Torch-free; read once per run, before the command parses its options.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from .errors import UserError

#: command tables and the click path of each command
COMMANDS = {"verify": ("verify", "op"), "gate": ("gate",), "fuzz": ("fuzz", "op"), "ref": ("ref", "check"),
            "audit": ("audit",)}
#: options a project file may set: file key (dashes) -> click parameter name
OPTIONS = {"imports": "imports", "jobs": "jobs", "timeout-ms": "timeout_ms", "max-traces": "max_traces", "format": "fmt",
           "output": "outputs", "quiet": "quiet", "context": "context", "baseline": "baseline",
           "meta-source": "meta_source", "era": "eras", "examples": "examples", "seed": "seed",
           "max-elements": "max_elements", "max-side": "max_side", "max-cases": "max_cases",
           "cache": "cache", "samples": "samples", "device": "device", "variants": "variants"}
_PATHS = {"baseline", "meta-source"}
_PATH_LISTS = {"imports"}  # entries that name a file are relative to the pyproject; module names stay
_NOT_OPTIONS = {"contracts", "untraced"}  # read by the gate itself; [tool.shapecheck.audit.untraced] by audit


def find_pyproject(start: Path) -> Path | None:
    """The ``pyproject.toml`` in ``start`` or its nearest parent."""
    for d in (start, *start.parents):
        cand = d / "pyproject.toml"
        if cand.is_file():
            return cand
    return None


def table(pyproject: Path) -> dict[str, Any]:
    """The file's ``[tool.shapecheck]`` table (empty when it has none)."""
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError, RecursionError) as err:
        raise UserError(f"{pyproject}: cannot read it as TOML ({err})") from None
    found = data.get("tool", {}).get("shapecheck", {})
    if not isinstance(found, dict):
        raise UserError(f"{pyproject}: [tool.shapecheck]: expected a table, found {type(found).__name__}")
    return found


def configured_contract_paths(pyproject: Path) -> list[Path]:
    """``[tool.shapecheck] contracts = [...]``, relative to the pyproject file."""
    entries = table(pyproject).get("contracts", [])
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise UserError(f"{pyproject}: [tool.shapecheck] contracts: expected a list of paths, found {entries!r}")
    return [pyproject.parent / e for e in entries]


def audit_untraced(cwd: Path | None = None) -> dict[str, str]:
    """``[tool.shapecheck.audit.untraced]``: op name -> why the audit may leave it untraced (a reason each)."""
    pyproject = find_pyproject(cwd or Path.cwd())
    if pyproject is None:
        return {}
    own = table(pyproject).get("audit", {})
    found = own.get("untraced", {}) if isinstance(own, dict) else {}
    if not isinstance(found, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                              for k, v in found.items()):
        raise UserError(f"{pyproject}: [tool.shapecheck.audit.untraced]: expected op = \"reason\" entries, each "
                        "with a reason")
    return dict(found)


def default_map(cwd: Path | None = None) -> dict[str, Any]:
    """click's ``default_map`` for the whole command tree, from the nearest ``[tool.shapecheck]``."""
    pyproject = find_pyproject(cwd or Path.cwd())
    if pyproject is None:
        return {}
    found = table(pyproject)
    shared = {k: v for k, v in found.items() if k not in COMMANDS}
    out: dict[str, Any] = {}
    for command, click_path in COMMANDS.items():
        own = found.get(command, {})
        if not isinstance(own, dict):
            raise UserError(f"{pyproject}: [tool.shapecheck.{command}]: expected a table")
        values = {**_params(pyproject, shared, "tool.shapecheck"), **_params(pyproject, own, f"tool.shapecheck.{command}")}
        node = out
        for part in click_path[:-1]:
            node = node.setdefault(part, {})
        node[click_path[-1]] = values
    # contract check and contract draft load ops too: the shared table's imports (and case limit) apply
    loads = {k: v for k, v in _params(pyproject, shared, "tool.shapecheck").items() if k in ("imports", "max_cases")}
    out["contract"] = {"check": dict(loads), "draft": {k: v for k, v in loads.items() if k == "imports"}}
    return out


def _params(pyproject: Path, entries: dict[str, Any], where: str) -> dict[str, Any]:
    out = {}
    for key, value in entries.items():
        name = key.replace("_", "-")
        if name in _NOT_OPTIONS:
            continue
        if name not in OPTIONS:
            raise UserError(f"{pyproject}: [{where}] {key}: not an option shapecheck reads from a project file "
                            f"(known: contracts, {', '.join(sorted(OPTIONS))})")
        if isinstance(value, dict):
            raise UserError(f"{pyproject}: [{where}] {key}: expected a value, found a table")
        if name in _PATHS and isinstance(value, str):
            value = str(pyproject.parent / value)
        elif name in _PATH_LISTS and isinstance(value, list):
            value = [str(pyproject.parent / v) if isinstance(v, str) and (v.endswith(".py") or "/" in v) else v
                     for v in value]
        elif name == "output" and isinstance(value, list):
            value = [_output_relative(pyproject, v) for v in value]
        out[OPTIONS[name]] = value
    return out


def _output_relative(pyproject: Path, spec: Any) -> Any:
    if not isinstance(spec, str) or "=" not in spec:
        return spec  # click reports the bad value, naming --output
    fmt, _, file = spec.partition("=")
    return spec if file == "-" else f"{fmt}={pyproject.parent / file}"
