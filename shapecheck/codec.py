"""Typed JSON for shapecheck's data: frozen dataclasses, TypedDicts, enums and plain containers written as JSON
values and read back against their type annotations, strictly.

``encode(value)`` gives a JSON-able value. ``decode(tp, data)`` rebuilds a value of type ``tp`` and raises
``DecodeError`` for anything the annotation does not allow: a missing or unknown field, a wrong type, a bool
where an int is expected, a class that is not a dataclass or TypedDict named by the annotation, nesting deeper
than ``MAX_DEPTH``. Nothing is imported or called by name from the data: the annotations alone say which
classes are built. This is how the result cache reads its entries back (an entry can hold nothing but data).

A dataclass field whose metadata holds ``TRANSIENT`` (an in-process object such as an expression tree) is not
written, and is read back as its default. ``Any`` is refused everywhere else: a schema says what it holds.

Torch-free, z3-free; imports nothing of the package.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, Union

MAX_DEPTH = 64
#: ``field(metadata=TRANSIENT)``: an in-process value, neither written nor read (read back as its default)
TRANSIENT = types.MappingProxyType({"shapecheck_transient": True})


class DecodeError(ValueError):
    """The data does not have the shape its type annotation says."""


def is_transient(f: dataclasses.Field) -> bool:
    return bool(f.metadata.get("shapecheck_transient"))


# ---------------------------------------------------------------------------------------------------------
# Writing


def encode(value: Any) -> Any:
    """``value`` as a JSON-able value: dataclasses as objects of their non-transient fields, enums as their
    values, tuples and lists as arrays, mappings as objects (string keys only)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, enum.Enum):
        return encode(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value) if not is_transient(f)}
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"a mapping key must be a string, not {type(k).__name__}")
            out[k] = encode(v)
        return out
    if isinstance(value, (tuple, list)):
        return [encode(v) for v in value]
    raise TypeError(f"{type(value).__name__} is not data the codec writes")


# ---------------------------------------------------------------------------------------------------------
# Reading: one decoder per annotation, built once (a hit of the result cache reads thousands of records)


def decode(tp: Any, data: Any) -> Any:
    """A value of type ``tp`` from JSON ``data`` (see the module docstring); ``DecodeError`` when it is not."""
    try:
        return _decoder(tp)(data, 0)
    except _Bad as bad:
        raise DecodeError("$" + "".join(reversed(bad.where)) + ": " + bad.message) from None
    except RecursionError:
        raise DecodeError("nested too deeply") from None


class _Bad(Exception):
    """A decoding failure on its way up: each level adds its step to ``where``."""

    def __init__(self, message: str):
        self.message = message
        self.where: list[str] = []


Decoder = typing.Callable[[Any, int], Any]


def _at(step: str, dec: Decoder, data: Any, depth: int) -> Any:
    try:
        return dec(data, depth)
    except _Bad as bad:
        bad.where.append(step)
        raise


@functools.cache
def _decoder(tp: Any) -> Decoder:
    if tp is Any or tp is object:
        raise DecodeError(f"no schema for a value annotated {tp!r}")
    if tp is None or tp is type(None):
        return _none
    origin = typing.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return _union(tuple(_decoder(m) for m in typing.get_args(tp)))
    if origin is typing.Literal:
        return _literal(typing.get_args(tp))
    if origin in (tuple, list):
        return _sequence(tp, origin)
    if origin in (dict, Mapping) or tp is dict:
        key_t, value_t = typing.get_args(tp) or (str, Any)
        if key_t is not str:
            raise DecodeError(f"mapping keys must be strings in {tp!r}")
        return _mapping(_decoder(value_t))
    if isinstance(tp, type):
        if issubclass(tp, enum.Enum):
            return _enum(tp)
        if tp in _SCALARS:
            return _SCALARS[tp]
        if dataclasses.is_dataclass(tp):
            return _dataclass(tp)
        if typing.is_typeddict(tp):
            return _typeddict(tp)
    raise DecodeError(f"unsupported annotation {tp!r}")


def _check(depth: int) -> int:
    if depth > MAX_DEPTH:
        raise _Bad(f"nested deeper than {MAX_DEPTH}")
    return depth + 1


def _none(data: Any, depth: int) -> None:
    if data is not None:
        raise _Bad("expected null")


def _bool(data: Any, depth: int) -> bool:
    if not isinstance(data, bool):
        raise _Bad("expected a boolean")
    return data


def _int(data: Any, depth: int) -> int:
    if not isinstance(data, int) or isinstance(data, bool):
        raise _Bad("expected an integer")
    return data


def _float(data: Any, depth: int) -> float:
    if not isinstance(data, (int, float)) or isinstance(data, bool):
        raise _Bad("expected a number")
    return float(data)


