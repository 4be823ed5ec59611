"""The dim-expression language of contracts: text -> a small typed tree -> text, binding and evaluation.

The language: names, integers, ``+ - * // %``, ``min``/``max``, comparisons, ``and/or/not``, ``x in (...)``,
``a if cond else b``, string and boolean literals (case values: ``mask == 'bool'``), and for shapes: tuples
``(B, H, L, E)``, ``query.shape``, indexing/slicing with integer constants and ``+`` to concatenate. Text (ASCII)
is parsed with :mod:`ast` into a tree walked against a whitelist: nothing is evaluated by Python, and sympy
never sees a raw string.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from ..errors import ExprError
from ..limits import CONST_BITS, EXPR_CHARS, EXPR_DEPTH, INT64_MAX, INT64_MIN, int_text
from .nodes import (
    FALSE,
    TRUE,
    And,
    Arith,
    Call,
    Cmp,
    Concat,
    Const,
    Index,
    Ite,
    Neg,
    Node,
    Not,
    NotFolded,
    Or,
    ShapeOf,
    SliceE,
    TupleE,
    Value,
    Var,
    value_at,
)

# The tree (``logic.nodes``), re-exported: ``E.Const``, ``E.TRUE``...
_ARITH = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}
_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

# ---------------------------------------------------------------------------------------------------------
# Parsing


def parse(text: str) -> Node:
    """Parse contract expression text into a tree. Raises :class:`ExprError` on anything outside the language
    or over the limits (``limits.EXPR_CHARS`` characters, ``limits.EXPR_DEPTH`` levels, int64 literals)."""
    if not isinstance(text, str):
        raise ExprError(repr(text), "expected an expression string")
    if len(text) > EXPR_CHARS:
        raise ExprError(text[:40] + "...", f"an expression longer than {EXPR_CHARS} characters")
    if not text.strip():
        raise ExprError(text, "an empty expression")
    bad = next((i for i, c in enumerate(text) if not c.isascii() or c == "#"), -1)  # Python folds 'Ｎ' into 'N'
    if bad >= 0:  # and drops what follows a '#' as a comment: neither is what the file says
        raise ExprError(text, f"a {'#' if text[bad] == '#' else 'character outside ASCII'} at column {bad + 1}: "
                              "contract expressions are ASCII, with no comments")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise ExprError(text, f"syntax error{f' at column {err.offset}' if err.offset else ''}: {err.msg}") from None
    except ValueError:  # Python 3.11: a null character
        raise ExprError(text, "a null character") from None
    except (RecursionError, MemoryError):  # Python's own parser gives up on deep nesting
        raise ExprError(text, f"nested deeper than {EXPR_DEPTH} levels") from None
    return _Parser(text).visit(tree.body)


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.depth = 0

    def fail(self, node: ast.AST, what: str) -> ExprError:
        col = getattr(node, "col_offset", None)
        where = f" at column {col + 1}" if col is not None else ""
        return ExprError(self.text, f"{what}{where} is not allowed in a contract expression")

    def visit(self, node: ast.AST) -> Node:
        self.depth += 1
        try:
            if self.depth > EXPR_DEPTH:
                raise ExprError(self.text, f"nested deeper than {EXPR_DEPTH} levels")
            return self.node(node)
        finally:
            self.depth -= 1

    def node(self, node: ast.AST) -> Node:
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, int) and not isinstance(v, bool) and not INT64_MIN <= v <= INT64_MAX:
                raise ExprError(self.text, f"the integer {int_text(v)} is outside int64")
            if isinstance(v, bool) or isinstance(v, int) or isinstance(v, str):
                return Const(v)
            raise self.fail(node, f"the constant {v!r}")
        if isinstance(node, ast.Name):
            if node.id in ("true", "True"):
                return TRUE
            if node.id in ("false", "False"):
                return FALSE
            return Var(node.id)
        if isinstance(node, ast.BinOp):
            op = _ARITH.get(type(node.op))
            if op is None:
                raise self.fail(node, f"the operator {type(node.op).__name__}")
            left, right = self.visit(node.left), self.visit(node.right)
            if op == "+" and (_is_shape(left) or _is_shape(right)):
                return Concat(left, right)
            return Arith(op, left, right)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                literal = node.operand
                if isinstance(literal, ast.Constant) and type(literal.value) is int and literal.value == -INT64_MIN:
                    return Const(INT64_MIN)  # int64's least value, written as the literal it is
                inner = self.visit(node.operand)
                if isinstance(inner, Const) and isinstance(inner.value, int) and not isinstance(inner.value, bool):
                    if -inner.value > INT64_MAX:
                        raise ExprError(self.text, f"the integer {int_text(-inner.value)} is outside int64")
                    return Const(-inner.value)
                return Neg(inner)
            if isinstance(node.op, ast.UAdd):
                return self.visit(node.operand)
            if isinstance(node.op, ast.Not):
                return Not(self.visit(node.operand))
            raise self.fail(node, "the unary operator ~")
        if isinstance(node, ast.BoolOp):
            args = tuple(self.visit(v) for v in node.values)
            return And(args) if isinstance(node.op, ast.And) else Or(args)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in ("min", "max"):
                name = f"{node.func.id}()" if isinstance(node.func, ast.Name) else "a method or an expression"
                raise self.fail(node, f"calling {name} (only min() and max() can be called)")
            if node.keywords:
                raise self.fail(node, f"the keyword argument {node.keywords[0].arg or '**'}= of {node.func.id}()")
            if len(node.args) < 2 or any(isinstance(a, ast.Starred) for a in node.args):
                raise self.fail(node, f"{node.func.id}() of fewer than two plain arguments")
            return Call(node.func.id, tuple(self.visit(a) for a in node.args))
        if isinstance(node, ast.IfExp):
            return Ite(self.visit(node.test), self.visit(node.body), self.visit(node.orelse))
        if isinstance(node, ast.Tuple):
            return TupleE(tuple(self.visit(e) for e in node.elts))
        if isinstance(node, ast.Attribute):
            if node.attr == "shape" and isinstance(node.value, ast.Name):
                return ShapeOf(node.value.id)
            raise self.fail(node, f"the attribute .{node.attr}")
        if isinstance(node, ast.Subscript):
            base = self.visit(node.value)
            sl = node.slice
            if isinstance(sl, ast.Slice):
                if sl.step is not None:
                    raise self.fail(node, "a slice step")
                return SliceE(base, self.int_const(sl.lower), self.int_const(sl.upper))
            idx = self.int_const(sl)
            if idx is None:
                raise self.fail(node, "an empty index")
            return Index(base, idx)
        raise self.fail(node, f"the syntax {type(node).__name__}")

    def int_const(self, node: ast.AST | None) -> int | None:
        if node is None:
            return None
        value = self.visit(node)
        if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
            return value.value
        raise self.fail(node, "an index that is not an integer constant")

    def compare(self, node: ast.Compare) -> Node:
        parts: list[Node] = []
        left = self.visit(node.left)
        for op, comp in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(comp, (ast.Tuple, ast.List, ast.Set)) or not comp.elts:
                    raise self.fail(comp, "'in' with anything but a non-empty literal tuple, list or set")
                items = tuple(self.visit(e) for e in comp.elts)
                member: Node = Or(tuple(Cmp("==", left, it) for it in items))
                parts.append(Not(member) if isinstance(op, ast.NotIn) else member)
                left = TupleE(items)
                continue
            sym = _CMP.get(type(op))
            if sym is None:
                raise self.fail(node, f"the comparison {type(op).__name__}")
            right = self.visit(comp)
            parts.append(Cmp(sym, left, right))
            left = right
        return parts[0] if len(parts) == 1 else And(tuple(parts))


def _is_shape(node: Node) -> bool:
    return isinstance(node, (TupleE, ShapeOf, SliceE, Concat))


def free_names(node: Node) -> set[str]:
    """Names (Var) and argument names (``x.shape``) used by an expression."""
    out: set[str] = set()

    def walk(n: Node) -> None:
        if isinstance(n, Var):
            out.add(n.name)
        elif isinstance(n, ShapeOf):
            out.add(n.arg)
        for child in children(n):
            walk(child)

    walk(node)
    return out


def children(n: Node) -> tuple[Node, ...]:
    if isinstance(n, (Arith, Cmp, Concat)):
        return (n.left, n.right)
    if isinstance(n, (Neg, Not)):
        return (n.operand,)
    if isinstance(n, (Call, And, Or)):
        return n.args
    if isinstance(n, TupleE):
        return n.items
    if isinstance(n, (Index, SliceE)):
        return (n.base,)
    if isinstance(n, Ite):
        return (n.cond, n.then, n.other)
    return ()


# ---------------------------------------------------------------------------------------------------------
# Binding: substitute case values, let-bindings and argument shapes, and fold constants.


def bind(node: Node, values: Mapping[str, Node], shapes: Mapping[str, TupleE] | None = None) -> Node:
    """Substitute ``values`` (name -> node) and ``shapes`` (arg -> tuple) into ``node`` and fold constants.

    Names not in ``values`` stay symbolic (they are dims). Raises ExprError on type errors.
    """
    shapes = shapes or {}

    def go(n: Node) -> Node:
        if isinstance(n, Var):
            return values.get(n.name, n)
        if isinstance(n, Const):
            return n
        if isinstance(n, ShapeOf):
            if n.arg not in shapes:
                raise ExprError(to_text(n), f"{n.arg!r} is not a tensor argument present in this case")
            return shapes[n.arg]
        if isinstance(n, TupleE):
            items = tuple(go(i) for i in n.items)
            for it in items:
                _want_int(it, n)
            return TupleE(items)
        if isinstance(n, Index):
            base = _want_shape(go(n.base), n)
            if not -len(base.items) <= n.index < len(base.items):
                raise ExprError(to_text(n), f"index {n.index} out of range for a shape of rank {len(base.items)}")
            return base.items[n.index]
        if isinstance(n, SliceE):
            base = _want_shape(go(n.base), n)
            return TupleE(base.items[n.lo:n.hi])
        if isinstance(n, Concat):
            return TupleE(_want_shape(go(n.left), n).items + _want_shape(go(n.right), n).items)
        if isinstance(n, Arith):
            return arith(n.op, _want_int(go(n.left), n), _want_int(go(n.right), n))
        if isinstance(n, Neg):
            return arith("-", Const(0), _want_int(go(n.operand), n))
        if isinstance(n, Call):
            args = tuple(_want_int(go(a), n) for a in n.args)
            consts = [a.value for a in args if isinstance(a, Const) and isinstance(a.value, int)]
            if len(consts) == len(args):
                pick = min if n.fn == "min" else max
                return Const(pick(consts))
            return Call(n.fn, args)
        if isinstance(n, Cmp):
            return compare(n.op, go(n.left), go(n.right), n)
        if isinstance(n, Not):
            return negate(_want_bool(go(n.operand), n))
        if isinstance(n, And):
            return conj([_want_bool(go(a), n) for a in n.args])
        if isinstance(n, Or):
            return disj([_want_bool(go(a), n) for a in n.args])
        if isinstance(n, Ite):
            cond, then, other = _want_bool(go(n.cond), n), go(n.then), go(n.other)
            if kind_of(then) != kind_of(other):
                raise ExprError(to_text(n), f"the two sides differ in kind: {to_text(then)}, {to_text(other)}")
            if cond == TRUE or then == other:
                return then
            return other if cond == FALSE else Ite(cond, then, other)
        raise ExprError(to_text(n), "unknown expression node")

    return go(node)


def kind_of(n: Node) -> str:
    if isinstance(n, Const):
        if isinstance(n.value, bool):
            return "bool"
        return "str" if isinstance(n.value, str) else "int"
    if isinstance(n, (Var, Arith, Neg, Call)):
        return "int"
    if isinstance(n, Ite):
        return kind_of(n.then)
    if isinstance(n, TupleE):
        return "shape"
    return "bool"


def _want_int(n: Node, ctx: Node) -> Node:
    if kind_of(n) != "int":
        raise ExprError(to_text(ctx), f"expected a number, found {to_text(n)}")
    return n


def _want_bool(n: Node, ctx: Node) -> Node:
    if kind_of(n) != "bool":
        raise ExprError(to_text(ctx), f"expected a condition, found {to_text(n)}")
    return n


def _want_shape(n: Node, ctx: Node) -> TupleE:
    if not isinstance(n, TupleE):
        raise ExprError(to_text(ctx), f"expected a shape, found {to_text(n)}")
    return n


def arith(op: str, a: Node, b: Node) -> Node:
    """Build ``a op b`` with constant folding (Python semantics: floor division and modulo). A divisor that is
    the constant 0 (``C * r * r // 0``, or ``% (r - 1)`` once the choice r = 1 is bound) is an error here, when
    the expression is parsed or bound (``contract check``), not a crash when a case is built."""
    if op in ("//", "%") and b == Const(0):
        text = f"({to_text(a)}) {op} 0" if isinstance(a, Arith) else f"{to_text(a)} {op} 0"
        raise ExprError(text, f"division by zero: {text if len(text) <= 80 else '... ' + op + ' 0'}")
    if isinstance(a, Const) and isinstance(b, Const) and isinstance(a.value, int) and isinstance(b.value, int):
        x, y = a.value, b.value
        value = {"+": x + y, "-": x - y, "*": x * y, "//": x // y if y else 0, "%": x % y if y else 0}[op]
        if value.bit_length() > CONST_BITS:
            raise ExprError(f"{int_text(x)} {op} {int_text(y)}", f"a number beyond 2**{CONST_BITS} (the limit)")
        return Const(value)
    if (op in "+-" and b == Const(0)) or (op in ("*", "//") and b == Const(1)):
        return a
    if (op == "+" and a == Const(0)) or (op == "*" and a == Const(1)):
        return b
    return Arith(op, a, b)


def compare(op: str, a: Node, b: Node, ctx: Node | None = None) -> Node:
    ka, kb = kind_of(a), kind_of(b)
    if ka == "shape" or kb == "shape":
        raise ExprError(to_text(ctx or Cmp(op, a, b)), "shapes cannot be compared")
    if ka != kb and not ({ka, kb} <= {"int", "bool"}):
        raise ExprError(to_text(ctx or Cmp(op, a, b)), f"cannot compare {to_text(a)} with {to_text(b)}")
    if a == b and ka != "str":
        return Const(op in ("==", "<=", ">="))
    if isinstance(a, Const) and isinstance(b, Const):
        x, y = a.value, b.value
        if op in ("==", "!="):
            return Const((x == y) == (op == "=="))
        if isinstance(x, str) or isinstance(y, str):
            raise ExprError(to_text(ctx or Cmp(op, a, b)), "strings can only be compared with == or !=")
        return Const({"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op])
    return Cmp(op, a, b)


def negate(n: Node) -> Node:
    if isinstance(n, Const):
        return Const(not n.value)
    if isinstance(n, Not):
        return n.operand
    if isinstance(n, Cmp):
        return Cmp(_NEGATED[n.op], n.left, n.right)
    return Not(n)


def conj(args: list[Node] | tuple[Node, ...]) -> Node:
    flat: list[Node] = []
    for a in args:
        if a == TRUE:
            continue
        if a == FALSE:
            return FALSE
        for x in (a.args if isinstance(a, And) else (a,)):
            if x not in flat:
                flat.append(x)
    if not flat:
        return TRUE
    return flat[0] if len(flat) == 1 else And(tuple(flat))


def disj(args: list[Node] | tuple[Node, ...]) -> Node:
    flat: list[Node] = []
    for a in args:
        if a == FALSE:
            continue
        if a == TRUE:
            return TRUE
        for x in (a.args if isinstance(a, Or) else (a,)):
            if x not in flat:
                flat.append(x)
    if not flat:
        return FALSE
    return flat[0] if len(flat) == 1 else Or(tuple(flat))


def evaluate(node: Node, values: Mapping[str, int | bool | str]) -> Value:
    """Evaluate a bound expression at concrete dim values (Python semantics): ``evaluate_bound``'s value and
    errors, straight to Python values where every name has a value and every operand its kind (the common case,
    several times faster than binding), through ``evaluate_bound`` otherwise."""
    try:
        return value_at(node, values)
    except NotFolded:
        return evaluate_bound(node, values)


def evaluate_bound(node: Node, values: Mapping[str, int | bool | str]) -> Value:
    """``evaluate`` by binding ``values`` as constants and folding (the reference; it gives the errors)."""
    n = bind(node, {k: Const(v) for k, v in values.items()})
    if isinstance(n, TupleE):
        out = []
        for it in n.items:
            if not isinstance(it, Const):
                raise ExprError(to_text(node), f"unbound name in {to_text(it)}")
            out.append(it.value)
        return tuple(out)
    if not isinstance(n, Const):
        raise ExprError(to_text(node), f"unbound names {sorted(free_names(n))}")
    return n.value


# ---------------------------------------------------------------------------------------------------------
# Text

_PREC_OR, _PREC_AND, _PREC_NOT, _PREC_CMP, _PREC_ADD, _PREC_MUL, _PREC_NEG, _PREC_ATOM = range(8)


def to_text(node: Node) -> str:
    """Render a tree as contract-language text, with the fewest parentheses."""
    return _text(node)[0]


Node.render = to_text


def _wrap(item: tuple[str, int], need: int) -> str:
    text, prec = item
    return f"({text})" if prec < need else text


def _text(n: Node) -> tuple[str, int]:
    if isinstance(n, Const):
        if isinstance(n.value, bool):
            return ("true" if n.value else "false"), _PREC_ATOM
        if isinstance(n.value, str):
            return repr(n.value), _PREC_ATOM
        return str(n.value), (_PREC_ATOM if n.value >= 0 else _PREC_NEG)
    if isinstance(n, Var):
        return n.name, _PREC_ATOM
    if isinstance(n, Arith):
        prec = _PREC_ADD if n.op in "+-" else _PREC_MUL
        right = n.right
        op = n.op
        if op == "+" and isinstance(right, Const) and isinstance(right.value, int) and right.value < 0:
            op, right = "-", Const(-right.value)
        return f"{_wrap(_text(n.left), prec)} {op} {_wrap(_text(right), prec + 1)}", prec
    if isinstance(n, Neg):
        return "-" + _wrap(_text(n.operand), _PREC_NEG), _PREC_NEG
    if isinstance(n, Call):
        return f"{n.fn}({', '.join(to_text(a) for a in n.args)})", _PREC_ATOM
    if isinstance(n, Cmp):
        return f"{_wrap(_text(n.left), _PREC_ADD)} {n.op} {_wrap(_text(n.right), _PREC_ADD)}", _PREC_CMP
    if isinstance(n, Or):
        member = _as_membership(n)
        if member is not None:
            return member, _PREC_CMP
        return " or ".join(_wrap(_text(a), _PREC_NOT) for a in n.args), _PREC_OR
    if isinstance(n, And):
        return " and ".join(_wrap(_text(a), _PREC_NOT) for a in n.args), _PREC_AND
    if isinstance(n, Not):
        inner = n.operand
        if isinstance(inner, Or):
            member = _as_membership(inner)
            if member is not None:
                return member.replace(" in (", " not in (", 1), _PREC_CMP
        return "not " + _wrap(_text(inner), _PREC_NOT), _PREC_NOT
    if isinstance(n, TupleE):
        items = ", ".join(to_text(i) for i in n.items)
        return (f"({items},)" if len(n.items) == 1 else f"({items})"), _PREC_ATOM
    if isinstance(n, ShapeOf):
        return f"{n.arg}.shape", _PREC_ATOM
    if isinstance(n, Index):
        return f"{_wrap(_text(n.base), _PREC_ATOM)}[{n.index}]", _PREC_ATOM
    if isinstance(n, SliceE):
        lo = "" if n.lo is None else str(n.lo)
        hi = "" if n.hi is None else str(n.hi)
        return f"{_wrap(_text(n.base), _PREC_ATOM)}[{lo}:{hi}]", _PREC_ATOM
    if isinstance(n, Concat):
        return f"{to_text(n.left)} + {to_text(n.right)}", _PREC_ADD
    if isinstance(n, Ite):
        return f"({to_text(n.then)} if {to_text(n.cond)} else {to_text(n.other)})", _PREC_ATOM
    return repr(n), _PREC_ATOM


def _as_membership(n: Or) -> str | None:
    lefts = set()
    items = []
    for a in n.args:
        if not (isinstance(a, Cmp) and a.op == "==" and isinstance(a.right, Const)):
            return None
        lefts.add(a.left)
        items.append(to_text(a.right))
    return f"{_wrap(_text(next(iter(lefts))), _PREC_ADD)} in ({', '.join(items)})" if len(lefts) == 1 < len(items) else None


def normalize_cmp(n: Cmp) -> Cmp:
    """Put a constant on the right of a comparison (``8 < L`` -> ``L > 8``), for readable guards."""
    return Cmp(_FLIPPED[n.op], n.right, n.left) if isinstance(n.left, Const) and not isinstance(n.right, Const) else n
