"""Hypothesis strategies for hostile contracts: valid base contracts (bases/) mutated the way a hostile or
careless user would (wrong types, deep nesting, huge numbers, unknown names, hostile op names, let chains,
case explosions, random bytes, truncation, duplicated keys), and expressions from the contract grammar
plus Python outside it. ``write_toml`` turns a mutated table back into TOML text (``Raw`` is written as
is: nesting or numbers that no Python value should hold)."""

from __future__ import annotations

import copy
import datetime
import json
import math
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

BASES_DIR = Path(__file__).resolve().parent / "bases"
#: a file that expression text tries to create; it must never exist
SENTINEL = Path(tempfile.gettempdir()) / "shapecheck-hostile-sentinel"


@dataclass(frozen=True)
class Base:
    op: str
    file: Path
    kernel: tuple[str, ...]  # the verify options that select the kernel
    names: tuple[str, ...]  # names its expressions may use

    @property
    def data(self) -> dict:
        return tomllib.loads(self.file.read_text())


BASES = (
    Base("hostile::rows", BASES_DIR / "rows.toml", ("--meta", f"{BASES_DIR / 'kernels.py'}:rows"),
         ("N", "D", "K", "pad", "mode", "P", "rows", "x")),
    Base("aten::mm", BASES_DIR / "mm.toml", (), ("M", "K", "N", "dtype", "self", "mat2")),
    Base("aten::cat", BASES_DIR / "cat.toml", (), ("B", "L", "D", "r", "n", "dtype", "total")),
)


@dataclass(frozen=True)
class Raw:
    """TOML text written verbatim."""

    text: str


# ---------------------------------------------------------------------------------------------------------
# Writing TOML


def _string(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F or 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(f"\\u{ord(ch) & 0xFFFF:04x}" if not 0xD800 <= ord(ch) <= 0xDFFF else "\\ufffd")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _key(k: str) -> str:
    return k if k and all(c.isascii() and (c.isalnum() or c in "_-") for c in k) else _string(k)


def toml_value(v: Any) -> str:
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(type(v))


def write_toml(doc: dict) -> str:
    """Every top-level key as ``key = inline value``: arrays of tables as arrays of inline tables."""
    return "".join(f"{_key(k)} = {toml_value(v)}\n" for k, v in doc.items())


# ---------------------------------------------------------------------------------------------------------
# Expressions

HOSTILE_PYTHON = (
    f"__import__('os').system('touch {SENTINEL}')",
    f"open('{SENTINEL}', 'w')",
    "().__class__.__bases__[0].__subclasses__()",
    "x.shape.__class__.__init__.__globals__",
    "(lambda: 1)()", "[n for n in (1, 2)]", "{1: 2}", "{1, 2}", "f'{N}'", "b'x'", "1.5", "1j", "...",
    "N ** 2", "N / 2", "N @ N", "N << 1", "N if N else N", "(n := 1)", "*N", "await N", "yield N",
    "exec('import os')", "eval('1')", "getattr(N, 'x')", "min(N)", "min(N, key=abs)", "max(*N)",
    "N.bit_length()", "x.stride", "x.shape[1:2:3]", "x.shape[N]", "x.shape['a']", "x.shape[::-1]",
    "\x00", "N\x00", "", " ", "\n", "#", "N # comment", "N; N", "import os", "lambda: 0",
    "9" * 25, "-" + "9" * 25, "0x" + "f" * 20, "1_000_000_000_000_000_000_000",
    "x.shape + 1", "(N, D) == (N, D)", "'a' + 1", "'a' < 'b'", "N // 0", "N % 0", "1 // 0",
    "x.shape[99]", "undefined_name > 0", "mode == 'boool'", "pad == 'plain'", "dtype == 'float99'",
)


def _deep(kind: str, n: int) -> str:
    return {
        "plus": " + ".join(["N"] * n),
        "times": " * ".join(["9223372036854775807"] * n),
        "not": "not " * n + "true",
        "neg": "-" * n + "N",
        "paren": "(" * n + "N" + ")" * n,
        "min": "min(" * n + "N" + ", 1)" * n,
        "and": " and ".join(["N > 0"] * n),
        "index": "x.shape" + "[0]" * n,
        "tuple": "(" + "N, " * n + ")",
    }[kind]


def grammar_expressions(names: tuple[str, ...]) -> st.SearchStrategy[str]:
    atoms = st.one_of(
        st.sampled_from(names + ("true", "false", "undefined_name")),
        st.integers(-(2**70), 2**70).map(str),
        st.sampled_from(["'plain'", "'flagged'", "'float32'", "'boool'", "''"]),
        st.integers(-4, 4).map(lambda i: f"x.shape[{i}]"),
        st.just("x.shape"),
    )

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        ops = st.sampled_from(["+", "-", "*", "//", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or"])
        return st.one_of(
            st.builds(lambda a, op, b: f"{a} {op} {b}", inner, ops, inner),
            st.builds(lambda a: f"not {a}", inner),
            st.builds(lambda a: f"-{a}", inner),
            st.builds(lambda a: f"({a})", inner),
            st.builds(lambda f, a, b: f"{f}({a}, {b})", st.sampled_from(["min", "max"]), inner, inner),
            st.builds(lambda a, b: f"({a}, {b})", inner, inner),
            st.builds(lambda a, b: f"{a} in ({b},)", inner, inner),
            st.builds(lambda a, lo, hi: f"{a}[{lo}:{hi}]", inner, st.integers(-3, 3), st.integers(-3, 3)),
        )

    return st.recursive(atoms, extend, max_leaves=12)


def expressions(names: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.one_of(
        grammar_expressions(names),
        st.builds(_deep, st.sampled_from(["plus", "times", "not", "neg", "paren", "min", "and", "index", "tuple"]),
                  st.one_of(st.integers(1, 80), st.integers(1, 4000))),
        st.sampled_from(HOSTILE_PYTHON),
        st.text(max_size=40),
    )


# ---------------------------------------------------------------------------------------------------------
# Values and mutations

HOSTILE_OPS = ("aten::__init__.__globals__", "aten::mm.__class__", "__builtins__::eval", "os::system",
               "aten::mm.default.x", "torch.ops.aten.mm", "aten.mm", "aten::mm\n", "aten::\u0131mm", "",
               "aten::", "::mm", "aten::mm.", "aten::no_such_op_xyz", "aten::mm.nope", "aten::__dict__",
               "hostile::rows", "aten::mm.out")


def huge_numbers() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 10**100, 0, -1]),
        st.integers(-(2**200), 2**200),
        st.integers(1, 6000).map(lambda n: Raw("9" * n)),
    )


def deep_values() -> st.SearchStrategy[Raw]:
    return st.builds(lambda n, kind: Raw({"[": "[" * n + "1" + "]" * n,
                                          "{": "{ a = " * n + "1" + " }" * n,
                                          "[{": "[{ a = " * n + "1" + " }]" * n}[kind]),
                     st.integers(1, 3000), st.sampled_from(["[", "{", "[{"]))


def toml_values(names: tuple[str, ...]) -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.booleans(), st.integers(-100, 100), huge_numbers(), st.floats(),
                        st.text(max_size=20), expressions(names), st.dates(), st.sampled_from(HOSTILE_OPS))
    nested = st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=8)
    return st.one_of(nested, deep_values())


