"""Loading a contract: a file -> TOML -> the validated fields of a ``Contract`` -> the ``Contract``, every case
bound once (``load_contract``).

Every error is a ``ContractError`` naming the file and the TOML key. Each key's type is checked before the
key is used, with the expected type in the message. The limits of ``limits`` hold before anything is bound:
the file's size, TOML nesting and integers, each expression's length and nesting, the number of
expressions, let chains, and the number of cases (the product of the choices) with the work of binding them.
"""

from __future__ import annotations

import datetime
import difflib
import keyword
import re
import tomllib
from collections.abc import Set
from pathlib import Path
from typing import Any

from .. import limits as L
from ..errors import ContractError, ExprError
from ..logic import expr as E
from ..rules import RULES
from . import spec as S
from .model import Contract
from .outputs import output_leaf
from .schema import check_sizes
from .spec import short

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATH_ID = re.compile(r"[a-z0-9][a-z0-9_.-]*")
_RESERVED = {"true", "false", "True", "False", "min", "max"}
TOP_KEYS = {"schema", "op", "doc", "dims", "choices", "domain", "let", "args", "paths", "meta", "suppress",
            "rejects"}
PATH_KEYS = {"id", "era", "when", "outputs", "runtime_outputs", "source", "doc"}
SUPPRESS_KEYS = {"rule", "reason", "case", "path", "dims", "expires"}
_TYPE_NAMES = {str: "a string", bool: "true or false", int: "an integer", float: "a number", list: "an array",
               dict: "a table", datetime.date: "a date"}


def read_contract(path: Path, max_cases: int) -> dict[str, Any]:
    """The fields of ``contract.model.Contract`` from a contract file, validated, within the limits (at most
    ``max_cases`` cases). Raises ContractError naming the file and key."""
    return build(Reader(str(path), read_toml(path), max_cases))


def load_contract(path: str | Path, *, max_cases: int | None = None) -> Contract:
    """Read and validate a contract file, binding every case once (type errors surface here, with their key).
    Raises ContractError naming the file and key. ``max_cases``: the case limit (default: ``--max-cases``,
    else ``limits.DEFAULT_MAX_CASES``)."""
    limit = L.max_cases() if max_cases is None else max_cases
    with L.case_limit(limit):
        contract = Contract(**read_contract(Path(path), limit))
        if not any(True for _ in contract.cases()):
            raise ContractError(f"{path}: [choices]", "every case is excluded: the contract checks nothing")
        check_sizes(contract)
        contract.excluded_reject_cases()  # bound now: their errors are load errors too
    return contract


# ---------------------------------------------------------------------------------------------------------
# The file and its TOML


def read_toml(path: Path) -> dict:
    """The TOML table of a contract file, within the size, nesting and integer limits."""
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


