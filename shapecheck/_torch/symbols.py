"""The compatibility layer, part 7: the sizes of a trace as torch's ShapeEnv makes them (unbacked symbols, a
positive one where the size's least value is at least 1), the value of a size where it has one, and contract
expressions evaluated over sizes (``torch._check`` facts, int arguments made of dims)."""

from __future__ import annotations

from typing import Any

import sympy
import torch

from ..logic import expr as E


def unbacked_size(env: Any, positive: bool) -> torch.SymInt:
    """A fresh unbacked size. ``positive`` (its least value is at least 1): its sympy symbol says so, as torch's
    own backed sizes do, so that torch's layout arithmetic simplifies as it is made (``Max(1, u)`` in the strides
    of a contiguous tensor is ``u``): views and inputs cost about a fifth less. torch gives an unbacked symbol
    only ``integer=True``; the name that makes it is swapped for the one call."""
    import torch.fx.experimental.symbolic_shapes as sh

    make = getattr(sh, "make_symbol", None)
    if not positive or make is None:
        return env.create_unbacked_symint()

    def positive_symbol(prefix: Any, idx: int, **kwargs: Any) -> sympy.Symbol:
        return make(prefix, idx, **{**kwargs, "positive": True})

    sh.make_symbol = positive_symbol
    try:
        return env.create_unbacked_symint()
    finally:
        sh.make_symbol = make


def constant_of(x: Any) -> int | None:
    """An int, or a SymInt whose value is known (a constant), as an int; None for a size the data decides."""
    if isinstance(x, int):
        return x
    if isinstance(x, torch.SymInt):
        return x.node.maybe_as_int()
    return None


def sym_value(node: E.Node, values: dict[str, Any]) -> Any:
    """An int (SymInt) or a list of them, for an int or ints argument built from dims."""
    if isinstance(node, E.TupleE):
        return [eval_sym(i, values) for i in node.items]
    return eval_sym(node, values)


def eval_sym(node: E.Node, values: dict[str, Any]) -> Any:
    """Evaluate an expression over SymInts with Python operators: the result is a SymInt or SymBool."""
    if isinstance(node, E.Const):
        return node.value
    if isinstance(node, E.Var):
        return values[node.name]
    if isinstance(node, E.Arith):
        a, b = eval_sym(node.left, values), eval_sym(node.right, values)
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "//": lambda: a // b,
                "%": lambda: a % b}[node.op]()
    if isinstance(node, E.Neg):
        return -eval_sym(node.operand, values)
    if isinstance(node, E.Call):
        args = [eval_sym(a, values) for a in node.args]
        out = args[0]
        for a in args[1:]:
            out = torch.sym_min(out, a) if node.fn == "min" else torch.sym_max(out, a)
        return out
    if isinstance(node, E.Cmp):
        a, b = eval_sym(node.left, values), eval_sym(node.right, values)
        return {"==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b, "<=": lambda: a <= b,
                ">": lambda: a > b, ">=": lambda: a >= b}[node.op]()
    if isinstance(node, E.Not):
        return torch.sym_not(eval_sym(node.operand, values))
    if isinstance(node, E.Ite):
        return torch.sym_ite(eval_sym(node.cond, values), eval_sym(node.then, values),
                             eval_sym(node.other, values))
    from torch.fx.experimental.symbolic_shapes import sym_and, sym_or

    if isinstance(node, E.And):
        return sym_and(*[eval_sym(a, values) for a in node.args])
    if isinstance(node, E.Or):
        return sym_or(*[eval_sym(a, values) for a in node.args])
    raise TypeError(f"cannot evaluate {node!r} over SymInts")


def symbol_of(x: Any) -> Any:
    """The sympy expression behind a SymInt/SymBool, or the int itself."""
    if isinstance(x, (torch.SymInt, torch.SymBool)):
        return x.node.expr
    return x
