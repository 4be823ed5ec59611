"""What a cached result depends on, as fingerprints that can be checked without importing torch or z3.

- ``environment()``: the versions that change results (Python, torch, z3, sympy, read from the installed
  distributions' metadata) and shapecheck's own source (a digest of the package's ``.py`` files, since it
  is developed in-tree and its version number does not move with every change).
- ``kernel_dependencies(fn)``: a kernel function and what it reaches, followed by name through its code
  objects (globals, closures, attributes of the modules it names), transitively, up to a bound: each
  function or class defined in a Python file, and each module-level value it reads, as a ``Dep`` holding
  the file, the qualified name and a digest of that definition's source segment. This runs on a miss,
  when the kernel is loaded anyway.
- ``deps_hold(deps)``: whether every ``Dep`` still holds, by re-reading (and, for a file whose bytes
  changed, re-parsing with ``ast``) the files. Nothing is imported.

The standard library and shapecheck itself are not followed (the Python version and the source digest
cover them). Code torch reaches only through its dispatcher (another op's meta kernel called from this one)
is covered by the torch version, not by a ``Dep``: editing installed torch files in place without a new
version is not seen there (``--no-cache``).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import os
import sys
import types
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import limits as L

PACKAGE_DIR = Path(__file__).resolve().parent.parent
#: functions and classes followed per kernel; past it the walk stops and says so (``Walk.complete``)
MAX_DEPENDENCIES = 2000
_STDLIB = os.path.realpath(os.path.dirname(os.__file__)) + os.sep  # site-packages may lie under it
_DISTRIBUTIONS = ("torch", "z3-solver", "sympy")
WHOLE_FILE = "*"  # a Dep's qualname for a file known by all of its bytes (``loaded_files``)
PROJECT_FILE_BYTES = 256 << 20  # a project module's file (an extension module may be large)


@dataclass(frozen=True)
class Dep:
    """One definition a result depends on: ``qualname`` (``f``, ``C.m``, ``f.<locals>.g``; a module-level
    value is ``=name``) in ``file``, the ``index``-th definition of that name in the file, with the
    sha256 of its source segment (decorators included). ``line`` is its first line when reports show lines
    of that file (moving it must miss, the report would change), else None."""

    file: str
    qualname: str
    index: int
    line: int | None
    digest: str


# ---------------------------------------------------------------------------------------------------------
# The environment


def distribution_version(name: str) -> str:
    """The installed version of a distribution, as its metadata directory names it (``-`` when it is not
    installed). The first ``*.dist-info`` on ``sys.path`` wins, as for ``importlib.metadata``; reading the
    directory names is about 20 times faster than importing ``importlib.metadata``, which matters on a hit."""
    want = name.replace("-", "_").lower()
    for entry in sys.path or ["."]:
        for dist in _dist_infos(entry or "."):
            project, _, version = dist[: -len(".dist-info")].partition("-")
            if project.replace("-", "_").replace(".", "_").lower() == want and version:
                return version
    return "-"


@functools.cache
def _dist_infos(folder: str) -> tuple[str, ...]:
    try:
        return tuple(sorted(n for n in os.listdir(folder) if n.endswith(".dist-info")))
    except OSError:
        return ()


def source_digest(root: Path = PACKAGE_DIR) -> str:
    """sha256 over the ``.py`` files under ``root`` (relative names and bytes, in name order). Memoized per
    process by the files' names, sizes and modification times (a gate asks once per contract)."""
    paths = sorted(root.rglob("*.py"))
    stamp = tuple((str(p), st.st_size, st.st_mtime_ns) for p in paths for st in (p.stat(),))
    return _source_digest(root, stamp)


@functools.lru_cache(maxsize=4)
def _source_digest(root: Path, stamp: tuple[tuple[str, int, int], ...]) -> str:
    h = hashlib.sha256()
    for name, _, _ in stamp:
        path = Path(name)
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def environment() -> dict[str, str]:
    """The key parts every cached result shares."""
    from .._version import __version__

    out = {"python": sys.version, "shapecheck": __version__, "shapecheck_source": source_digest(PACKAGE_DIR),
           "distributions": installed_distributions()}
    out.update({d: distribution_version(d) for d in _DISTRIBUTIONS})
    return out


