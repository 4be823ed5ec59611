"""The tree of the dim-expression language (``logic.expr`` parses, binds, evaluates and prints it): frozen,
hashable nodes, ``TRUE``/``FALSE``, and ``Value``, what an expression evaluates to."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, cast

from ..limits import CONST_BITS
from .memo import memo_hash

# ---------------------------------------------------------------------------------------------------------
# The tree


class Node:
    """Base of every expression node. Nodes are frozen and hashable; ``str()`` gives the contract text
    (``logic.expr.to_text``, which ``logic.expr`` sets as ``render`` when it loads)."""

    __slots__ = ()
    render: ClassVar[Callable[[Node], str]] = repr

    def __str__(self) -> str:
        return type(self).render(self)


@dataclass(frozen=True, eq=False)
class Const(Node):
    value: int | bool | str

    # True == 1 in Python; as expressions a condition and a number must stay apart (cache keys, folding)
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Const) and type(other.value) is type(self.value) and other.value == self.value

    def __hash__(self) -> int:
        return hash((type(self.value), self.value))


@dataclass(frozen=True)
class Var(Node):
    name: str


@dataclass(frozen=True)
class Arith(Node):
    op: str  # + - * // %
    left: Node
    right: Node


@dataclass(frozen=True)
class Neg(Node):
    operand: Node


@dataclass(frozen=True)
class Call(Node):
    fn: str  # min | max
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Cmp(Node):
    op: str  # == != < <= > >=
    left: Node
    right: Node


@dataclass(frozen=True)
class And(Node):
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Or(Node):
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Not(Node):
    operand: Node


@dataclass(frozen=True)
class Ite(Node):
    """``then if cond else other``: a contract's conditional expression, or torch's ``sym_ite`` (a sympy
    Piecewise) from a trace."""

    cond: Node
    then: Node
    other: Node


@dataclass(frozen=True)
class TupleE(Node):
    """A shape: a tuple of scalar expressions."""

    items: tuple[Node, ...]


@dataclass(frozen=True)
class ShapeOf(Node):
    """``arg.shape`` before binding."""

    arg: str


@dataclass(frozen=True)
class Index(Node):
    base: Node
    index: int


@dataclass(frozen=True)
class SliceE(Node):
    base: Node
    lo: int | None
    hi: int | None


@dataclass(frozen=True)
class Concat(Node):
    left: Node
    right: Node


memo_hash(Const, Var, Arith, Neg, Call, Cmp, And, Or, Not, Ite, TupleE, ShapeOf, Index, SliceE, Concat)

TRUE = Const(True)
FALSE = Const(False)
Value = int | bool | str | tuple["Value", ...]  # what ``evaluate`` gives: a constant's, or a shape's values


# ---------------------------------------------------------------------------------------------------------
# Evaluation at concrete values, without binding


class NotFolded(Exception):
    """``_value`` met an unbound name, an operand of the wrong kind, a division by zero or a number over the
    limit: ``evaluate_bound`` gives the answer (or the error)."""


def _kind(v: Value) -> str:
    """What ``logic.expr.kind_of`` says of the constant ``v``."""
    return "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "str" if isinstance(v, str) else "shape"


def _int(v: Value) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise NotFolded
    return v


def value_at(n: Node, values: Mapping[str, int | bool | str]) -> Value:
    """``logic.expr.evaluate``'s value of ``n`` at ``values``, straight to Python values where every name has a
    value and every operand its kind (the common case, several times faster than binding and folding);
    ``NotFolded`` where binding would keep a name or raise (``logic.expr.evaluate_bound`` then answers)."""
    t = type(n)
    if t is Const:
        return cast(Const, n).value
    if t is Var:
        if cast(Var, n).name not in values:
            raise NotFolded
        return values[cast(Var, n).name]
    if t is Arith:
        a = cast(Arith, n)
        x, y = _int(value_at(a.left, values)), _int(value_at(a.right, values))
        if a.op in ("//", "%") and y == 0:
            raise NotFolded
        out = x + y if a.op == "+" else x - y if a.op == "-" else x * y if a.op == "*" else x // y if a.op == "//" \
            else x % y
        if out.bit_length() > CONST_BITS:
            raise NotFolded
        return out
    if t is Neg:
        out = -_int(value_at(cast(Neg, n).operand, values))
        if out.bit_length() > CONST_BITS:
            raise NotFolded
        return out
    if t is Call:
        c = cast(Call, n)
        args = [_int(value_at(x, values)) for x in c.args]
        return min(args) if c.fn == "min" else max(args)
    if t is Cmp:
        return _compared(cast(Cmp, n), values)
    if t is Not or t is And or t is Or:
        parts = [value_at(x, values) for x in ((cast(Not, n).operand,) if t is Not else cast(And, n).args)]
        if not all(isinstance(p, bool) for p in parts):
            raise NotFolded
        return (not parts[0]) if t is Not else all(parts) if t is And else any(parts)
    if t is Ite:
        i = cast(Ite, n)
        cond, then, other = value_at(i.cond, values), value_at(i.then, values), value_at(i.other, values)
        if not isinstance(cond, bool) or _kind(then) != _kind(other):
            raise NotFolded
        return then if cond else other
    if t is TupleE:
        return tuple(_int(value_at(x, values)) for x in cast(TupleE, n).items)
    return _shaped(n, values)


def _compared(c: Cmp, values: Mapping[str, int | bool | str]) -> bool:
    x, y = value_at(c.left, values), value_at(c.right, values)
    kx, ky = _kind(x), _kind(y)
    if "shape" in (kx, ky) or (kx != ky and not {kx, ky} <= {"int", "bool"}):
        raise NotFolded
    if c.op in ("==", "!="):
        return (x == y) == (c.op == "==")
    if kx == "str":
        raise NotFolded
    return _ORDER[c.op](cast(int, x), cast(int, y))


_ORDER: dict[str, Callable[[int, int], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _shaped(n: Node, values: Mapping[str, int | bool | str]) -> Value:
    """``value_at`` of an index, slice or concatenation of shapes."""
    if isinstance(n, Index):
        base = value_at(n.base, values)
        if not isinstance(base, tuple) or not -len(base) <= n.index < len(base):
            raise NotFolded
        return base[n.index]
    if isinstance(n, SliceE):
        base = value_at(n.base, values)
        if not isinstance(base, tuple):
            raise NotFolded
        return base[n.lo:n.hi]
    if isinstance(n, Concat):
        left, right = value_at(n.left, values), value_at(n.right, values)
        if not isinstance(left, tuple) or not isinstance(right, tuple):
            raise NotFolded
        return left + right
    raise NotFolded  # a shape of an argument (bound only by ``bind``'s shapes), or an unknown node