def _places(doc: Any, at: tuple = ()) -> list[tuple]:
    """Every path (keys and indexes) to a value in a table, the table itself excluded."""
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in items:
        out.append(at + (k,))
        out.extend(_places(v, at + (k,)))
    return out


def _get(doc: Any, path: tuple) -> Any:
    for k in path:
        doc = doc[k]
    return doc


@st.composite
def mutated(draw, base: Base) -> dict:
    """The base's table, changed one to three times."""
    doc = copy.deepcopy(base.data)
    for _ in range(draw(st.integers(1, 3))):
        places = _places(doc)
        kind = draw(st.sampled_from(["value", "expression", "delete", "unknown key", "op", "lets", "choices",
                                     "duplicate", "rename", "range", "range"]))
        path = draw(st.sampled_from(places)) if places else ("op",)
        parent, last = _get(doc, path[:-1]), path[-1]
        if kind == "value":
            parent[last] = draw(toml_values(base.names))
        elif kind == "expression" or (kind == "rename" and not isinstance(parent, dict)):
            parent[last] = draw(expressions(base.names))
        elif kind == "delete" and isinstance(parent, dict):
            del parent[last]
        elif kind == "unknown key" and isinstance(parent, dict):
            parent[draw(st.text(max_size=12))] = draw(toml_values(base.names))
        elif kind == "op":
            doc["op"] = draw(st.sampled_from(HOSTILE_OPS))
        elif kind == "lets":
            n = draw(st.integers(1, 60))
            seed = draw(st.sampled_from(["N", "99999999999 * 99999999999", "N * N + 1", "true"]))
            doc["let"] = {"l0": seed, **{f"l{i}": f"l{i - 1} * l{i - 1}" for i in range(1, n)}}
            doc["domain"] = {"requires": [f"l{n - 1} > 0"]}
        elif kind == "choices":
            k, m = draw(st.integers(1, 12)), draw(st.integers(1, 1000))
            doc["choices"] = {f"c{i}": list(range(m)) for i in range(k)}
        elif kind == "range" and isinstance(doc.get("dims"), dict) and doc["dims"]:  # legal, and extreme
            bounds = sorted(draw(st.lists(st.one_of(st.integers(0, 64), st.sampled_from([2**31 - 1, 2**62, 2**63 - 1])),
                                          min_size=2, max_size=2)))
            doc["dims"][draw(st.sampled_from(sorted(doc["dims"])))] = {"min": bounds[0], "max": bounds[1]}
        elif kind == "duplicate" and isinstance(parent, list):
            parent.extend([copy.deepcopy(parent[last])] * draw(st.integers(1, 50)))
        elif kind == "rename" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["scal", "name", "mat2", "self", "x", "__init__", "1x", "a b"]))] = \
                parent.pop(last)
    return doc