def check_toml(where: str, data: dict) -> None:
    """Nesting within ``TOML_DEPTH`` and every integer within int64, walked without recursion."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
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
# Typed access to the keys, and the expressions


class Reader:
    """The state of one load: the file, the names declared so far, and the counts the limits bound."""

    def __init__(self, where: str, data: dict, max_cases: int):
        self.where, self.data, self.max_cases = where, data, max_cases
        self.names: dict[str, str] = {}  # name -> what (dim/choice/let)
        self.choices: dict[str, tuple[Any, ...]] = {}
        self.let_depth: dict[str, int] = {}
        self.tensor_args: set[str] = set()
        self.expressions = 0

    def err(self, key: str, message: str) -> ContractError:
        return ContractError(f"{self.where}: [{key}]" if key else self.where, message)

    def want(self, value: Any, key: str, *types: type) -> Any:
        """``value`` when it has one of ``types`` (a bool is not an int), else an error saying what is wanted."""
        if isinstance(value, types) and not (isinstance(value, bool) and bool not in types):
            return value
        names = [_TYPE_NAMES.get(t, t.__name__) for t in types]
        wanted = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
        raise self.err(key, f"expected {wanted}, found {type_name(value)} {short(value)}")

    def table(self, value: Any, key: str, allowed: set[str], required: Set[str] = frozenset()) -> dict:
        self.want(value, key, dict)
        for k in value:
            if k not in allowed:
                sub = f"{key}.{L.key_text(k)}" if key else L.key_text(k)
                raise self.err(sub, f"unknown key {short(k)} (allowed: {', '.join(sorted(allowed))})")
        for k in sorted(required):
            if k not in value:
                raise self.err(key, f"missing required key {k!r}")
        return value

    def name(self, name: str, key: str, what: str) -> str:
        if not _IDENT.fullmatch(name) or keyword.iskeyword(name) or name in _RESERVED:
            raise self.err(key, f"a {what} name must be an identifier that is not a reserved word, found "
                                f"{short(name)}")
        if name in self.names:
            raise self.err(key, f"{name!r} is already a {self.names[name]}")
        return name

    def parse(self, text: Any, key: str) -> E.Node:
        if isinstance(text, (bool, int)):
            node: E.Node = E.Const(text)
        else:
            self.want(text, key, str)
            try:
                node = E.parse(text)
            except ExprError as err:
                raise self.err(key, f"{err.message}: {short(text)}") from None
        self.expressions += 1
        if self.expressions > L.EXPRESSIONS:
            raise self.err(key, f"more than {L.EXPRESSIONS} expressions in one contract")
        for name in E.free_names(node):
            if name not in self.names and name not in self.tensor_args:
                raise self.err(key, f"unknown name {name!r} in {short(text)} (known: {', '.join(sorted(self.names))})")
        check_choice_values(self, node, key)
        return node

    def expr_list(self, items: Any, key: str) -> list[tuple[str, E.Node]]:
        if isinstance(items, str):
            items = [items]
        self.want(items, key, list)
        return [(f"{key}[{i}]", self.parse(t, f"{key}[{i}]")) for i, t in enumerate(items)]

    def selectable(self, value: Any, key: str, leaf) -> Any:
        """A plain value, or a list of {when, value} alternatives."""
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            alts = []
            for i, alt in enumerate(value):
                k = f"{key}[{i}]"
                self.table(alt, k, {"when", "value"}, {"value"})
                when = self.parse(alt.get("when", "true"), f"{k}.when")
                alts.append((when, leaf(alt["value"], f"{k}.value")))
            return S.Select(tuple(alts))
        return leaf(value, key)


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    for t, name in _TYPE_NAMES.items():
        if isinstance(value, t) and not (t is int and isinstance(value, bool)):
            return name
    return type(value).__name__


def check_choice_values(r: Reader, node: E.Node, key: str) -> None:
    """``choice == value`` (and ``!=``, ``in``) with a value the choice does not have is a mistake (a typo
    would make the condition silently false), never a condition."""
    todo = [node]
    while todo:
        n = todo.pop()
        todo.extend(E.children(n))
        if not (isinstance(n, E.Cmp) and n.op in ("==", "!=")):
            continue
        for var, const in ((n.left, n.right), (n.right, n.left)):
            if isinstance(var, E.Var) and var.name in r.choices and isinstance(const, E.Const):
                values = r.choices[var.name]
                if not any(isinstance(v, str) == isinstance(const.value, str) and v == const.value for v in values):
                    known = ", ".join(E.to_text(E.Const(v)) for v in values)
                    raise r.err(key, f"{E.to_text(const)} is not a value of the choice {var.name} (its values: "
                                     f"{known})")


# ---------------------------------------------------------------------------------------------------------
# The tables


def build(r: Reader) -> dict[str, Any]:
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
    from .rejects import load_rejects

    rejects = load_rejects(r, d.get("rejects", []))
    check_case_count(r, r.expressions)
    return dict(file=r.where, op=op, dims=dims, choices=choices, requires=requires, exclude=exclude, lets=lets,
                args=args, paths=paths, guard_free=guard_free, suppressions=sup, doc=doc, rejects=rejects)


def load_dims(r: Reader, table: Any) -> tuple[S.Dim, ...]:
    r.want(table, "dims", dict)
    if not table:
        raise r.err("dims", "expected a non-empty table of dims")
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


def load_choices(r: Reader, table: Any) -> tuple[tuple[str, tuple[Any, ...]], ...]:
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


def load_lets(r: Reader, table: Any) -> tuple[tuple[str, Any], ...]:
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




def load_paths(r: Reader, items: Any) -> tuple[S.PathSpec, ...]:
    r.want(items, "paths", list)
    if not items:
        raise r.err("paths", "expected a non-empty array of [[paths]] tables")
    seen: set[tuple[str, str]] = set()
    return tuple(load_path(r, i, p, seen) for i, p in enumerate(items))


def load_path(r: Reader, i: int, p: Any, seen: set[tuple[str, str]]) -> S.PathSpec:
    key = f"paths[{i}]"
    r.table(p, key, PATH_KEYS, {"id", "when", "outputs"})
    pid = r.want(p["id"], f"{key}.id", str)
    if not _PATH_ID.fullmatch(pid):
        raise r.err(f"{key}.id", f"expected a kebab-case id, found {short(pid)}")
    era = r.want(p.get("era", "default"), f"{key}.era", str)
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
    return S.PathSpec(pid, era, when, outputs, tuple(docs), source, r.want(p.get("doc", ""), f"{key}.doc", str))


def _calendar_date(text: str) -> bool:
    """Whether ``text`` is a real date written YYYY-MM-DD in ASCII digits (``\\d`` matches any script's digits,
    and those sort after every ASCII date: such a date would never expire)."""
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:  # 2027-02-30
        return False
    return True


def load_suppressions(r: Reader, items: Any) -> tuple[S.Suppression, ...]:
    r.want(items, "suppress", list)
    return tuple(load_suppression(r, i, s) for i, s in enumerate(items))


def load_suppression(r: Reader, i: int, s: Any) -> S.Suppression:
    key = f"suppress[{i}]"
    r.table(s, key, SUPPRESS_KEYS, {"rule", "reason"})
    rule = r.want(s["rule"], f"{key}.rule", str)
    if rule not in RULES:  # a rule no command reports would suppress nothing, silently, for ever
        close = difflib.get_close_matches(rule, RULES, n=3, cutoff=0.6)
        raise r.err(f"{key}.rule", f"unknown rule {short(rule)}" + (f" (did you mean {', '.join(close)}?)" if close
                                                                    else "") + f"; the rules: {', '.join(RULES)}")
    reason = r.want(s["reason"], f"{key}.reason", str)
    if not reason.strip():
        raise r.err(f"{key}.reason", "a suppression needs a reason")
    dims = r.want(s.get("dims", []), f"{key}.dims", list)
    if any(not isinstance(x, str) or r.names.get(x) != "dim" for x in dims):
        raise r.err(f"{key}.dims", f"expected a list of declared dims, found {short(dims)}")
    case = r.want(s.get("case", ""), f"{key}.case", str) or None
    path = r.want(s.get("path", ""), f"{key}.path", str) or None
    expires = s.get("expires")
    if expires is not None:
        expires = str(r.want(expires, f"{key}.expires", str, datetime.date))
        if not _calendar_date(expires):
            raise r.err(f"{key}.expires", f"expected a calendar date YYYY-MM-DD in ASCII digits, found {short(expires)}")
    return S.Suppression(rule, reason, case, path, tuple(dims), expires, i)


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
            "low", "high"}
#: the keys each kind may use besides name, kind, present, keyword, default and doc
KIND_KEYS = {"tensor": {"shape", "dtype", "low", "high"}, "tensors": {"length", "shape", "shapes", "dtype"}, "none": set()}


def load_args(r: Reader, items: Any) -> tuple[S.ArgSpec, ...]:
    r.want(items, "args", list)
    if not items:
        raise r.err("args", "expected a non-empty array of [[args]] tables")
    for a in items:
        if isinstance(a, dict) and a.get("kind") == "tensor" and isinstance(a.get("name"), str):
            r.tensor_args.add(a["name"])
    seen: set[str] = set()
    return tuple(load_arg(r, i, a, seen) for i, a in enumerate(items))


def load_arg(r: Reader, i: int, a: Any, seen: set[str]) -> S.ArgSpec:
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
    for k in ("shape", "shapes", "length", "dtype", "value", "low", "high"):
        if k in a and k not in allowed:
            raise r.err(f"{key}.{k}", f"a {kind} argument takes no {k!r} (its keys: "
                                      f"{', '.join(sorted(allowed | {'present', 'keyword', 'default', 'doc'}))})")
    r.want(a.get("doc", ""), f"{key}.doc", str)
    present = r.selectable(a.get("present", True), f"{key}.present", r.parse)
    spec: dict[str, Any] = dict(name=name, kind=kind, present=present,
                                keyword=r.want(a.get("keyword", False), f"{key}.keyword", bool))
    if "default" in a:
        default = r.want(a["default"], f"{key}.default", int, float, bool, str, list)
        if isinstance(default, list):
            for j, x in enumerate(default):
                r.want(x, f"{key}.default[{j}]", int)
            default = tuple(default)
        spec.update(default=default, has_default=True)
    if kind == "tensor":
        if "shape" not in a or "dtype" not in a:
            raise r.err(key, "a tensor argument needs 'shape' and 'dtype'")
        spec["shape"] = r.selectable(a["shape"], f"{key}.shape", r.parse)
        spec["dtype"] = r.selectable(a["dtype"], f"{key}.dtype", lambda v, k: dtype_leaf(r, v, k))
        for bound in ("low", "high"):  # integer tensors: the values drawn, low <= v < high
            if bound in a:
                spec[bound] = r.selectable(a[bound], f"{key}.{bound}", r.parse)
    elif kind == "tensors":
        spec.update(tensor_list(r, a, key))
    elif kind == "dtype":
        if "value" not in a:
            raise r.err(key, "a dtype argument needs 'value'")
        spec["value"] = r.selectable(a["value"], f"{key}.value", lambda v, k: dtype_leaf(r, v, k))
    elif kind != "none":
        if "value" not in a:
            raise r.err(key, f"a {kind} argument needs 'value'")
        spec["value"] = r.selectable(a["value"], f"{key}.value", lambda v, k: value_leaf(r, v, k))
    return S.ArgSpec(**spec)


def tensor_list(r: Reader, a: dict, key: str) -> dict[str, Any]:
    """A ``Tensor[]`` argument: ``length`` (an expression over choices, or an integer), ``dtype`` and either
    ``shapes`` (element i has shapes[i]) or ``shape`` (every element)."""
    if "length" not in a or "dtype" not in a or ("shape" in a) == ("shapes" in a):
        raise r.err(key, "a tensors argument needs 'length', 'dtype' and one of 'shapes' (one per element) or "
                         "'shape' (every element)")
    out: dict[str, Any] = {"length": r.selectable(a["length"], f"{key}.length", r.parse),
                           "dtype": r.selectable(a["dtype"], f"{key}.dtype", lambda v, k: dtype_leaf(r, v, k))}
    if "shape" in a:
        out["shape"] = r.selectable(a["shape"], f"{key}.shape", r.parse)
    else:
        items = r.want(a["shapes"], f"{key}.shapes", list)
        if not items:
            raise r.err(f"{key}.shapes", "expected a non-empty list of shapes, one per element")
        out["shapes"] = tuple(r.selectable(s, f"{key}.shapes[{j}]", r.parse) for j, s in enumerate(items))
    return out


def dtype_leaf(r: Reader, value: Any, key: str) -> Any:
    r.want(value, key, str)
    if r.names.get(value) == "choice":
        return E.Var(value)
    if value not in S.TENSOR_DTYPES:
        raise r.err(key, f"unknown dtype {short(value)} (known: {', '.join(S.TENSOR_DTYPES)}, or a choice name)")
    return value


def value_leaf(r: Reader, value: Any, key: str) -> Any:
    if isinstance(value, str):
        return r.parse(value, key)
    if isinstance(value, (int, float, bool)):
        return value
    if isinstance(value, list) and all(isinstance(x, (int, str)) and not isinstance(x, bool) for x in value):
        # an int list (kind = "ints"): literals or expressions, one per element
        return E.TupleE(tuple(E.Const(x) if isinstance(x, int) else r.parse(x, f"{key}[{j}]")
                              for j, x in enumerate(value)))
    raise r.err(key, f"expected a literal, a list of ints or an expression string, found {short(value)}")
