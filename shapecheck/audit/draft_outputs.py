"""The outputs of ``contract draft``'s symbolic trace: each output's shape, dtype and layout (or strides), a
data-dependent size's ``sizes`` range, and the requires the kernel's asserts give (``schema_draft`` traces; this
module writes what a finished trace says).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from ..errors import ExprError
from ..logic import expr as E
from .draft_paths import DraftPath
from .draft_samples import TENSOR_SIZE


@dataclass
class Traced:
    """What the symbolic trace of the sample case gave the draft."""

    outputs: list[str | None] = field(default_factory=list)  # None: unspecified
    requires: list[tuple[str, str]] = field(default_factory=list)  # (expression, why)
    todos: list[str] = field(default_factory=list)
    # per output: what else the trace says of it (dtype, layout or strides, data-dependent sizes), or None
    tables: list[dict[str, Any] | None] = field(default_factory=list)
    # every case traced: a path per group of cases with the same outputs (the first one's lists are ``outputs``,
    # ``tables`` and ``todos`` themselves); fewer than two: one path, ``outputs``
    paths: list[DraftPath] = field(default_factory=list)
    # the sides of the sample case where the kernel branches on its sizes (``draft_sides``): (when, outputs,
    # tables, TODOs) each, the sample's side first (its lists are ``outputs`` and ``tables`` themselves); empty
    # where the case has one side
    sides: list[tuple[str, list[str | None], list[dict[str, Any] | None], list[str]]] = field(default_factory=list)
    regions: list[tuple[str, list[E.Node]]] = field(default_factory=list)  # per side: its when, what it assumed
    flat: bool = False  # more sides than a draft writes: the cases after it are drafted on their sample sides
    rejects: list[Any] = field(default_factory=list)  # draft_rejects.DraftReject: regions both kernels refuse


def is_dim_equality(node: E.Node) -> bool:
    return isinstance(node, E.Cmp) and node.op == "==" and bool(E.free_names(node.left)) \
        and bool(E.free_names(node.right))


def finish(out: Traced, t: Any, contract: Any, where: Any) -> None:
    from ..trace.run import OutputKind, broadcast_relation, demanded, exprs_dims

    fresh = {name: (lo, hi) for name, lo, hi in t.fresh}
    for o in t.outputs:
        if o.kind is OutputKind.TENSOR:
            shape, sizes = named_sizes(o.shape, contract, fresh, out, fresh_bounds(t.fresh_facts))
            out.outputs.append(shown_shape(shape))
            out.tables.append(table(o, shape, sizes, contract))
            continue
        if o.kind is OutputKind.INT and not (E.free_names(o.scalar) - set(contract.dim_names)):
            out.outputs.append(o.formula)
            out.tables.append(None)
            continue
        out.outputs.append(None)
        out.tables.append(None)
        made = o.exprs is not None and not exprs_dims(o.exprs) <= set(contract.dim_names)
        what = "a data-dependent size the kernel made (no dim can name it)" if made else \
            "a size outside the contract language" if o.kind is OutputKind.UNSUPPORTED else f"a {o.text}"
        out.todos.append(f"output {len(out.outputs) - 1} is {what}: left unspecified")
    seen = {r for r, _ in out.requires}
    for a in t.asserts:  # torch's broadcasting: the sizes equal or either of them 1 (its corners hold at 1)
        if a.broadcast and isinstance(a.expr, E.Cmp) and a.expr.op == "==":
            text = E.to_text(broadcast_relation(E.parse(ordered(a.expr, contract))))
            if text not in seen:
                seen.add(text)
                out.requires.append((text, f"torch's broadcasting needs these equal or one of them 1{where(a.loc)}"))
    facts = [(part, where(a.loc)) for a in t.asserts if a.expr is not None and not a.broadcast
             for part in conjuncts(demanded(a, t.asserts) or a.expr)]
    facts += [(E.compare("==", E.Var(n), node), "") for n, node, _ in t.replacements if node is not None]
    for node, at in facts:
        text = ordered(node, contract)
        if text not in seen and not holds_at_corners(node, contract):
            seen.add(text)
            why = f"the kernel needs these equal{at}" if is_dim_equality(node) else f"the kernel asserts this{at}"
            out.requires.append((text, why))


def shown_shape(shape: E.Node) -> str:
    from ..logic.simplify import shown

    return shown(shape)


def fresh_bounds(facts: tuple[E.Node | None, ...]) -> dict[str, tuple[list[E.Node], list[E.Node]]]:
    """What the kernel asserted of each data-dependent size in terms of the dims: ``?u2`` -> (its lower bounds,
    its upper bounds), from facts ``minlength <= ?u2``, ``?u2 <= N`` (either way round, ``<`` too)."""
    out: dict[str, tuple[list[E.Node], list[E.Node]]] = {}
    flip = {"<=": ">=", "<": ">", ">=": "<=", ">": "<", "==": "=="}
    for fact in facts:
        for part in conjuncts(fact) if fact is not None else []:
            if not isinstance(part, E.Cmp) or part.op not in flip:
                continue
            for var, op, other in ((part.left, part.op, part.right), (part.right, flip[part.op], part.left)):
                if not isinstance(var, E.Var) or not var.name.startswith("?") \
                        or any(n.startswith("?") for n in E.free_names(other)):
                    continue
                lows, highs = out.setdefault(var.name, ([], []))
                if op in (">=", "=="):
                    lows.append(other)
                if op == ">":
                    lows.append(E.arith("+", other, E.Const(1)))
                if op in ("<=", "=="):
                    highs.append(other)
                if op == "<":
                    highs.append(E.arith("-", other, E.Const(1)))
    return out


def named_sizes(shape: E.TupleE, contract: Any, fresh: dict[str, tuple], out: Traced,
                 stated: dict[str, tuple[list[E.Node], list[E.Node]]] | None = None) -> tuple[E.TupleE, dict]:
    """The shape with each data-dependent size (``?u2``, which no contract can name) renamed ``n``, ``n_1``, ...,
    and the ``sizes`` table entry of each: the fake's range for it (min 0 and the int32 top where it states
    none, with a TODO: the runtime's range is the contract's to state), narrowed by the bounds the kernel
    asserts in the dims (``stated``: ``torch._check(n <= x.shape[0])`` gives ``max = "min(2147483647, N)"``)."""
    made = sorted(n for n in E.free_names(shape) if n.startswith("?"))
    if not made:
        return shape, {}
    taken = set(contract.dim_names) | {n for n, _ in contract.choices} | {a.name for a in contract.args}
    known = set(contract.dim_names) | {n for n, _ in contract.choices}
    renames, sizes = {}, {}
    for m in made:
        name = next(c for c in ("n", *(f"n_{i}" for i in range(1, 100))) if c not in taken and c not in renames.values())
        renames[m] = name
        lo, hi = fresh.get(m, (None, None))
        lows, highs = (stated or {}).get(m, ([], []))
        low = [E.Const(lo if lo is not None else 0), *(x for x in lows if E.free_names(x) <= known)]
        high = [E.Const(hi if hi is not None else 2**31 - 1), *(x for x in highs if E.free_names(x) <= known)]
        sizes[name] = (bound("max", low), bound("min", high))
        out.todos.append(f"the output size {name} depends on the tensors' data: its range in `sizes` is the fake's "
                         "(or 0 to 2**31-1); give the runtime's")
    return E.bind(shape, {m: E.Var(n) for m, n in renames.items()}), sizes


def bound(fn: str, items: list[E.Node]) -> str:
    """``max(1, minlength)``: the tightest of a size's bounds, as contract text; one bound alone as it is."""
    texts = list(dict.fromkeys(E.to_text(x) for x in items))
    return texts[0] if len(texts) == 1 else f"{fn}({', '.join(texts)})"


