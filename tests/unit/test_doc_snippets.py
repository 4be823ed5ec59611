"""Every TOML snippet in README.md and docs/*.md loads as the docs say it does.

A snippet is one of:

- a whole contract (it has ``schema``): ``load_contract`` reads it as it stands, every case bound;
- a project file's ``[tool.shapecheck]`` table: read as shapecheck reads a ``pyproject.toml``;
- a fragment, marked ``<!-- fragment: BASE -->`` or ``<!-- fragment: BASE at KEY -->`` right above its fence:
  merged into the contract BASE (a path from the repository root) and the result loaded. Tables update
  BASE's tables; an ``[[args]]`` entry replaces BASE's argument of its name (else it is added), a ``[[paths]]``
  entry the path of its id and era, ``[[rejects]]`` the reject of its id; ``[[suppress]]`` tables are added.
  ``at let``, ``at paths[ID]`` or ``at paths[ID@ERA]`` merges the fragment's keys into that table instead;
- deliberately partial, marked ``<!-- partial -->`` (a shape of syntax, not a contract): it must be TOML.

An unmarked fragment fails the test: either it loads somewhere, or the doc says it is partial. The summary test
says how many snippets of each kind were loaded.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from shapecheck.contract.load import load_contract
from tests.acceptance.test_docs import DOCS, MARKER, fenced_blocks
from tests.conftest import ROOT

FRAGMENT = re.compile(r"^fragment:\s*(\S+)(?:\s+at\s+(\S+))?$")


@dataclass(frozen=True)
class Snippet:
    where: str
    text: str
    markers: tuple[str, ...]

    @property
    def kind(self) -> str:
        if any(m == "partial" for m in self.markers):
            return "partial"
        if any(FRAGMENT.match(m) for m in self.markers):
            return "fragment"
        data = tomllib.loads(self.text)
        if "schema" in data:
            return "contract"
        if "tool" in data:
            return "config"
        return "unmarked fragment"


def snippets() -> list[Snippet]:
    out = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").splitlines()
        for b in fenced_blocks(path):
            if b.lang != "toml":
                continue
            markers, j = [], b.line - 2
            while j >= 0 and MARKER.match(lines[j]):
                markers.append(MARKER.match(lines[j]).group(1))
                j -= 1
            out.append(Snippet(b.where, "\n".join(b.body) + "\n", tuple(markers)))
    return out


SNIPPETS = snippets()


def _merge(base: dict, frag: dict) -> dict:
    """``frag`` merged into ``base`` (see the module docstring)."""
    keyed = {"args": ("name",), "paths": ("id", "era"), "rejects": ("id",)}
    for key, value in frag.items():
        if key in keyed and isinstance(value, list):
            items = base.setdefault(key, [])
            for entry in value:
                ident = tuple(entry.get(k, "default" if k == "era" else None) for k in keyed[key])
                at = next((i for i, e in enumerate(items)
                           if tuple(e.get(k, "default" if k == "era" else None) for k in keyed[key]) == ident), None)
                if at is None:
                    items.append(entry)
                else:
                    items[at] = entry
        elif isinstance(value, list) and key == "suppress":
            base.setdefault(key, []).extend(value)
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key].update(value)
        else:
            base[key] = value
    return base


def _target(data: dict, at: str) -> dict:
    """The table of ``data`` that ``at`` names: ``let``, ``paths[ID]`` or ``paths[ID@ERA]``."""
    m = re.fullmatch(r"paths\[([\w.-]+)(?:@([\w.-]+))?\]", at)
    if m is None:
        return data.setdefault(at, {})
    pid, era = m.group(1), m.group(2)
    found = [p for p in data["paths"] if p["id"] == pid and (era is None or p.get("era", "default") == era)]
    assert len(found) == 1, f"{at} names {len(found)} paths"
    return found[0]


def _toml(value, indent: str = "") -> str:
    """A dict as TOML text (tables, arrays of tables, inline values): enough for contracts."""
    simple = {k: v for k, v in value.items() if not isinstance(v, dict)
              and not (isinstance(v, list) and v and all(isinstance(x, dict) for x in v) and k in
                       ("args", "paths", "rejects", "suppress"))}
    lines = [f"{_key(k)} = {_inline(v)}" for k, v in simple.items()]
    for k, v in value.items():
        if isinstance(v, dict):
            lines.append(f"[{_key(k)}]")
            lines += [f"{_key(kk)} = {_inline(vv)}" for kk, vv in v.items()]
        elif k not in simple:
            for entry in v:
                lines.append(f"[[{k}]]")
                lines += [f"{_key(kk)} = {_inline(vv)}" for kk, vv in entry.items()]
    return "\n".join(lines) + "\n"


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else f'"{k}"'


def _inline(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_inline(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_inline(x)}" for k, x in v.items()) + " }"
    return repr(v) if not hasattr(v, "isoformat") else v.isoformat()


def load_snippet(s: Snippet, tmp_path: Path) -> str:
    """Load one snippet as its kind says; its kind."""
    kind = s.kind
    if kind == "contract":
        (tmp_path / "c.toml").write_text(s.text)
        load_contract(tmp_path / "c.toml")
    elif kind == "config":
        from shapecheck.config import default_map

        (tmp_path / "pyproject.toml").write_text(s.text)
        default_map(tmp_path)
    elif kind == "fragment":
        base_name, at = next(FRAGMENT.match(m).groups() for m in s.markers if FRAGMENT.match(m))
        base = tomllib.loads((ROOT / base_name).read_text(encoding="utf-8"))
        frag = tomllib.loads(s.text)
        _merge(_target(base, at) if at else base, frag)
        (tmp_path / "c.toml").write_text(_toml(base))
        load_contract(tmp_path / "c.toml")
    elif kind == "partial":
        tomllib.loads(s.text)
    else:
        pytest.fail(f"{s.where}: a TOML fragment that is not marked: mark it <!-- fragment: BASE --> (it is loaded "
                    "merged into BASE) or <!-- partial -->")
    return kind


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.where for s in SNIPPETS])
def test_a_toml_snippet_of_the_docs_loads(snippet, tmp_path):
    load_snippet(snippet, tmp_path)


@pytest.mark.slow
def test_every_toml_snippet_is_counted(tmp_path, capsys):
    kinds: dict[str, int] = {}
    for i, s in enumerate(SNIPPETS):
        folder = tmp_path / str(i)
        folder.mkdir()
        kind = load_snippet(s, folder)
        kinds[kind] = kinds.get(kind, 0) + 1
    loaded = kinds.get("contract", 0) + kinds.get("fragment", 0) + kinds.get("config", 0)
    with capsys.disabled():
        print(f"\n{len(SNIPPETS)} TOML snippets in the docs: {kinds.get('contract', 0)} whole contracts and "
              f"{kinds.get('fragment', 0)} fragments merged into a base contract loaded, {kinds.get('config', 0)} "
              f"project tables read, {kinds.get('partial', 0)} marked partial (TOML only)")
    assert loaded >= len(SNIPPETS) - kinds.get("partial", 0) and kinds.get("contract", 0) >= 3
    # partial snippets are the exception: most of the docs' TOML loads
    assert kinds.get("partial", 0) * 4 <= len(SNIPPETS), kinds
