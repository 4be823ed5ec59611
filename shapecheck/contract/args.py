"""Reading a contract's ``[[args]]`` (``contract_load.build`` calls ``load_args``): each argument's kind and the
fields that kind needs, with every error naming the file and the key.

Kinds: ``tensor`` (``shape``, ``dtype``, for integer tensors ``low``/``high``; absent where ``present`` is false), ``tensors`` (a ``Tensor[]``:
``length`` and ``shapes`` or ``shape``, ``dtype``), ``int`` and ``ints`` (literals, choices or dims), ``float``,
``bool``, ``str``, ``dtype`` (a ``ScalarType``: a dtype name or a choice) and ``none``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..logic import expr as E
from . import spec as S
from .spec import short

if TYPE_CHECKING:  # the reader of contract_load, which imports this module
    from .load import Reader

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
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
