"""The package's dependency direction, pinned: no import cycles (lazy imports included), torch internals only
in the compatibility module, torch and z3 loaded only where they are needed, and the public API."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

PKG = ROOT / "shapecheck"
MODULES = {".".join(p.relative_to(PKG).with_suffix("").parts).removesuffix(".__init__"): p
           for p in PKG.rglob("*.py")}
#: the modules that may import torch or z3 when they load (everything else defers it to a function body)
#: the compatibility layer: the only modules that touch torch internals (``_compat`` and its parts, which build
#: on it and nothing above it)
COMPAT = {"_torch.core", "_torch.static", "_torch.audit", "_torch.schema"}
LOADS_TORCH = set(COMPAT)
LOADS_Z3 = {"logic.solver"}
#: what the compatibility module may build on: nothing above it
COMPAT_MAY_IMPORT = {"errors", "logic.expr", "findings", "rules"}


def imports(path: Path, name: str = "") -> tuple[set[str], set[str], set[str]]:
    """(package modules imported when the module loads, package modules imported inside functions, external
    top-level names imported when it loads). ``if TYPE_CHECKING:`` blocks do not count."""
    eager, lazy, external = set(), set(), set()

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and getattr(child.test, "id", "") == "TYPE_CHECKING":
                continue
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.ImportFrom) and child.level >= 1:
                package = name.split(".")[:-1] if path.name != "__init__.py" else name.split(".")
                base = package[:len(package) - child.level + 1] if child.level > 1 else package
                where = base + (child.module.split(".") if child.module else [])
                names = [".".join(where + [a.name]) if ".".join(where + [a.name]) in MODULES
                         else ".".join(where) for a in child.names]
                (lazy if in_function else eager).update(n for n in names if n in MODULES)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and not in_function:
                external.add(child.module)
            elif isinstance(child, ast.Import) and not in_function:
                external.update(a.name for a in child.names)
            visit(child, nested)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return eager, lazy, external


GRAPH = {name: imports(path, name) for name, path in MODULES.items()}


def test_no_import_cycles_lazy_imports_included():
    edges = {m: (eager | lazy) - {m} for m, (eager, lazy, _) in GRAPH.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == 1:
                pytest.fail("import cycle: " + " -> ".join(stack[stack.index(n):] + [n]))
            if n not in state:
                walk(n)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            walk(m)


def test_torch_internals_only_in_the_compat_module():
    for name, path in MODULES.items():
        if name in COMPAT:
            continue
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            mods = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for mod in mods:
                private = mod.startswith(("torch._", "torch.fx.experimental", "torch.utils._"))
                assert not private, f"shapecheck/{name}.py imports {mod}: torch internals go through _compat"


def test_torch_and_z3_load_only_where_allowed():
    for name, (_, _, external) in GRAPH.items():
        roots = {e.split(".")[0] for e in external if e}
        if name not in LOADS_TORCH:
            assert "torch" not in roots, f"shapecheck/{name}.py imports torch when it loads"
        if name not in LOADS_Z3:
            assert "z3" not in roots, f"shapecheck/{name}.py imports z3 when it loads"


@pytest.mark.parametrize("name", sorted(COMPAT))
def test_compat_imports_nothing_above_it(name):
    eager, lazy, _ = GRAPH[name]
    assert (eager | lazy) <= COMPAT_MAY_IMPORT | COMPAT, (eager | lazy) - COMPAT_MAY_IMPORT - COMPAT


@pytest.mark.parametrize("code", [
    "import shapecheck.render.ci, shapecheck.rules, shapecheck.findings, shapecheck.result.report",
    "from shapecheck.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
    "from shapecheck.cli.main import main\ntry:\n    main(['gate', '--help'])\nexcept SystemExit:\n    pass",
])
def test_renderers_and_help_load_neither_torch_nor_z3(code):
    probe = code + "\nimport sys\nprint(sorted(m for m in ('torch', 'z3', 'sympy') if m in sys.modules))"
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "[]", res.stdout


PUBLIC = ["Contract", "ContractError", "Function", "Installed", "KernelSource", "MetaSource", "Options", "RULES",
          "Report", "Rule", "ShapecheckError", "SourceLoc", "UserError", "Verdict", "Violation", "__version__",
          "explore_op", "fuzz_given", "fuzz_test", "load_contract", "verify_op"]


def test_the_public_api_is_pinned_and_each_name_is_the_real_object():
    import importlib

    import shapecheck

    assert shapecheck.__all__ == sorted(PUBLIC)
    homes = {"verify_op": "prove.verify", "explore_op": "prove.verify", "Options": "prove.verify",
             "fuzz_test": "pytest_entry", "fuzz_given": "pytest_entry", "load_contract": "contract.load",
             "Contract": "contract.model", "Report": "result.report",
             "Verdict": "findings", "Violation": "findings", "SourceLoc": "findings", "RULES": "rules",
             "Rule": "rules", "ContractError": "errors", "ShapecheckError": "errors", "UserError": "errors",
             "Function": "kernel.sources", "Installed": "kernel.sources", "MetaSource": "kernel.sources",
             "KernelSource": "kernel.sources"}
    for name, module in homes.items():
        assert getattr(shapecheck, name) is getattr(importlib.import_module(f"shapecheck.{module}"), name), name
    with pytest.raises(AttributeError):
        shapecheck.no_such_name  # noqa: B018


def test_import_shapecheck_loads_neither_torch_nor_z3():
    res = subprocess.run([sys.executable, "-c", "import sys, shapecheck; shapecheck.Verdict; "
                          "print(sorted(m for m in ('torch', 'z3') if m in sys.modules))"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.stdout.strip() == "[]", res.stderr[-2000:]


#: the one exemption: the expression parser reads best as one class
LONG_ALLOWED = {("logic.expr", "_Parser")}


def test_modules_and_their_functions_stay_small():
    """Every module under 600 lines; no function or class over about 80 lines (85 allowed) but the parser."""
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) < 600, f"shapecheck/{name}.py has {len(text.splitlines())} lines"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and (name, node.name) not in LONG_ALLOWED:
                length = node.end_lineno - node.lineno + 1
                assert length <= 85, f"shapecheck/{name}.py: {node.name} has {length} lines"
