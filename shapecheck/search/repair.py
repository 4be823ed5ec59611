"""Repair of a drawn point: the simple atoms of a condition (one dim against a constant, two dims, a dim's allowed
values, divisibility, and disjunctions of those), applied until they hold, and the size bound's products
lowered. What the atoms cannot settle is left to z3 (``plan.Plan.complete``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..logic import expr as E
from ..logic.compiled import OPS, compiled, fast_holds


def atoms(node: E.Node) -> list[tuple]:
    """Repair rules for a condition's conjuncts: one dim against a constant, two dims, a dim's allowed values,
    divisibility, and disjunctions of those (negations are pushed inwards). Other conjuncts are left to z3."""
    out: list[tuple] = []
    for a in (node.args if isinstance(node, E.And) else (node,)):
        if isinstance(a, E.Not):
            inner = a.operand
            if isinstance(inner, E.Not):
                out += atoms(inner.operand)
            elif isinstance(inner, E.Cmp):
                out += atoms(E.negate(inner))
            elif isinstance(inner, E.Or):
                out += atoms(E.conj([E.negate(x) if isinstance(x, E.Cmp) else E.Not(x) for x in inner.args]))
            elif isinstance(inner, E.And):
                out += atoms(E.disj([E.negate(x) if isinstance(x, E.Cmp) else E.Not(x) for x in inner.args]))
        elif isinstance(a, E.Cmp):
            a = E.normalize_cmp(a)
            left, right = a.left, a.right
            if isinstance(left, E.Var) and isinstance(right, E.Const) and _is_int(right.value):
                out.append(("const", a.op, left.name, right.value))
            elif isinstance(left, E.Var) and isinstance(right, E.Var):
                out.append(("dims", a.op, left.name, right.name))
            elif (a.op == "==" and right == E.Const(0) and isinstance(left, E.Arith) and left.op == "%"
                  and isinstance(left.left, E.Var) and isinstance(left.right, E.Var)):
                out.append(("mod", left.left.name, left.right.name))
        elif isinstance(a, E.Or):
            same = {x.left for x in a.args if isinstance(x, E.Cmp)}
            if len(same) == 1 and all(isinstance(x, E.Cmp) and x.op == "==" and isinstance(x.left, E.Var)
                                      and isinstance(x.right, E.Const) and _is_int(x.right.value) for x in a.args):
                out.append(("in", a.args[0].left.name, tuple(sorted(x.right.value for x in a.args))))
            else:
                alternatives = tuple(alt for alt in (tuple(atoms(x)) for x in a.args) if alt)
                if alternatives:
                    out.append(("or", a, alternatives))
    return out


def pinned(atoms: Iterable[tuple]) -> set[str]:
    """Dims a constant decides (``L <= 8``, ``E in (64, 96)``): two-dim rules move the other dim."""
    return {a[2] for a in atoms if a[0] == "const"} | {a[1] for a in atoms if a[0] == "in"}


_STEP = {"<=": 0, "<": -1, ">=": 0, ">": 1, "==": 0}
_FLIP = {"<=": ">=", "<": ">", ">=": "<=", ">": "<", "==": "==", "!=": "!="}


def apply(atom: tuple, point: dict[str, int], rank: Mapping[str, int]) -> bool:
    """Change dims so that the rule holds; between two dims the one drawn later (higher rank) moves."""
    kind = atom[0]
    if kind == "or":
        _, node, alternatives = atom
        if fast_holds(node, point):
            return False
        for a in alternatives[0]:
            apply(a, point, rank)
        return True
    if kind == "in":
        _, name, allowed = atom
        if name not in point or point[name] in allowed:
            return False
        point[name] = min(allowed, key=lambda v: (abs(v - point[name]), v))
        return True
    if kind == "mod":
        _, a, b = atom
        if a not in point or b not in point or (point[b] != 0 and point[a] % point[b] == 0):
            return False
        if point[b] == 0:
            point[b] = 1
        elif rank.get(a, 0) < rank.get(b, 0):  # keep a: b becomes the largest divisor of a not above it
            point[b] = max(x for x in range(1, min(point[b], abs(point[a]) or 1) + 1) if point[a] % x == 0)
        else:  # keep b: a becomes the nearest multiple of b
            point[a] = point[b] * max(1, round(point[a] / point[b]))
        return True
    _, op, a, b = atom
    if kind == "const":
        if a not in point or OPS[op](point[a], b):
            return False
        point[a] = b + 1 if op == "!=" else b + _STEP[op]
        return True
    if a not in point or b not in point or OPS[op](point[a], point[b]):
        return False
    if rank.get(a, 0) < rank.get(b, 0):  # a has priority: move b
        a, b, op = b, a, _FLIP[op]
    point[a] = point[b] + 1 if op == "!=" else point[b] + _STEP[op]
    return True


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def repair(point: dict[str, int], order: tuple[str, ...], rules: tuple[tuple, ...],
           sizes: Iterable[tuple[E.Node, tuple[str, ...]]], lows: Mapping[str, int], caps: Mapping[str, int],
           max_elements: int) -> dict[str, int]:
    """Apply ``rules`` (``atoms`` of domain /\\ when) and lower the products in ``sizes`` (``numel <= bound``
    conditions with the dims they multiply) until nothing changes (at most 4 rounds); dims earlier in ``order``
    win. Then clamp every dim of the point to [lows, caps]."""
    rank = {d: i for i, d in enumerate(order)}
    for d in pinned(rules):
        rank[d] = -1  # decided by a constant: move the other dim of a two-dim rule
    for _ in range(4):
        changed = False
        for cond, factors in sizes:
            changed |= _shrink(cond, factors, point, rank, lows, max_elements)
        for atom in rules:
            changed |= apply(atom, point, rank)
        if not changed:
            break
    for d in point:
        point[d] = min(max(point[d], lows[d]), caps[d])
    return point


def _shrink(cond: E.Node, factors: tuple[str, ...], point: dict[str, int], rank: Mapping[str, int],
            lows: Mapping[str, int], max_elements: int) -> bool:
    """Lower the factors of a product over the size bound, those drawn last first."""
    if fast_holds(cond, point):
        return False
    product = compiled(cond.left)
    for d in sorted(factors, key=lambda x: -rank.get(x, 0)):
        total = product(point)
        if total <= max_elements:
            break
        others = max(total // max(point[d], 1), 1)
        point[d] = max(lows[d], max_elements // others)
    return True
