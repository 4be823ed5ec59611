"""The module-level constants of a ``--meta-source`` file that its kernel reads. Only the registered function and
the file's plain helpers are defined from the file (``load.source_kernel``); the rest of its module level is not
run. A constant the kernel reads (``cufft_max_ndim = 2``) is bound from the file where it is a literal, read
without running code (``ast.literal_eval``); any other binding the installed module's stands in for, and where
that is not the same statement the verdict is inconclusive (a caveat), never a pass of the installed value."""

from __future__ import annotations

import ast
import functools
import inspect
from typing import Any

from ..findings import SourceLoc

_NOT_LITERAL = object()


def bind_constants(tree: ast.Module, functions: list[ast.FunctionDef], source: str, filename: str,
                   namespace: dict[str, Any], installed: Any) -> tuple[tuple[SourceLoc, str], ...]:
    """Bind in ``namespace`` the file's literal module-level constants that ``functions`` read; the caveats
    ``(SourceLoc, why)`` of those that are not literals and differ from the installed module's (hunt 58: a file's
    ``cufft_max_ndim = 2`` was read as the installed torch's 3, and the kernel passed)."""
    read = {n.id for f in functions for n in ast.walk(f) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    caveats: dict[str, tuple[SourceLoc, str]] = {}
    for node in tree.body:
        name, value = _assigned(node)
        if name is None or name not in read or value is None:
            continue
        literal = _literal(value)
        if literal is not _NOT_LITERAL:
            namespace[name] = literal
            caveats.pop(name, None)
            continue
        text = ast.get_source_segment(source, node) or name
        if name not in namespace or _normal(text) in _installed_statements(installed).get(name, ()):
            caveats.pop(name, None)  # none stands in (a read raises NameError: inconclusive), or the same binding
            continue
        caveats[name] = (SourceLoc(filename, node.lineno, name, text.splitlines()[0]),
                         f"the file's module-level {name} is not a literal, so it is not evaluated here (that would "
                         f"run the file's code), and the installed torch's {name}, bound otherwise, stands in: the "
                         "kernel verified is not the file's, so nothing is proved about it")
    return tuple(caveats.values())


def _assigned(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return None, None


def _literal(value: ast.expr) -> Any:
    try:
        return ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


def _normal(text: str) -> str:
    return " ".join(text.split())


@functools.lru_cache(maxsize=8)
def _statements_of(module_file: str) -> dict[str, frozenset[str]]:
    try:
        with open(module_file, encoding="utf-8") as f:
            source = f.read()
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return {}
    out: dict[str, set[str]] = {}
    for node in tree.body:
        name, _ = _assigned(node)
        if name is not None:
            out.setdefault(name, set()).add(_normal(ast.get_source_segment(source, node) or ""))
    return {k: frozenset(v) for k, v in out.items()}


def _installed_statements(module: Any) -> dict[str, frozenset[str]]:
    """The installed module's module-level bindings, as source text by name."""
    try:
        file = inspect.getsourcefile(module)
    except (TypeError, OSError):
        file = None
    return _statements_of(file) if file else {}