def installed_distributions() -> str:
    """sha256 of the names and versions of every distribution installed on ``sys.path`` (their ``*.dist-info``
    folders): code in ``site-packages`` is known by its version, so installing, upgrading or removing any
    package changes every key."""
    names = sorted({dist for entry in sys.path or ["."] for dist in _dist_infos(entry or ".")})
    return hashlib.sha256("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def file_digest(path: str | Path, limit: int = L.SOURCE_BYTES) -> str:
    """sha256 of a regular file's bytes, or ``-`` when it cannot be read, is not a regular file or is over
    ``limit`` (a missing file is a change, not an error; a FIFO or a device is never read)."""
    try:
        return hashlib.sha256(L.read_bounded(path, limit)).hexdigest()
    except (OSError, L.TooLarge):
        return "-"


# ---------------------------------------------------------------------------------------------------------
# Definitions in a file, found with ast


@functools.lru_cache(maxsize=64)
def definitions(path: str, digest: str) -> dict[str, list[tuple[int, str, frozenset[int]]]]:
    """qualname -> [(first line, sha256 of the source segment, the lines a code object of it may start at:
    its decorators' and its ``def``'s)] per definition, in file order, for a file
    whose bytes have ``digest`` (the key of the memo). Module-level assignments are ``=name``. A file that does
    not parse defines nothing (each Dep on it then fails)."""
    try:
        text = L.read_bounded(path, L.SOURCE_BYTES).decode("utf-8", errors="surrogateescape")
        tree = ast.parse(text)
    except (OSError, L.TooLarge, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    lines = text.splitlines(keepends=True)
    out: dict[str, list[tuple[int, str, frozenset[int]]]] = {}

    def add(name: str, node: ast.AST) -> None:
        anchors = frozenset([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        start = min(anchors)
        segment = "".join(lines[start - 1:node.end_lineno]).encode("utf-8", "surrogateescape")
        out.setdefault(name, []).append((start, hashlib.sha256(segment).hexdigest(), anchors))

    def walk(body: list[ast.stmt], prefix: str, top: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                add(prefix + node.name, node)
                inner = prefix + node.name + ("." if isinstance(node, ast.ClassDef) else ".<locals>.")
                walk(node.body, inner, False)
            elif top and isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            add("=" + n.id, node)
            elif top and isinstance(node, (ast.Import, ast.ImportFrom)):  # `from operator import mul as scale`
                for alias in node.names:
                    if alias.name != "*":
                        add("=" + (alias.asname or alias.name.split(".")[0]), node)
            elif isinstance(node, (ast.If, ast.Try, ast.With)):  # definitions under `if TYPE_CHECKING:` etc.
                for field in ("body", "orelse", "finalbody"):
                    walk(getattr(node, field, []) or [], prefix, top)
                for h in getattr(node, "handlers", []):
                    walk(h.body, prefix, top)

    walk(tree.body, "", True)
    return out


def deps_hold(deps: tuple[Dep, ...], files: dict[str, str]) -> bool:
    """Whether every dependency still holds. ``files`` maps each file to the digest of its bytes when the deps
    were taken: an unchanged file needs no parsing; a changed one is parsed and each definition compared (a
    whole-file dependency holds only while the file's bytes are unchanged). A file that cannot be read now
    holds nothing."""
    current = {f: file_digest(f) for f in files}
    for dep in deps:
        now = current.get(dep.file) or file_digest(dep.file)
        if now == "-":
            return False
        if dep.qualname == WHOLE_FILE:
            if now != dep.digest:
                return False
            continue
        if now == files.get(dep.file):
            continue
        found = definitions(dep.file, now).get(dep.qualname, [])
        if dep.index >= len(found):
            return False
        line, digest, _ = found[dep.index]
        if digest != dep.digest or (dep.line is not None and line != dep.line):
            return False
    return True


def unlocated(deps: tuple[Dep, ...], shown_files: set[str]) -> tuple[Dep, ...]:
    """The deps with their line kept only for the files a report shows lines of (``shown_files``): moving a
    helper in another file changes no report."""
    return tuple(d if d.file in shown_files else replace(d, line=None) for d in deps)


def loaded_files() -> tuple[Dep, ...]:
    """A whole-file ``Dep`` for the source of every module now loaded that is the project's own code: neither
    the standard library, nor installed in ``site-packages`` (known by its distribution's version, part of
    ``environment``), nor shapecheck. Taken after the kernel ran, it covers what the static walk cannot follow:
    a helper reached through a module-level table, ``getattr`` on a module, ``importlib.import_module``, an
    import inside the kernel's body, an ``lru_cache``-wrapped helper or a callable object."""
    out: dict[str, Dep] = {}
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        real = _project_file(file) if isinstance(file, str) else None
        if real is not None and real not in out:
            out[real] = Dep(real, WHOLE_FILE, 0, None, file_digest(real, PROJECT_FILE_BYTES))
    return tuple(out[f] for f in sorted(out))


@functools.lru_cache(maxsize=8192)
def _project_file(filename: str) -> str | None:
    """The real path of a module's file (source, bytecode or extension) when it is the project's own code (once per
    file name of a run: ``loaded_files`` asks it of every loaded module after each kernel run, 7% of an audit's
    CPU before)."""
    if not filename or filename.startswith("<"):
        return None
    real = os.path.realpath(filename)
    if f"{os.sep}site-packages{os.sep}" in real or f"{os.sep}dist-packages{os.sep}" in real \
            or real.startswith(_STDLIB) or real.startswith(str(PACKAGE_DIR) + os.sep) or not os.path.isfile(real):
        return None
    return real


# ---------------------------------------------------------------------------------------------------------
# The walk from a kernel function (runs on a miss; needs no torch, only the objects)


@dataclass
class Walk:
    deps: dict[tuple[str, str, int], Dep]
    complete: bool = True
    digests: dict[str, str] = field(default_factory=dict)  # per file, hashed once per walk

    def locate(self, file: str, qualname: str, first_line: int | None) -> Dep | None:
        if file not in self.digests:
            self.digests[file] = file_digest(file)
        return _locate(file, self.digests[file], qualname, first_line)


def kernel_dependencies(fn: Any, *, limit: int = MAX_DEPENDENCIES) -> tuple[tuple[Dep, ...], bool]:
    """(deps, complete): the definitions ``fn`` reaches by name, transitively (see the module docstring), each
    with its line. ``complete`` is False when the walk stopped at ``limit``: the result then depends on code
    no Dep covers, and a caller must not cache it."""
    walk = Walk({})
    seen: set[int] = set()
    todo: list[Any] = [fn]
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if len(walk.deps) >= limit:
            walk.complete = False
            break
        todo.extend(_visit(obj, walk))
    return tuple(sorted(walk.deps.values(), key=lambda d: (d.file, d.qualname, d.index))), walk.complete


def _visit(obj: Any, walk: Walk) -> list[Any]:
    """Record ``obj`` when it is a definition in a Python file; return what it reaches."""
    obj = _unwrap(obj)
    if isinstance(obj, types.FunctionType):
        file = _followed_file(obj.__code__.co_filename)
        if file is None:  # not followed (torch's or shapecheck's own wrapper): the function it wraps is
            wrapped = getattr(obj, "__wrapped__", None)
            return [wrapped] if wrapped is not None else []
        # the code's own name: functools.wraps copies the wrapped function's __qualname__ onto a wrapper
        qualname = getattr(obj.__code__, "co_qualname", obj.__qualname__)
        dep = walk.locate(file, qualname, obj.__code__.co_firstlineno)
        if dep is None:  # its definition is not in the file (any more): nothing to compare it with
            walk.complete = False
            return []
        walk.deps[(dep.file, dep.qualname, dep.index)] = dep
        return _reached(obj, walk)
    if isinstance(obj, type):
        try:
            file = _followed_file(inspect.getsourcefile(obj) or "")
        except TypeError:  # a builtin class
            return []
        if file is not None:
            dep = walk.locate(file, obj.__qualname__, None)
            if dep is not None:
                walk.deps[(dep.file, dep.qualname, dep.index)] = dep
    return []


def _unwrap(obj: Any) -> Any:
    for _ in range(16):
        if isinstance(obj, types.MethodType):
            obj = obj.__func__
        elif isinstance(obj, functools.partial):
            obj = obj.func
        elif isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        else:
            break
    return obj


def _reached(fn: types.FunctionType, walk: Walk) -> list[Any]:
    """What a function names: its globals (and the attributes of the modules among them that its code
    names), its closure cells, its defaults. Module-level values that are not definitions become ``=name``
    deps of the module's file."""
    names = _code_names(fn.__code__)
    g = fn.__globals__
    out: list[Any] = [c.cell_contents for c in fn.__closure__ or () if _full(c)]
    if hasattr(fn, "__wrapped__"):  # a decorator's wrapper (recorded) and the function it wraps
        out.append(fn.__wrapped__)
    out += list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
    # the module's file, and the function's own where it differs: a --meta-source function runs in a copy of
    # torch's meta-registration namespace, with its file's module-level statements run there
    binding = {f for f in (_followed_file(g.get("__file__") or ""), _followed_file(fn.__code__.co_filename)) if f}
    for name in names:
        if name not in g:
            continue
        value = g[name]
        for module_file in sorted(binding):
            # the statement that binds the name in the module (an import, an assignment; a def is its own
            # Dep): another object bound there reaches other code, which today's object's deps do not cover
            dep = walk.locate(module_file, "=" + name, None)
            if dep is not None:
                walk.deps[(dep.file, dep.qualname, dep.index)] = dep
        if isinstance(value, types.ModuleType):
            out += _module_attributes(value, names, depth=3)
        elif isinstance(value, (types.FunctionType, type, functools.partial, types.MethodType)):
            out.append(value)
    return out


def _module_attributes(module: types.ModuleType, names: frozenset[str], depth: int) -> list[Any]:
    """The module's attributes that the code names (``torch._refs.foo`` names ``_refs`` and ``foo``)."""
    out: list[Any] = []
    members = getattr(module, "__dict__", {})
    for name in names:
        value = members.get(name)
        if isinstance(value, types.ModuleType):
            if depth > 1:
                out += _module_attributes(value, names, depth - 1)
        elif isinstance(value, (types.FunctionType, type, functools.partial)):
            out.append(value)
    return out


def _code_names(code: types.CodeType) -> frozenset[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return frozenset(names)


def _full(cell: Any) -> bool:
    try:
        _ = cell.cell_contents
    except ValueError:
        return False
    return True


def _followed_file(filename: str) -> str | None:
    """The real path of a Python source file the walk follows: not the standard library, not shapecheck
    (both covered by ``environment``), not code without a file."""
    if not filename or filename.startswith("<") or not filename.endswith(".py"):
        return None
    real = os.path.realpath(filename)
    third_party = f"{os.sep}site-packages{os.sep}" in real or f"{os.sep}dist-packages{os.sep}" in real
    if (real.startswith(_STDLIB) and not third_party) or real.startswith(str(PACKAGE_DIR) + os.sep) or not os.path.isfile(real):
        return None
    return real


def _locate(file: str, digest: str, qualname: str, first_line: int | None) -> Dep | None:
    """The Dep of ``qualname`` in ``file``: the definition a code object starting at ``first_line`` comes from
    (a function compiled without some of its decorators, as ``--meta-source`` defines it, starts at a later
    decorator or at its ``def``), else the last one of that name (a later module-level definition wins)."""
    found = definitions(file, digest).get(qualname, [])
    if not found:
        return None
    index = len(found) - 1
    if first_line is not None:
        matches = [i for i, (_, _, anchors) in enumerate(found) if first_line in anchors]
        if not matches:
            return None
        index = matches[0]
    line, digest, _ = found[index]
    return Dep(file, qualname, index, line, digest)
