"""The package's structure, measured from its imports: modules, cycles, upward edges, import levels, sizes and
private names crossing folders. ``tests/unit/test_architecture.py`` pins the same walk.

    .venv/bin/python bench/structure.py [--root CHECKOUT] [--list]

Every module of ``shapecheck/`` is read with ``ast``. An import is an edge, in one of three kinds: ``eager`` (runs
when the module loads), ``lazy`` (inside a function) and ``type_checking`` (under ``if TYPE_CHECKING:``).
Relative and absolute imports count alike, and so do imports of a package's ``__init__`` (``from . import
__version__``, ``from ..cli import run``, ``import shapecheck``). A *box* is a stage folder, or a module at the top
of the package; ``LAYERS`` orders the boxes. The figures:

- cycles: strongly connected components of the module graph over all three kinds of edge;
- upward edges: imports of a module in a later layer (any kind of edge);
- import levels: the longest chain of eager and lazy imports between boxes, plus one (the same between modules
  is printed too);
- the largest module; functions over ``MAX_FUNCTION`` lines (the expression parser excepted);
- private cross-folder imports: ``from x import _name`` where x lies in another box, and ``M._name`` on a
  module M of another box.

It runs on any checkout (the flat layout too, where every module is its own box and no layer is known).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "shapecheck"
#: the layer order: a module may import modules of its own layer or of earlier ones, never of a later one
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # codec: issue 20's typed JSON (torch-free, imports nothing of the package), arriving with the merge of main;
    # edges: the type checker's named edges (JSON, TorchObject: issue 21), imports nothing of the package
    # progress: what a supervised child is doing, told to its supervisor (trace.isolate), imports nothing
    ("foundation", ("_version", "errors", "rules", "findings", "limits", "paths", "options", "config", "codec",
                    "edges", "progress")),
    ("logic", ("logic",)), ("contract", ("contract",)), ("_torch", ("_torch",)), ("kernel", ("kernel",)),
    ("trace", ("trace",)), ("result", ("result",)), ("cache", ("cache",)), ("prove", ("prove",)),
    ("search", ("search",)), ("runtime", ("runtime",)), ("audit", ("audit",)), ("ci", ("ci",)),
    ("render", ("render",)), ("cli", ("cli",)), ("entry", ("pytest_entry", "__init__", "__main__")),
]
MAX_MODULE = 600  # lines: a module has fewer
MAX_FUNCTION = 80  # lines from ``def`` to the last line of the body
#: (module, class) whose functions may be longer: the expression parser reads best as one recursive descent
LONG_ALLOWED = {("logic.expr", "_Parser")}
KINDS = ("eager", "lazy", "type_checking")


@dataclass
class Module:
    name: str  # dotted, relative to the package; "__init__" for the package itself, "cli" for cli/__init__.py
    path: Path
    is_package: bool
    edges: dict[str, dict[str, int]] = field(default_factory=lambda: {k: {} for k in KINDS})  # kind -> target -> line
    external: dict[str, int] = field(default_factory=dict)  # top-level names imported when it loads -> line
    private: list[tuple[int, str, str]] = field(default_factory=list)  # (line, module, name) across boxes
    lines: int = 0

    @property
    def box(self) -> str:
        return self.name.split(".")[0]


def discover(root: Path) -> dict[str, Module]:
    pkg = root / PACKAGE
    out = {}
    for path in sorted(pkg.rglob("*.py")):
        parts = list(path.relative_to(pkg).with_suffix("").parts)
        if "contracts" in parts[:1]:
            continue
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1]) if is_package and len(parts) > 1 else ".".join(parts)
        out[name] = Module(name, path, is_package)
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return getattr(test, "id", "") == "TYPE_CHECKING" or getattr(test, "attr", "") == "TYPE_CHECKING"


def _resolve(mod: Module, modules: dict[str, Module], level: int, module: str | None, names: Iterable[str]
             ) -> list[tuple[str, str | None]]:
    """(internal module imported, the name imported from it or None) for one ``from ... import``."""
    if level:
        parts = mod.name.split(".") if mod.is_package and mod.name != "__init__" else mod.name.split(".")[:-1]
        if mod.name == "__init__":
            parts = []
        base = parts[:len(parts) - level + 1] if level > 1 else parts
        where = base + (module.split(".") if module else [])
    else:
        if not module or module.split(".")[0] != PACKAGE:
            return []
        where = module.split(".")[1:]
    out = []
    for n in names:
        sub = ".".join([*where, n])
        if n != "*" and sub in modules:
            out.append((sub, None))
        else:
            out.append((".".join(where) or "__init__", n))
    return [(m, n) for m, n in out if m in modules]


def read(mod: Module, modules: dict[str, Module]) -> None:
    text = mod.path.read_text(encoding="utf-8")
    mod.lines = len(text.splitlines())
    tree = ast.parse(text)
    aliases: dict[str, str] = {}  # a name bound to an internal module of another box -> that module

    def add(kind: str, target: str, line: int) -> None:
        if target != mod.name:
            mod.edges[kind].setdefault(target, line)

    def visit(node: ast.AST, kind: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for b in child.body:
                    visit_one(b, "type_checking")
                for b in child.orelse:
                    visit_one(b, kind)
                continue
            visit_one(child, kind)

    def visit_one(child: ast.AST, kind: str) -> None:
        if isinstance(child, ast.ImportFrom):
            for target, name in _resolve(mod, modules, child.level, child.module, [a.name for a in child.names]):
                add(kind, target, child.lineno)
                if name and name.startswith("_") and not name.startswith("__") \
                        and modules[target].box != mod.box:
                    mod.private.append((child.lineno, target, name))
            for a in child.names:
                resolved = _resolve(mod, modules, child.level, child.module, [a.name])
                if resolved and resolved[0][1] is None and modules[resolved[0][0]].box != mod.box:
                    aliases[a.asname or a.name] = resolved[0][0]
            if child.level == 0 and kind == "eager" and child.module:
                mod.external.setdefault(child.module, child.lineno)
        elif isinstance(child, ast.Import):
            for a in child.names:
                parts = a.name.split(".")
                if parts[0] == PACKAGE:
                    internal = ".".join(parts[1:]) or "__init__"
                    if internal in modules:
                        add(kind, internal, child.lineno)
                elif kind == "eager":
                    mod.external.setdefault(a.name, child.lineno)
        elif isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name) \
                and child.value.id in aliases and child.attr.startswith("_") and not child.attr.startswith("__"):
            mod.private.append((child.lineno, aliases[child.value.id], child.attr))
        inner = "lazy" if kind == "eager" and isinstance(
            child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else kind
        visit(child, inner)

    visit(tree, "eager")


def walk(root: Path) -> dict[str, Module]:
    modules = discover(root)
    for mod in modules.values():
        read(mod, modules)
    return modules


# ---------------------------------------------------------------------------------------------------------
# Figures


def layer_of(box: str) -> int | None:
    for i, (_, boxes) in enumerate(LAYERS):
        if box in boxes:
            return i
    return None


def graph(modules: dict[str, Module], kinds: Iterable[str] = KINDS) -> dict[str, set[str]]:
    return {m.name: {t for k in kinds for t in m.edges[k]} for m in modules.values()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            strong(v)
    return out


def upward(modules: dict[str, Module]) -> list[tuple[str, str, str, int]]:
    """(module, kind, target, line) for each import of a module in a later layer."""
    out = []
    for m in modules.values():
        mine = layer_of(m.box)
        for kind in KINDS:
            for target, line in m.edges[kind].items():
                theirs = layer_of(modules[target].box)
                if mine is not None and theirs is not None and theirs > mine:
                    out.append((m.name, kind, target, line))
    return sorted(out)


def levels(g: dict[str, set[str]]) -> dict[str, int]:
    """Each node's level: 0 when it imports nothing, else one more than the highest level it imports (a cycle
    counts as one node)."""
    memo: dict[str, int] = {}
    active: set[str] = set()

    def level(v: str) -> int:
        if v in memo:
            return memo[v]
        active.add(v)
        below = [level(w) for w in g.get(v, ()) if w not in active]
        active.discard(v)
        memo[v] = 1 + max(below) if below else 0
        return memo[v]

    for v in g:
        level(v)
    return memo


def box_graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    g: dict[str, set[str]] = {m.box: set() for m in modules.values()}
    for m in modules.values():
        for kind in ("eager", "lazy"):
            g[m.box] |= {modules[t].box for t in m.edges[kind] if modules[t].box != m.box}
    return g


def long_functions(modules: dict[str, Module]) -> list[tuple[str, str, int, int]]:
    """(module, function, line, length) of each function longer than MAX_FUNCTION lines (``def`` to its last
    line), nested ones too; the functions of a class in LONG_ALLOWED excepted."""
    out = []

    def visit(node: ast.AST, module: str, classes: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            inner = classes + (child.name,) if isinstance(child, ast.ClassDef) else classes
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and not any((module, c) in LONG_ALLOWED for c in classes):
                length = child.end_lineno - child.lineno + 1
                if length > MAX_FUNCTION:
                    out.append((module, ".".join([*classes, child.name]), child.lineno, length))
            visit(child, module, inner)

    for m in modules.values():
        visit(ast.parse(m.path.read_text(encoding="utf-8")), m.name, ())
    return sorted(out)


def figures(root: Path) -> dict:
    modules = walk(root)
    full = graph(modules)
    mod_levels = levels(graph(modules, ("eager", "lazy")))
    boxes = levels(box_graph(modules))
    largest = max(modules.values(), key=lambda m: m.lines)
    return {"modules": len(modules), "boxes": len({m.box for m in modules.values()}),
            "edges": {k: sum(len(m.edges[k]) for m in modules.values()) for k in KINDS},
            "cycles": cycles(full), "upward": upward(modules),
            "levels": 1 + max(boxes.values()), "module_levels": 1 + max(mod_levels.values()),
            "largest": (largest.name, largest.lines),
            "over_600": sorted((m.name, m.lines) for m in modules.values() if m.lines >= MAX_MODULE),
            "long_functions": long_functions(modules),
            "private": sorted((m.name, line, t, n) for m in modules.values() for line, t, n in m.private),
            "box_levels": boxes, "folders": sorted({m.box for m in modules.values() if "." in m.name or m.is_package})}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument("--list", action="store_true", help="also list every cycle, upward edge, long function and "
                                                        "private import, and each box's level")
    args = ap.parse_args()
    f = figures(Path(args.root))
    layered = any(m.count(".") for m in f["box_levels"]) or any(
        layer_of(b) is not None and b not in LAYERS[0][1] + LAYERS[-1][1] and b in f["folders"] for b in f["box_levels"])
    print(f"modules:                         {f['modules']} in {f['boxes']} boxes "
          f"(edges: {', '.join(f'{k} {v}' for k, v in f['edges'].items())})")
    print(f"cycles (eager+lazy+TYPE_CHECKING): {len(f['cycles'])}")
    print(f"upward edges:                    {len(f['upward']) if layered else 'n/a (no stage folders)'}")
    print(f"import levels (boxes):           {f['levels']} (between modules: {f['module_levels']})")
    print(f"largest module:                  {f['largest'][0]} ({f['largest'][1]} lines); "
          f"{len(f['over_600'])} of {MAX_MODULE} lines or more")
    print(f"functions over {MAX_FUNCTION} lines:           {len(f['long_functions'])} (the parser excepted)")
    print(f"private cross-package imports:   {len(f['private'])}")
    if args.list:
        for c in f["cycles"]:
            print("  cycle:", " <-> ".join(c))
        for m, kind, t, line in f["upward"] if layered else []:
            print(f"  upward: {m} -> {t} ({kind}, line {line})")
        for m, fn, line, n in f["long_functions"]:
            print(f"  long: {m}.{fn} (line {line}): {n} lines")
        for m, line, t, n in f["private"]:
            print(f"  private: {m}:{line} uses {t}.{n}")
        by_level: dict[int, list[str]] = {}
        for b, lv in f["box_levels"].items():
            by_level.setdefault(lv, []).append(b)
        for lv in sorted(by_level):
            print(f"  level {lv:2d}: {' '.join(sorted(by_level[lv]))}")


if __name__ == "__main__":
    main()