@st.composite
def hostile_files(draw) -> tuple[Base, bytes]:
    """A base and the bytes of a mutated contract file: mutated tables, then sometimes the text mutated too."""
    base = draw(st.sampled_from(BASES))
    return base, _edited(draw, write_toml(draw(mutated(base))).encode("utf-8"))


# ---------------------------------------------------------------------------------------------------------
# Project files and baselines (issue 20): mutated [tool.shapecheck] tables, mutated gate and audit baselines

#: a valid [tool.shapecheck] table that sets an option of each kind (an integer, a flag, a choice, a repeated
#: string, FORMAT=FILE, a path) in the shared table and in each command's own
CONFIG = {"jobs": 1, "timeout-ms": 2000, "max-traces": 8, "cache": False, "max-cases": 64, "format": "text",
          "quiet": True, "imports": [], "contracts": ["shape_contracts"],
          "verify": {"context": 1, "era": ["default"], "output": ["json=verify.json"]},
          "gate": {"baseline": "b.json", "output": ["sarif=gate.sarif"]},
          "fuzz": {"seed": 1, "examples": 2, "max-side": 8}, "ref": {"examples": 2}}
#: what a path in a project file may hold (the keys that name files, and the FORMAT=FILE of output)
HOSTILE_PATHS = ("", "\x00", "a\x00b", "/dev/zero", "/", "..", ".", "-", "=", "json=", "json=\x00", "json=-",
                 "sarif=/dev/null", "~/x", "a" * 5000, "\udcff", "x.py:f", "mylib", "nonexistent.py")
CONFIG_KEYS = ("jobs", "timeout-ms", "timeout_ms", "max-traces", "cache", "max-cases", "format", "output", "quiet",
               "context", "baseline", "meta-source", "era", "examples", "seed", "max-elements", "max-side",
               "imports", "contracts", "verify", "gate", "fuzz", "ref", "audit", "tool", "shapecheck")


@st.composite
def hostile_configs(draw) -> bytes:
    """The bytes of a pyproject.toml: the valid table changed one to three times (a value of any kind, a known
    key added or set anywhere, an unknown key, a key deleted, a command table made a value, ``tool`` or
    ``tool.shapecheck`` made a value), then sometimes the text changed too."""
    table = copy.deepcopy(CONFIG)
    doc: dict = {"project": {"name": "p"}, "tool": {"shapecheck": table}}
    for _ in range(draw(st.integers(1, 3))):
        tool = doc.setdefault("tool", {})
        places = [p for p in _places(tool) if p[0] == "shapecheck"] if isinstance(tool, dict) else []
        kind = draw(st.sampled_from(["value", "value", "key", "path", "unknown key", "delete", "table", "top"]))
        path = ("tool",) + draw(st.sampled_from(places)) if places else ("tool",)
        parent, last = _get(doc, path[:-1]), path[-1]
        node = _get(doc, path)
        target = node if isinstance(node, dict) else parent
        if kind == "value" or not isinstance(target, dict):
            parent[last] = draw(toml_values(("a", "b")))
        elif kind == "key":
            target[draw(st.sampled_from(CONFIG_KEYS))] = draw(toml_values(("a", "b")))
        elif kind == "path":  # a key that names files, with a hostile path (or a list of them)
            path_text = st.sampled_from(HOSTILE_PATHS)
            target[draw(st.sampled_from(["baseline", "meta-source", "output", "imports", "contracts", "format"]))] = \
                draw(st.one_of(path_text, st.lists(path_text, max_size=3)))
        elif kind == "unknown key":
            target[draw(st.text(max_size=12))] = draw(toml_values(("a", "b")))
        elif kind == "delete":
            del parent[last]
        elif kind == "table" and isinstance(tool, dict) and isinstance(tool.get("shapecheck"), dict):
            tool["shapecheck"][draw(st.sampled_from(["verify", "gate", "fuzz", "ref"]))] = draw(toml_values(("a", "b")))
        elif kind == "top":
            doc[draw(st.sampled_from(["tool", "project"]))] = draw(toml_values(("a", "b")))
    return _edited(draw, write_toml(doc).encode("utf-8"))


