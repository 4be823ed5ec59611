"""Typed access to a contract file's keys while it loads (``Reader``: ``contract.load`` makes one per file and
hands it to the readers of each table, ``contract.layouts``, ``contract.outputs``, ``contract.rejects`` and
``contract.suppress_table``), and the expressions: each key's type checked before it is used, every error a
``ContractError`` naming the file and the key."""

from __future__ import annotations

import datetime
import keyword
import re
from collections.abc import Callable, Set
from typing import TypeVar

from .. import limits as L
from ..edges import JSON
from ..errors import ContractError, ExprError
from ..logic import expr as E
from . import spec as S
from .lines import line_of
from .spec import short

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RESERVED = {"true", "false", "True", "False", "min", "max"}
T = TypeVar("T")
_TYPE_NAMES = {str: "a string", bool: "true or false", int: "an integer", float: "a number", list: "an array",
               dict: "a table", datetime.date: "a date"}


class Reader:
    """The state of one load: the file, the names declared so far, and the counts the limits bound."""

    def __init__(self, where: str, data: dict[str, JSON], max_cases: int, lines: dict[str, list[int]] | None = None):
        self.where, self.data, self.max_cases = where, data, max_cases
        self.lines = lines or {}  # contract.lines.table_lines of the file
        self.names: dict[str, str] = {}  # name -> what (dim/choice/let)
        self.choices: dict[str, tuple[S.ChoiceValue, ...]] = {}
        self.let_depth: dict[str, int] = {}
        self.tensor_args: set[str] = set()
        self.expressions = 0

    def line(self, array: str, index: int) -> int:
        """The line of table ``index`` of the array of tables ``array`` (0: not known)."""
        items = self.data.get(array)
        return line_of(self.lines, array, index, len(items) if isinstance(items, list) else 0)

    def err(self, key: str, message: str) -> ContractError:
        return ContractError(f"{self.where}: [{key}]" if key else self.where, message)

    def want(self, value: JSON, key: str, *types: type) -> JSON:
        """``value`` when it has one of ``types`` (a bool is not an int), else an error saying what is wanted."""
        if isinstance(value, types) and not (isinstance(value, bool) and bool not in types):
            return value
        names = [_TYPE_NAMES.get(t, t.__name__) for t in types]
        wanted = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
        raise self.err(key, f"expected {wanted}, found {type_name(value)} {short(value)}")

    def table(self, value: JSON, key: str, allowed: set[str], required: Set[str] = frozenset()) -> dict[str, JSON]:
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

    def parse(self, text: JSON, key: str) -> E.Node:
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

    def expr_list(self, items: JSON, key: str) -> list[tuple[str, E.Node]]:
        if isinstance(items, str):
            items = [items]
        self.want(items, key, list)
        return [(f"{key}[{i}]", self.parse(t, f"{key}[{i}]")) for i, t in enumerate(items)]

    def selectable(self, value: JSON, key: str, leaf: Callable[[JSON, str], T]) -> S.Selectable[T]:
        """A plain value, or a list of {when, value} alternatives: ``leaf(value, key)`` reads each value."""
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            alts = []
            for i, alt in enumerate(value):
                k = f"{key}[{i}]"
                self.table(alt, k, {"when", "value"}, {"value"})
                when = self.parse(alt.get("when", "true"), f"{k}.when")
                alts.append((when, leaf(alt["value"], f"{k}.value")))
            return S.Select(tuple(alts))
        return leaf(value, key)


def type_name(value: object) -> str:
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