def _str(data: Any, depth: int) -> str:
    if not isinstance(data, str):
        raise _Bad("expected a string")
    return data


_SCALARS: dict[type, Decoder] = {bool: _bool, int: _int, float: _float, str: _str}


def _union(members: tuple[Decoder, ...]) -> Decoder:
    def dec(data: Any, depth: int) -> Any:
        first = None
        for member in members:
            try:
                return member(data, depth)
            except _Bad as bad:
                first = first or bad
        if len(members) == 1 and first is not None:
            raise first
        raise _Bad(f"matches none of {len(members)} alternatives")
    return dec


def _literal(values: tuple[Any, ...]) -> Decoder:
    def dec(data: Any, depth: int) -> Any:
        for v in values:
            if type(v) is type(data) and v == data:
                return data
        raise _Bad(f"not one of {values}")
    return dec


def _enum(tp: type[enum.Enum]) -> Decoder:
    def dec(data: Any, depth: int) -> Any:
        try:
            return tp(data)
        except (ValueError, TypeError):
            raise _Bad(f"not a {tp.__name__}") from None
    return dec


def _sequence(tp: Any, origin: type) -> Decoder:
    args = typing.get_args(tp)
    if origin is list or (len(args) == 2 and args[1] is Ellipsis) or not args:
        item = _decoder(args[0] if args else Any)

        def homogeneous(data: Any, depth: int) -> Any:
            if not isinstance(data, list):
                raise _Bad("expected an array")
            depth = _check(depth)
            out = []
            for i, v in enumerate(data):
                try:
                    out.append(item(v, depth))
                except _Bad as bad:
                    bad.where.append(f"[{i}]")
                    raise
            return out if origin is list else tuple(out)
        return homogeneous
    items = tuple(_decoder(a) for a in args)

    def fixed(data: Any, depth: int) -> Any:
        if not isinstance(data, list) or len(data) != len(items):
            raise _Bad(f"expected an array of {len(items)} items")
        depth = _check(depth)
        return tuple(_at(f"[{i}]", d, v, depth) for i, (d, v) in enumerate(zip(items, data)))
    return fixed


def _mapping(value: Decoder) -> Decoder:
    def dec(data: Any, depth: int) -> Any:
        if not isinstance(data, dict):
            raise _Bad("expected an object")
        depth = _check(depth)
        return {k: _at(f".{k}", value, v, depth) for k, v in data.items()}
    return dec


def _dataclass(tp: type) -> Decoder:
    names = tuple(f.name for f in dataclasses.fields(tp) if not is_transient(f))
    wanted = frozenset(names)
    hints = _hints(tp)
    fields = tuple((n, _decoder(hints[n])) for n in names)

    def dec(data: Any, depth: int) -> Any:
        if not isinstance(data, dict):
            raise _Bad(f"expected an object for {tp.__name__}")
        if data.keys() != wanted:
            extra, missing = sorted(set(data) - wanted), sorted(wanted - set(data))
            raise _Bad(f"unknown field {extra[0]!r} of {tp.__name__}" if extra else f"{tp.__name__} lacks {missing[0]!r}")
        depth = _check(depth)
        values = {n: _at(f".{n}", d, data[n], depth) for n, d in fields}
        try:
            return tp(**values)
        except (TypeError, ValueError) as err:  # a __post_init__ that refuses the values
            raise _Bad(f"{tp.__name__}: {err}") from None
    return dec


def _typeddict(tp: type) -> Decoder:
    hints = _hints(tp)
    keys = {k: _decoder(t) for k, t in hints.items()}
    required = frozenset(getattr(tp, "__required_keys__", frozenset(hints)))

    def dec(data: Any, depth: int) -> Any:
        if not isinstance(data, dict):
            raise _Bad(f"expected an object for {tp.__name__}")
        unknown = [k for k in data if k not in keys]
        if unknown:
            raise _Bad(f"unknown key {unknown[0]!r} of {tp.__name__}")
        missing = sorted(required - set(data))
        if missing:
            raise _Bad(f"{tp.__name__} lacks {missing[0]!r}")
        depth = _check(depth)
        return {k: _at(f".{k}", keys[k], v, depth) for k, v in data.items()}
    return dec


def _hints(tp: type) -> dict[str, Any]:
    """The resolved annotations of a dataclass or TypedDict (``from __future__ import annotations`` makes them
    strings; they are resolved in the class's module), ``Required``/``NotRequired`` stripped."""
    out = {}
    for k, v in typing.get_type_hints(tp).items():
        while typing.get_origin(v) in (typing.Required, typing.NotRequired):
            v = typing.get_args(v)[0]
        out[k] = v
    return out