def _edited(draw, text: bytes) -> bytes:
    """``text``, mostly as is, else truncated, with bytes inserted, with a line doubled, or random bytes."""
    edit = draw(st.sampled_from(["none"] * 8 + ["truncate", "bytes", "line", "random"]))
    if edit == "truncate":
        return text[:draw(st.integers(0, len(text)))]
    if edit == "bytes":
        at = draw(st.integers(0, len(text)))
        return text[:at] + draw(st.binary(min_size=1, max_size=16)) + text[at:]
    if edit == "line":  # a duplicated line: a duplicated key, or a second [table]
        lines = text.splitlines(keepends=True)
        i = draw(st.integers(0, max(0, len(lines) - 1)))
        return b"".join(lines[:i + 1] + lines[i:i + 1] + lines[i + 1:])
    if edit == "random":
        return draw(st.binary(max_size=200))
    return text


#: a valid baseline of each command (``baseline.write``, ``audit_report.apply_baseline``)
BASELINES = {
    "gate": {"tool": "shapecheck", "version": 1, "findings": [
        {"fingerprint": "0123456789abcdef0123", "rule": "SC001", "op": "aten::mm", "case": "dtype=float32",
         "expr": "M <= 8", "file": "torch/_meta_registrations.py", "line": 2518}]},
    "audit": {"tool": "shapecheck audit", "version": 1, "findings": [
        {"fingerprint": "0123456789abcdef0123", "rule": "SC001", "op": "aten::mm.default", "expr": "self_0 <= 8"}]},
}


def json_values() -> st.SearchStrategy[Any]:
    """JSON values: every kind, numbers JSON can write that Python cannot hold (thousands of digits,
    Infinity, NaN), and nesting Python's parser gives up on."""
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-100, 100), huge_numbers(), st.floats(),
                        st.text(max_size=20), st.sampled_from(["SC001", "SC999", "aten::mm", "", "0" * 20]))
    nested = st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=8)
    deep = st.builds(lambda n, kind: Raw(kind * n + "1" + {"[": "]", '{"a":': "}"}[kind] * n),
                     st.integers(1, 100_000), st.sampled_from(["[", '{"a":']))
    return st.one_of(nested, deep)


def json_text(v: Any) -> str:
    """JSON text for ``v`` (``Raw`` written as is; Infinity and NaN as Python's json writes them)."""
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, list):
        return "[" + ", ".join(json_text(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {json_text(x)}" for k, x in v.items()) + "}"
    return json.dumps(v)


@st.composite
def hostile_baselines(draw, command: str) -> bytes:
    """The bytes of a baseline of ``command`` (gate or audit): the valid one changed one to three times (a
    value, a key added or deleted, the findings duplicated many times), then sometimes the text too."""
    doc = copy.deepcopy(BASELINES[command])
    for _ in range(draw(st.integers(1, 3))):
        places = _places(doc)
        if not places:  # every key deleted: a value where the version was
            doc["version"] = draw(json_values())
            continue
        kind = draw(st.sampled_from(["value", "value", "key", "delete", "duplicate", "top"]))
        path = draw(st.sampled_from(places))
        parent, last = _get(doc, path[:-1]), path[-1]
        if kind == "value":
            parent[last] = draw(json_values())
        elif kind == "key" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["fingerprint", "version", "tool", "findings", "rule", ""]))] = \
                draw(json_values())
        elif kind == "delete" and isinstance(parent, dict):
            del parent[last]
        elif kind == "duplicate" and isinstance(doc, dict):  # many findings (a copy each: never a product)
            doc["findings"] = [copy.deepcopy(BASELINES[command]["findings"][0]) for _ in range(draw(st.integers(2, 5000)))]
        elif kind == "top":
            doc = draw(json_values())
            if not isinstance(doc, dict):
                break
    return _edited(draw, json_text(doc).encode("utf-8"))
