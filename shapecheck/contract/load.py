"""Loading a contract: a file -> TOML -> the validated fields of a ``Contract`` -> the ``Contract``, every case
bound once (``load_contract``).

Every error is a ``ContractError`` naming the file and the TOML key. Each key's type is checked before the
key is used, with the expected type in the message. The limits of ``limits`` hold before anything is bound:
the file's size, TOML nesting and integers, each expression's length and nesting, the number of
expressions, let chains, and the number of cases (the product of the choices) with the work of binding them.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import TypedDict

from .. import limits as L
from ..edges import JSON
from ..errors import ContractError
from ..logic import expr as E
from . import dtypes
from . import spec as S
from .layouts import KEYS as LAYOUT_KEYS
from .layouts import load_layout
from .lines import table_lines
from .model import Contract
from .outputs import output_leaf
from .reader import _IDENT, Reader
from .schema import check_divisions, check_sizes
from .spec import short
from .suppress_table import load_suppressions

_PATH_ID = re.compile(r"[a-z0-9][a-z0-9_.-]*")
_ERA = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
TOP_KEYS = {"schema", "op", "doc", "dims", "choices", "domain", "let", "args", "paths", "meta", "suppress",
            "rejects"}
PATH_KEYS = {"id", "era", "when", "outputs", "runtime_outputs", "source", "doc"}


def read_contract(path: Path, max_cases: int) -> Contract:
    """The ``contract.model.Contract`` of a contract file, its fields validated, within the limits (at most
    ``max_cases`` cases), no case bound yet. Raises ContractError naming the file and key."""
    text = read_text(path)
    return build(Reader(str(path), parse_toml(str(path), text), max_cases, table_lines(text)))


def load_contract(path: str | Path, *, max_cases: int | None = None) -> Contract:
    """Read and validate a contract file, binding every case once (type errors surface here, with their key).
    Raises ContractError naming the file and key. ``max_cases``: the case limit (default: ``--max-cases``,
    else ``limits.DEFAULT_MAX_CASES``)."""
    limit = L.max_cases() if max_cases is None else max_cases
    with L.case_limit(limit):
        contract = read_contract(Path(path), limit)
        if not any(True for _ in contract.cases()):
            raise ContractError(f"{path}: [choices]", "every case is excluded: the contract checks nothing")
        check_sizes(contract)
        check_divisions(contract)
        contract.excluded_reject_cases()  # bound now: their errors are load errors too
    return contract


# ---------------------------------------------------------------------------------------------------------
# The file and its TOML


def read_toml(path: Path) -> dict[str, JSON]:
    """The TOML table of a contract file, within the size, nesting and integer limits."""
    return parse_toml(str(path), read_text(path))


def read_text(path: Path) -> str:
    """A contract file's text, within the size limit."""
    where = str(path)
    try:
        raw = L.read_bounded(path, L.CONTRACT_BYTES)
    except OSError as err:
        raise ContractError(where, f"cannot read the file ({err.strerror or err})") from None
    except L.TooLarge as err:
        raise ContractError(where, f"not a contract: the file is {err}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ContractError(where, f"not UTF-8 text (byte {err.start})") from None
    return text


def parse_toml(where: str, text: str) -> dict[str, JSON]:
    """The TOML table of a contract file's text, within the nesting and integer limits."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ContractError(where, f"not valid TOML: {err}") from None
    except RecursionError:
        raise ContractError(where, f"line {_deep_line(text)}: arrays or inline tables nested deeper than "
                                   f"{L.TOML_DEPTH} levels") from None
    except ValueError:  # tomllib converts integers with int(), which refuses more than 4300 digits
        match = re.search(r"\d{4300,}", text)
        line = f"line {text.count(chr(10), 0, match.start()) + 1}: " if match else ""
        raise ContractError(where, f"{line}an integer of thousands of digits; integers must lie within int64 "
                                   f"({L.INT64_MIN} to {L.INT64_MAX})") from None
    check_toml(where, data)
    return data


def _deep_line(text: str) -> int:
    """The line where arrays and inline tables first nest deeper than ``TOML_DEPTH`` (strings and comments
    skipped; for a message only)."""
    depth, line, quote = 0, 1, ""
    for i, ch in enumerate(text):
        if ch == "\n":
            line, quote = line + 1, ""
        elif quote:
            quote = "" if ch == quote and not (quote == '"' and text[i - 1] == "\\") else quote
        elif ch in "\"'#":
            quote = "\n" if ch == "#" else ch
        elif ch in "[{":
            depth += 1
            if depth > L.TOML_DEPTH:
                return line
        elif ch in "]}":
            depth -= 1
    return line


def check_toml(where: str, data: dict[str, JSON]) -> None:
    """Nesting within ``TOML_DEPTH`` and every integer within int64, walked without recursion."""
    stack: list[tuple[JSON, str, int]] = [(data, "", 0)]
    while stack:
        value, key, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > L.TOML_DEPTH:
                raise ContractError(f"{where}: [{key}]", f"nested deeper than {L.TOML_DEPTH} levels of tables "
                                                         "and arrays")
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for k, v in reversed(list(items)):
                sub = f"{key}[{k}]" if isinstance(k, int) else (f"{key}.{L.key_text(k)}" if key else L.key_text(k))
                stack.append((v, sub, depth + 1))
        elif isinstance(value, int) and not isinstance(value, bool) and not L.INT64_MIN <= value <= L.INT64_MAX:
            raise ContractError(f"{where}: [{key}]", f"{L.int_text(value)} is outside int64 ({L.INT64_MIN} to "
                                                     f"{L.INT64_MAX})")


# ---------------------------------------------------------------------------------------------------------
# The tables


def build(r: Reader) -> Contract:
    d = r.table(r.data, "", TOP_KEYS, {"schema", "op", "dims", "args", "paths"})
    if r.want(d["schema"], "schema", int) != S.SCHEMA:
        raise r.err("schema", f"unsupported schema {short(d['schema'])}; this shapecheck reads schema = {S.SCHEMA}")
    op = r.want(d["op"], "op", str)
    if not S.OP_NAME.fullmatch(op):
        raise r.err("op", f"unknown op {short(op)}: expected ns::name or ns::name.overload, each part an "
                          "identifier (e.g. 'aten::_x')")
    doc = r.want(d.get("doc", ""), "doc", str)
    dims = load_dims(r, d["dims"])
    choices = load_choices(r, d.get("choices", {}))
    check_case_count(r, 0)
    dom = r.table(d.get("domain", {}), "domain", {"requires", "exclude"})
    lets = load_lets(r, d.get("let", {}))
    args = load_args(r, d["args"])
    requires = tuple(r.expr_list(dom.get("requires", []), "domain.requires"))
    exclude = tuple(r.expr_list(dom.get("exclude", []), "domain.exclude"))
    for key, node in exclude:
        bad = E.free_names(node) - set(r.choices)
        if bad:
            raise r.err(key, f"exclude may only use choices; found {sorted(bad)}")
    paths = load_paths(r, d["paths"])
    meta = r.table(d.get("meta", {}), "meta", {"guard_free"})
    guard_free = r.want(meta.get("guard_free", True), "meta.guard_free", bool)
    sup = load_suppressions(r, d.get("suppress", []))
    path_ids = {p.id for p in paths}
    for s in sup:  # a path no finding can name would suppress nothing, then read as a stale suppression for ever
        if s.path is not None and s.path.partition("@")[0] not in path_ids:
            raise r.err(f"suppress[{s.index}].path", f"no path {short(s.path)}; the contract's paths: "
                                                     f"{', '.join(sorted(path_ids))}")
    from .rejects import load_rejects

    rejects = load_rejects(r, d.get("rejects", []))
    check_case_count(r, r.expressions)
    return Contract(file=r.where, op=op, dims=dims, choices=choices, requires=requires, exclude=exclude, lets=lets,
                    args=args, paths=paths, guard_free=guard_free, suppressions=sup, doc=doc, rejects=rejects)


def load_dims(r: Reader, table: JSON) -> tuple[S.Dim, ...]:
    r.want(table, "dims", dict)
    if not table:
        raise r.err("dims", "expected a non-empty table of dims")
    if len(table) > L.DIMS:
        raise r.err("dims", f"{len(table)} dims, over the limit of {L.DIMS}")
    dims = []
    for name, spec in table.items():
        key = f"dims.{L.key_text(name)}"
        r.name(name, key, "dim")
        if isinstance(spec, int) and not isinstance(spec, bool):
            spec = {"min": spec, "max": spec, "dynamic": False}
        s = r.table(spec, key, {"min", "max", "dynamic", "doc"})
        lo, hi = s.get("min", 1), s.get("max", S.INT32_MAX)
        for k, v in (("min", lo), ("max", hi)):
            if r.want(v, f"{key}.{k}", int) < 0:
                raise r.err(f"{key}.{k}", f"expected a non-negative integer, found {short(v)}")
        if lo > hi:
            raise r.err(key, f"empty range: min = {lo} > max = {hi}")
        dyn = r.want(s.get("dynamic", True), f"{key}.dynamic", bool)
        r.names[name] = "dim"
        dims.append(S.Dim(name, lo, hi, dyn, r.want(s.get("doc", ""), f"{key}.doc", str)))
    return tuple(dims)


def load_choices(r: Reader, table: JSON) -> tuple[tuple[str, tuple[S.ChoiceValue, ...]], ...]:
    r.want(table, "choices", dict)
    for name, vals in table.items():
        key = f"choices.{L.key_text(name)}"
        r.name(name, key, "choice")
        r.want(vals, key, list)
        if not vals:
            raise r.err(key, "expected a non-empty list of values")
        for i, v in enumerate(vals):
            r.want(v, f"{key}[{i}]", int, str, bool)
        if len(set(map(repr, vals))) != len(vals):
            raise r.err(key, "duplicate values")
        r.names[name] = "choice"
        r.choices[name] = tuple(vals)
    return tuple(r.choices.items())


def check_case_count(r: Reader, expressions: int) -> None:
    """The cases (the product of the choices) within ``--max-cases``, and every case's every expression
    field (cases x expressions) within ``EXPRESSIONS_PER_CASE`` per allowed case: refused before anything is
    bound. (The bindings actually done are counted as they happen: ``contract.model._CaseBinder``.)"""
    cases = 1
    for vals in r.choices.values():
        cases *= len(vals)
    drivers = sorted(r.choices.items(), key=lambda kv: -len(kv[1]))
    why = ", ".join(f"{name}: {len(vals)} values" for name, vals in drivers[:4])
    why += f" and {len(drivers) - 4} more choices" if len(drivers) > 4 else ""
    fix = "use fewer choice values, split the contract, or raise --max-cases"
    if cases > r.max_cases:
        raise r.err("choices", f"the choices make {short(cases)} cases ({why}), over the limit of {r.max_cases} "
                               f"cases: {fix}")
    budget = L.EXPRESSIONS_PER_CASE * r.max_cases
    if cases * expressions > budget:
        raise r.err("choices", f"{cases} cases ({why}) x {expressions} expressions = {cases * expressions}, over "
                               f"the limit of {budget} ({L.EXPRESSIONS_PER_CASE} per case of the limit of "
                               f"{r.max_cases} cases): {fix}")


def load_lets(r: Reader, table: JSON) -> tuple[tuple[str, S.Selectable[E.Node]], ...]:
    r.want(table, "let", dict)
    out = []
    for name, val in table.items():
        key = f"let.{L.key_text(name)}"
        r.name(name, key, "let")
        value = r.selectable(val, key, r.parse)
        nodes = [n for alt in value.alternatives for n in alt] if isinstance(value, S.Select) else [value]
        depth = 1 + max((r.let_depth.get(n, 0) for node in nodes for n in E.free_names(node)), default=0)
        if depth > L.LET_CHAIN:
            raise r.err(key, f"a chain of {depth} lets, each using the one before: the limit is {L.LET_CHAIN}")
        r.let_depth[name] = depth
        out.append((name, value))
        r.names[name] = "let"
    return tuple(out)




def load_paths(r: Reader, items: JSON) -> tuple[S.PathSpec, ...]:
    r.want(items, "paths", list)
    if not items:
        raise r.err("paths", "expected a non-empty array of [[paths]] tables")
    seen: set[tuple[str, str]] = set()
    return tuple(load_path(r, i, p, seen) for i, p in enumerate(items))


def load_path(r: Reader, i: int, p: JSON, seen: set[tuple[str, str]]) -> S.PathSpec:
    key = f"paths[{i}]"
    r.table(p, key, PATH_KEYS, {"id", "when", "outputs"})
    pid = r.want(p["id"], f"{key}.id", str)
    if not _PATH_ID.fullmatch(pid):
        raise r.err(f"{key}.id", f"expected a kebab-case id, found {short(pid)}")
    era = r.want(p.get("era", "default"), f"{key}.era", str)
    if not _ERA.fullmatch(era):  # printed in every report: no control characters, no spaces
        raise r.err(f"{key}.era", f"expected an era name (letters, digits, '.', '_', '-'), found {short(era)}")
    if (era, pid) in seen:
        raise r.err(f"{key}.id", f"duplicate path id {pid!r} in era {short(era)}")
    seen.add((era, pid))
    key = f"paths.{pid}"
    when = r.parse(p["when"], f"{key}.when")
    outs = r.want(p["outputs"], f"{key}.outputs", list)
    if not outs:
        raise r.err(f"{key}.outputs", "expected a non-empty list of shapes, tables, 'none' or 'unspecified'")
    leaf = lambda v, k: output_leaf(r, v, k)  # noqa: E731
    outputs = tuple(r.selectable(o, f"{key}.outputs[{j}]", leaf) for j, o in enumerate(outs))
    doc_leaf = lambda v, k: None if v == S.UNSPECIFIED else r.parse(v, k)  # noqa: E731
    docs = []
    for j, o in enumerate(r.want(p.get("runtime_outputs", []), f"{key}.runtime_outputs", list)):
        k = f"{key}.runtime_outputs[{j}]"
        r.table(o, k, {"shape", "what"}, {"what"})
        shape = r.selectable(o["shape"], f"{k}.shape", doc_leaf) if "shape" in o else None
        docs.append(S.OutputDoc(shape, r.want(o["what"], f"{k}.what", str)))
    source = r.want(p.get("source", ""), f"{key}.source", str)
    return S.PathSpec(pid, era, when, outputs, tuple(docs), source, r.want(p.get("doc", ""), f"{key}.doc", str),
                      r.line("paths", i))


# ---------------------------------------------------------------------------------------------------------
# The arguments: ``[[args]]``
#
# Reading a contract's ``[[args]]`` (``contract.load.build`` calls ``load_args``): each argument's kind and the
# fields that kind needs, with every error naming the file and the key.
#
# Kinds: ``tensor`` (``shape``, ``dtype``, for integer tensors ``low``/``high``; absent where ``present`` is false), ``tensors`` (a ``Tensor[]``:
# ``length`` and ``shapes`` or ``shape``, ``dtype``), ``int`` and ``ints`` (literals, choices or dims), ``float``,
# ``bool``, ``str``, ``dtype`` (a ``ScalarType``: a dtype name or a choice) and ``none``.

ARG_KEYS = {"name", "kind", "shape", "shapes", "length", "dtype", "value", "present", "keyword", "default", "doc",
            "low", "high", "values", *LAYOUT_KEYS}
#: the keys each kind may use besides name, kind, present, keyword, default and doc
KIND_KEYS = {"tensor": {"shape", "dtype", "low", "high", "values", *LAYOUT_KEYS},
             "tensors": {"length", "shape", "shapes", "dtype"}, "none": set()}


class _ArgFields(TypedDict, total=False):
    """``S.ArgSpec``'s fields as ``load_arg`` gathers them (each kind gives its own)."""

    name: str
    kind: str
    present: S.Selectable[E.Node]
    keyword: bool
    default: S.Default
    has_default: bool
    shape: S.Selectable[E.Node]
    shapes: tuple[S.Selectable[E.Node], ...]
    length: S.Selectable[E.Node]
    dtype: S.Selectable[str | E.Var]
    value: S.Selectable[S.ArgValue]
    low: S.Selectable[E.Node]
    high: S.Selectable[E.Node]
    layout: S.LayoutSpec | None
    values: dict[str, S.Selectable[E.Node]]


def load_args(r: Reader, items: JSON) -> tuple[S.ArgSpec, ...]:
    r.want(items, "args", list)
    if not items:
        raise r.err("args", "expected a non-empty array of [[args]] tables")
    for a in items:
        if isinstance(a, dict) and a.get("kind") == "tensor" and isinstance(a.get("name"), str):
            r.tensor_args.add(a["name"])
    seen: set[str] = set()
    return tuple(load_arg(r, i, a, seen) for i, a in enumerate(items))


def load_arg(r: Reader, i: int, a: JSON, seen: set[str]) -> S.ArgSpec:
    key = f"args[{i}]"
    r.table(a, key, ARG_KEYS, {"name", "kind"})
    name = r.want(a["name"], f"{key}.name", str)
    if not _IDENT.fullmatch(name) or name in seen:  # a keyword is fine: schemas have 'from'; passed by keyword
        raise r.err(f"{key}.name", f"expected a new identifier, found {short(name)}")
    seen.add(name)
    key = f"args.{name}"
    kind = r.want(a["kind"], f"{key}.kind", str)
    if kind not in S.ARG_KINDS:
        raise r.err(f"{key}.kind", f"expected one of {', '.join(S.ARG_KINDS)}, found {short(kind)}")
    allowed = KIND_KEYS.get(kind, {"value"})
    for k in ("shape", "shapes", "length", "dtype", "value", "low", "high", "values", *LAYOUT_KEYS):
        if k in a and k not in allowed:
            raise r.err(f"{key}.{k}", f"a {kind} argument takes no {k!r} (its keys: "
                                      f"{', '.join(sorted(allowed | {'present', 'keyword', 'default', 'doc'}))})")
    r.want(a.get("doc", ""), f"{key}.doc", str)
    present = r.selectable(a.get("present", True), f"{key}.present", r.parse)
    spec: _ArgFields = dict(name=name, kind=kind, present=present,
                                keyword=r.want(a.get("keyword", False), f"{key}.keyword", bool))
    if "default" in a:
        default = r.want(a["default"], f"{key}.default", int, float, bool, str, list)
        if isinstance(default, list):
            for j, x in enumerate(default):
                r.want(x, f"{key}.default[{j}]", *((int, float) if kind == "floats" else (int,)))
            default = tuple(default)
        spec.update({"default": default, "has_default": True})
    if kind == "tensor":
        if "shape" not in a or "dtype" not in a:
            raise r.err(key, "a tensor argument needs 'shape' and 'dtype'")
        spec["shape"] = r.selectable(a["shape"], f"{key}.shape", r.parse)
        spec["dtype"] = r.selectable(a["dtype"], f"{key}.dtype", lambda v, k: dtype_leaf(r, v, k))
        for bound in ("low", "high"):  # integer tensors: the values drawn, low <= v < high
            if bound in a:
                spec[bound] = r.selectable(a[bound], f"{key}.{bound}", r.parse)
        spec["layout"] = load_layout(r, a, key)
        if "values" in a:
            spec["values"] = tensor_values(r, a, key)
    elif kind == "tensors":
        spec.update(tensor_list(r, a, key))
    elif kind == "dtype":
        if "value" not in a:
            raise r.err(key, "a dtype argument needs 'value'")
        spec["value"] = r.selectable(a["value"], f"{key}.value", lambda v, k: dtype_leaf(r, v, k))
    elif kind != "none":
        if "value" not in a:
            raise r.err(key, f"a {kind} argument needs 'value'")
        leaf = float_leaf if kind in ("float", "floats") else value_leaf
        spec["value"] = r.selectable(a["value"], f"{key}.value", lambda v, k: leaf(r, v, k, kind))
    return S.ArgSpec(**spec)


def tensor_values(r: Reader, a: dict[str, JSON], key: str) -> dict[str, S.Selectable[E.Node]]:
    """What an integer tensor's values must satisfy where they decide sizes: ``values = { sum = "O" }`` (the
    values are non-negative and sum to O, e.g. ``repeat_interleave``'s ``repeats`` with ``output_size = O``)."""
    table = r.table(a["values"], f"{key}.values", {"sum"}, {"sum"})
    if "low" in a or "high" in a:
        raise r.err(f"{key}.values", "give 'values' or 'low'/'high', not both (values that sum to a size are "
                                     "non-negative)")
    return {"sum": r.selectable(table["sum"], f"{key}.values.sum", r.parse)}


_FLOAT_TEXT = re.compile(r"\s*[-+]?(\d+\.\d*|\.\d+|\d+[eE][-+]?\d+|\d+\.\d*[eE][-+]?\d+|inf|nan)\s*")


def float_leaf(r: Reader, value: JSON, key: str, kind: str) -> E.Node | int | float | tuple[float, ...]:
    """A ``float`` value (a number, or an expression over choices) or a ``floats`` value (an array of numbers).
    A number written as a string ("0.0") is refused with the TOML to write: expressions have no floats."""
    if isinstance(value, str):
        items = [x for x in value.strip().strip("[]()").split(",") if x.strip()]
        if items and all(_FLOAT_TEXT.fullmatch(x) for x in items):
            toml = ", ".join(x.strip() for x in items)
            write = f"[{toml}]" if kind == "floats" else toml
            raise r.err(key, f"{short(value)} is a string: write the TOML number {write} without quotes (a string is "
                             "an expression, and expressions have no floats)")
        if kind == "float":
            return r.parse(value, key)
    if kind == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if kind == "floats" and isinstance(value, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                            for x in value):
        return tuple(float(x) for x in value)
    want = "an array of numbers, e.g. [2.0, 2.0]" if kind == "floats" else "a number or an expression over choices"
    raise r.err(key, f"expected {want}, found {short(value)}")


def tensor_list(r: Reader, a: dict[str, JSON], key: str) -> _ArgFields:
    """A ``Tensor[]`` argument: ``length`` (an expression over choices, or an integer), ``dtype`` and either
    ``shapes`` (element i has shapes[i]) or ``shape`` (every element)."""
    if "length" not in a or "dtype" not in a or ("shape" in a) == ("shapes" in a):
        raise r.err(key, "a tensors argument needs 'length', 'dtype' and one of 'shapes' (one per element) or "
                         "'shape' (every element)")
    out: _ArgFields = {"length": r.selectable(a["length"], f"{key}.length", r.parse),
                           "dtype": r.selectable(a["dtype"], f"{key}.dtype", lambda v, k: dtype_leaf(r, v, k))}
    if "shape" in a:
        out["shape"] = r.selectable(a["shape"], f"{key}.shape", r.parse)
    else:
        items = r.want(a["shapes"], f"{key}.shapes", list)
        if not items:
            raise r.err(f"{key}.shapes", "expected a non-empty list of shapes, one per element")
        out["shapes"] = tuple(r.selectable(s, f"{key}.shapes[{j}]", r.parse) for j, s in enumerate(items))
    return out


def dtype_leaf(r: Reader, value: JSON, key: str) -> str | E.Var:
    r.want(value, key, str)
    if r.names.get(value) == "choice":
        return E.Var(value)
    if not dtypes.known(value):
        raise r.err(key, dtypes.unknown_message(value))
    return value


def value_leaf(r: Reader, value: JSON, key: str, kind: str = "") -> E.Node | int | float | bool:
    if isinstance(value, str):
        return r.parse(value, key)
    if isinstance(value, (int, float, bool)):
        return value
    if isinstance(value, list) and value and all(isinstance(x, bool) for x in value):
        return E.TupleE(tuple(E.Const(x) for x in value))  # a bool list (kind = "bools"), e.g. an output_mask
    if isinstance(value, list) and all(isinstance(x, (int, str)) and not isinstance(x, bool) for x in value):
        # an int list (kind = "ints"): literals or expressions, one per element
        return E.TupleE(tuple(E.Const(x) if isinstance(x, int) else r.parse(x, f"{key}[{j}]")
                              for j, x in enumerate(value)))
    raise r.err(key, f"expected a literal, a list of ints or of bools, or an expression string, found {short(value)}")
