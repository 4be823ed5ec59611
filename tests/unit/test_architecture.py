"""The package's layout, pinned: stage folders in one layer order (``bench/structure.py``'s ``LAYERS``), every
import pointing down it and none in a cycle, counting imports inside functions, under ``TYPE_CHECKING`` and of a
package's ``__init__``; no private name crossing a folder; torch internals only in ``_torch/``; torch and z3
loaded only where they are needed; the public API; the size limits.

The import walk is ``bench/structure.py``'s (which prints the same figures); the first tests below show it sees
each kind of edge on a package made for the purpose."""

import ast
import functools
import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT

_spec = importlib.util.spec_from_file_location("_bench_structure", ROOT / "bench" / "structure.py")
S = sys.modules["_bench_structure"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(S)


@functools.cache
def modules() -> dict:
    """The package's modules as the walk reads them: made once, by the first test that asks (not at collection,
    which every pytest-xdist worker pays)."""
    return S.walk(ROOT)


#: the modules that may import torch or z3 when they load (everything else defers it to a function body): those
#: of the ``_torch`` folder, and
LOADS_Z3 = {"logic.solver"}
#: torch internals: only the compatibility layer names them
TORCH_INTERNALS = ("torch._", "torch.fx.experimental", "torch.utils._")


# ---------------------------------------------------------------------------------------------------------
# The walk sees every kind of edge


def _package(tmp_path: Path, files: dict[str, str]) -> dict:
    for rel, text in {"__init__.py": "", **files}.items():
        path = tmp_path / "shapecheck" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for folder in {Path(rel).parts[0] for rel in files if "/" in rel}:
        init = tmp_path / "shapecheck" / folder / "__init__.py"
        if not init.exists():
            init.write_text("", encoding="utf-8")
    return S.walk(tmp_path)


def test_the_walk_counts_lazy_type_checking_and_package_init_imports(tmp_path):
    modules = _package(tmp_path, {
        "_version.py": "",
        "logic/expr.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..contract.model import C\n",
        "contract/model.py": "from ..logic import expr as E\n\ndef f():\n    from ..cli import run\n",
        "cache/key.py": "def g():\n    from .. import __version__\n",
        "cli/__init__.py": "from .main import run as run\n",
        "cli/main.py": "import shapecheck.logic.expr\n",
    })
    edges = {name: {k: set(m.edges[k]) for k in S.KINDS} for name, m in modules.items()}
    assert edges["logic.expr"]["type_checking"] == {"contract.model"}
    assert edges["contract.model"] == {"eager": {"logic.expr"}, "lazy": {"cli"}, "type_checking": set()}
    assert edges["cache.key"]["lazy"] == {"__init__"}
    assert edges["cli"]["eager"] == {"cli.main"} and edges["cli.main"]["eager"] == {"logic.expr"}
    assert S.cycles(S.graph(modules)) == [["cli", "cli.main", "contract.model", "logic.expr"]]
    assert S.cycles(S.graph(modules, ("eager", "lazy"))) == []  # the TYPE_CHECKING import closes it
    assert {(m, t) for m, _, t, _ in S.upward(modules)} == {("logic.expr", "contract.model"),
                                                              ("contract.model", "cli"), ("cache.key", "__init__")}


def test_the_walk_sees_private_names_crossing_a_folder(tmp_path):
    modules = _package(tmp_path, {
        "logic/expr.py": "def _children(n):\n    return ()\n\ndef _own():\n    pass\n",
        "logic/simplify.py": "from .expr import _own\n",
        "contract/model.py": "from ..logic import expr as E\nfrom ..logic.expr import _own\n\n"
                             "def f(n):\n    return E._children(n)\n",
    })
    assert sorted((m, t, n) for m, _, t, n in (p for p in S.figures(tmp_path)["private"])) == [
        ("contract.model", "logic.expr", "_children"), ("contract.model", "logic.expr", "_own")]
    assert not modules["logic.simplify"].private  # within a folder it is the folder's own business


# ---------------------------------------------------------------------------------------------------------
# The package


def test_every_module_lies_in_a_layer():
    unplaced = sorted(name for name, m in modules().items() if S.layer_of(m.box) is None)
    assert not unplaced, f"modules in no layer of bench/structure.py's LAYERS: {unplaced}"


def test_no_import_points_up_the_layers():
    found = [f"shapecheck/{m.replace('.', '/')}.py:{line} imports {t} ({kind})" for m, kind, t, line in S.upward(modules())]
    assert not found, "imports of a later layer:\n" + "\n".join(found)


def test_no_import_cycle_lazy_and_type_checking_imports_included():
    assert S.cycles(S.graph(modules())) == []


@pytest.mark.slow
def test_no_private_name_crosses_a_folder():
    found = [f"{m}:{line} uses {t}.{n}" for m, line, t, n in S.figures(ROOT)["private"]]
    assert not found, "private names used from another folder (make them public or move them):\n" + "\n".join(found)


@pytest.mark.slow
def test_torch_internals_only_in_the_torch_folder():
    for name, m in modules().items():
        if name.split(".")[0] == "_torch":
            continue
        for node in ast.walk(ast.parse(m.path.read_text(encoding="utf-8"))):
            mods = [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for mod in mods:
                assert not mod.startswith(TORCH_INTERNALS), f"{m.path} imports {mod}: torch internals go through _torch/"


def test_torch_and_z3_load_only_where_allowed():
    for name, m in modules().items():
        roots = {e.split(".")[0] for e in m.external}
        if name.split(".")[0] != "_torch":
            assert "torch" not in roots, f"{m.path} imports torch when it loads"
        if name not in LOADS_Z3:
            assert "z3" not in roots, f"{m.path} imports z3 when it loads"


@pytest.mark.parametrize("code", [
    "import shapecheck.render.ci, shapecheck.render.text, shapecheck.render.runtime, shapecheck.render.audit",
    "import shapecheck.cli",
    "from shapecheck.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
    "from shapecheck.cli import main\ntry:\n    main(['gate', '--help'])\nexcept SystemExit:\n    pass",
])
def test_renderers_and_help_load_neither_torch_nor_z3(code):
    probe = code + "\nimport sys\nprint(sorted(m for m in ('torch', 'z3', 'sympy') if m in sys.modules))"
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "[]", res.stdout


def test_every_folder_ships_in_the_wheel():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {"shapecheck." + str(p.parent.relative_to(ROOT / "shapecheck")).replace("/", ".")
               for p in (ROOT / "shapecheck").rglob("__init__.py") if p.parent != ROOT / "shapecheck"}
    assert folders <= listed, f"subpackages missing from pyproject.toml's packages: {sorted(folders - listed)}"
    assert {"shapecheck", "shapecheck.contracts", "metal_ref"} <= listed


PUBLIC = ["Contract", "ContractError", "Finding", "Function", "Installed", "KernelSource", "MetaSource", "Options",
          "PathStatus", "RULES", "Report", "Rule", "RuleCode", "ShapecheckError", "SourceLoc", "UserError", "Verdict", "Violation", "__version__",
          "explore_op", "fuzz_given", "fuzz_test", "load_contract", "verify_op"]


def test_the_public_api_is_pinned_and_each_name_is_the_real_object():
    import importlib

    import shapecheck

    assert shapecheck.__all__ == sorted(PUBLIC)
    homes = {"verify_op": "prove.verify", "explore_op": "prove.verify", "Options": "prove.verify",
             "fuzz_test": "pytest_entry", "fuzz_given": "pytest_entry", "load_contract": "contract.load",
             "Contract": "contract.model", "Report": "result.report", "Verdict": "findings", "Violation": "findings",
             "Finding": "findings", "PathStatus": "findings", "RuleCode": "rules",
             "SourceLoc": "findings", "RULES": "rules", "Rule": "rules", "ContractError": "errors",
             "ShapecheckError": "errors", "UserError": "errors", "Function": "kernel.sources",
             "Installed": "kernel.sources", "MetaSource": "kernel.sources", "KernelSource": "kernel.sources",
             "__version__": "_version"}
    for name, module in homes.items():
        assert getattr(shapecheck, name) is getattr(importlib.import_module(f"shapecheck.{module}"), name), name
    with pytest.raises(AttributeError):
        shapecheck.no_such_name  # noqa: B018


def test_import_shapecheck_loads_neither_torch_nor_z3():
    res = subprocess.run([sys.executable, "-c", "import sys, shapecheck; shapecheck.Verdict; "
                          "print(sorted(m for m in ('torch', 'z3') if m in sys.modules))"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.stdout.strip() == "[]", res.stderr[-2000:]


@pytest.mark.slow
def test_modules_and_their_functions_stay_small():
    """Every module under 600 lines; no function over 80 lines (``def`` to its last line, nested ones too), but
    the expression parser's (``S.LONG_ALLOWED``). Classes may be long."""
    big = [f"{m.path}: {m.lines} lines" for m in modules().values() if m.lines >= S.MAX_MODULE]
    assert not big, big
    long = [f"shapecheck/{m.replace('.', '/')}.py:{line} {fn}: {n} lines" for m, fn, line, n in S.long_functions(modules())]
    assert not long, long


# ---------------------------------------------------------------------------------------------------------
# Rule codes: named through the registry (rules.RuleCode), never spelled as strings elsewhere


RULE_CODE = re.compile(r"\bSC\d{3}\b")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of a module, class or function (and attribute docstrings): prose that
    may name a rule."""
    out: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            out.add(id(body[0].value))
        for a, b in zip(body, body[1:]):
            if isinstance(a, (ast.Assign, ast.AnnAssign)) and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant):
                out.add(id(b.value))
    return out


def rule_code_literals(text: str) -> list[tuple[int, str]]:
    """(line, text) of each string constant (f-string parts included, docstrings not) that spells a rule code."""
    tree = ast.parse(text)
    prose = _docstrings(tree)
    return sorted((n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant)
                  and isinstance(n.value, str) and id(n) not in prose and RULE_CODE.search(n.value))


def test_the_rule_code_scan_sees_literals_and_f_strings_but_not_docstrings():
    text = ('"""SC001 in a module docstring."""\n'
            'def f(v):\n    """SC002 in prose."""\n    return v.code == "SC005" or f"SC008 {v.expr}"\n'
            'X = 1\n"""SC003: an attribute docstring."""\n')
    assert [line for line, _ in rule_code_literals(text)] == [4, 4]


@pytest.mark.slow
def test_rule_codes_are_spelled_only_in_the_registry():
    """Code names a rule by ``rules.RuleCode``; a string "SCxxx" anywhere else in the package (but prose) is a
    rule the registry does not know about."""
    found = [f"{m.path.relative_to(ROOT)}:{line}: {text[:60]!r}" for name, m in modules().items() if name != "rules"
             for line, text in rule_code_literals(m.path.read_text(encoding="utf-8"))]
    assert not found, "rule codes spelled outside shapecheck/rules.py (use rules.RuleCode):\n" + "\n".join(found)


# ---------------------------------------------------------------------------------------------------------
# docs/architecture.md: the map a newcomer reads


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def test_architecture_md_names_only_files_that_exist():
    """Every ``shapecheck/...`` path it names exists, and every bare ``x.py`` in a layer-map row (``folder/`` in
    the first column) exists in that folder."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    named = set(re.findall(r"shapecheck/[\w/]+(?:\.py)?/?", text))
    assert named, "docs/architecture.md names no file"
    missing = sorted(p for p in named if not (ROOT / p.rstrip("/")).exists())
    for row in re.findall(r"^\| `(\w+)/` \| (.*) \|$", text, flags=re.M):
        folder, what = row
        missing += [f"shapecheck/{folder}/{f}" for f in re.findall(r"`(\w+\.py)`", what)
                    if not (ROOT / "shapecheck" / folder / f).exists()]
    for other in re.findall(r"`((?:prove|contract|kernel|trace|result|render|runtime|audit|ci|cli)/\w+\.py)`", text):
        if not (ROOT / "shapecheck" / other).exists():
            missing.append(f"shapecheck/{other}")
    top = re.search(r"^\| (`errors\.py`.*?) \|", text, flags=re.M).group(1)
    missing += [f for f in re.findall(r"`(\w+\.py)`", top) if not (ROOT / "shapecheck" / f).exists()]
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"


def test_architecture_md_maps_every_folder_in_layer_order():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)/` \|", text, flags=re.M)
    folders = [boxes[0] for name, boxes in S.LAYERS if name not in ("foundation", "entry")]
    assert rows == folders, "docs/architecture.md's layer map differs from bench/structure.py's LAYERS"
    on_disk = sorted(p.parent.name for p in (ROOT / "shapecheck").glob("*/__init__.py"))
    assert sorted(rows) == on_disk
