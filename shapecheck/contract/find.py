"""Where contracts are: the shipped ones (``shapecheck.contracts``), an op's contract file under a folder, the
contract files under paths; and op names in the one form contracts and reports use (``normalize_op``)."""

from __future__ import annotations

from pathlib import Path

from .spec import OP_NAME


def shipped_contracts_dir() -> Path:
    """The contracts that ship with shapecheck: the package data ``shapecheck.contracts`` (in a checkout,
    the top-level ``contracts/`` folder it is built from)."""
    from importlib.resources import files

    try:
        return Path(str(files("shapecheck.contracts")))
    except ModuleNotFoundError:  # run from a source checkout that is not installed (python -m shapecheck there)
        return Path(__file__).resolve().parent.parent.parent / "contracts"


def normalize_op(op: str) -> str:
    """``aten._x``, ``aten::_x``, ``torch.ops.aten._x.default`` -> ``aten::_x`` (overload kept if not default).
    Parsed, never walked: ``ns::name[.overload]``, each part an identifier; ValueError for anything else."""
    text = op.strip()
    if text.startswith("torch.ops."):
        text = text[len("torch.ops."):]
    if "::" not in text:
        text = text.replace(".", "::", 1)
    m = OP_NAME.fullmatch(text)
    if m is None:
        raise ValueError(op)
    ns, name, overload = m.groups()
    return f"{ns}::{name}" + (f".{overload}" if overload and overload != "default" else "")


def find_contract(op: str, search: list[Path] | None = None) -> Path | None:
    name = normalize_op(op)
    ns, _, rest = name.partition("::")
    for base in search or [shipped_contracts_dir()]:
        for cand in (base / ns / f"{rest}.toml", base / f"{ns}.{rest}.toml", base / f"{ns}::{rest}.toml"):
            try:
                if cand.is_file():
                    return cand
            except OSError:  # a name no file can have (too long): no contract by that name
                continue
    return None


def discover(paths: list[Path]) -> list[Path]:
    """Contract files under the given files or directories, sorted."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted(p.rglob("*.toml")))
        else:
            out.append(p)
    return out


def contract_search(cwd: Path | None = None) -> list[Path]:
    """Where an op's contract is looked for: the directories ``[tool.shapecheck] contracts`` of the nearest
    pyproject.toml names (a project's own contracts), then the shipped ones. The run and the result cache's key
    both find a contract through here, so they find the same file."""
    from ..config import configured_contract_paths, find_pyproject

    pyproject = find_pyproject(cwd or Path.cwd())
    return [*(configured_contract_paths(pyproject) if pyproject is not None else []), shipped_contracts_dir()]