def table(o: Any, shape: E.TupleE, sizes: dict, contract: Any) -> dict[str, Any]:
    """An output's dtype and layout as the trace gives them: ``contiguous`` where its strides are a contiguous
    tensor's at the sample sizes, else its strides where they translate."""
    table: dict[str, Any] = {"dtype": o.dtype}
    if o.strides is not None and not sizes:
        # two points, the dims rising and falling: an output dim that is 1 at one (``ceil(A0 / step)`` with the
        # step past A0) hides its stride there
        names = contract.dim_names
        points = [{d: TENSOR_SIZE + i for i, d in enumerate(names)},
                  {d: TENSOR_SIZE + len(names) - i for i, d in enumerate(names)}]
        try:
            contiguous = all(contiguous_at(shape, o.strides, point) for point in points)
        except Exception:  # noqa: BLE001 - undefined at a sample point: no layout stated
            return table
        if contiguous:
            table["layout"] = "contiguous"
        else:
            table["strides"] = shown_shape(E.TupleE(tuple(o.strides)))
    if sizes:
        table["sizes"] = sizes
    return table


def contiguous_at(shape: E.TupleE, strides: Any, point: dict[str, int]) -> bool:
    """Whether the strides are a contiguous tensor's at ``point`` (where a dim is over 1: the others' strides
    do not matter)."""
    dims = [E.evaluate(x, point) for x in shape.items]
    have = [E.evaluate(x, point) for x in strides]
    expected, acc = [], 1
    for d in reversed(dims):
        expected.insert(0, acc)
        acc *= max(int(d), 1)
    return all(s == e for s, e, d in zip(have, expected, dims) if d > 1)


def conjuncts(node: E.Node) -> list[E.Node]:
    return [p for a in node.args for p in conjuncts(a)] if isinstance(node, E.And) else [node]


def ordered(node: E.Node, contract: Any) -> str:
    """``a == b`` with the dim declared first on the left (``A1 == B0``, not ``B0 == A1``)."""
    if isinstance(node, E.Cmp) and node.op == "==" and isinstance(node.left, E.Var) and isinstance(node.right, E.Var):
        order = contract.dim_names
        if node.left.name in order and node.right.name in order \
                and order.index(node.right.name) < order.index(node.left.name):
            return f"{node.right.name} == {node.left.name}"
    return E.to_text(node)


def holds_at_corners(node: E.Node, contract: Any) -> bool:
    """Whether ``node`` holds at every corner of its dims' ranges: a bound the ranges already give (left out of
    the draft to keep it short; verify proves what is left either way)."""
    dims = sorted(E.free_names(node))
    if len(dims) > 10 or any(d not in contract.dim_names for d in dims):
        return False
    bounds = [(contract.dim(d).min, contract.dim(d).max) for d in dims]
    try:
        return all(E.evaluate(node, dict(zip(dims, corner))) for corner in itertools.product(*bounds))
    except (ExprError, ArithmeticError):  # undefined at a corner (a division by a dim that may be 0)
        return False
