"""Interesting values of dims: for each integer constant a condition compares a dim with, the constant and its
neighbours (``c - 1, c, c + 1``). Both the Hypothesis plan (``search.plan.Plan``) and ``ref check``'s points aim at them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hypothesis.errors import InvalidArgument

from ..contract.model import Contract
from ..errors import ExprError
from ..logic import expr as E


def harvest(node: E.Node) -> dict[str, set[int]]:
    """Interesting values per dim: ``c - 1, c, c + 1`` for each integer constant a comparison puts it with."""
    out: dict[str, set[int]] = {}

    def consts(n: E.Node) -> list[int]:
        if isinstance(n, E.Const):
            v = n.value
            return [v] if isinstance(v, int) and not isinstance(v, bool) else []
        return [c for child in E.children(n) for c in consts(child)]

    def walk(n: E.Node) -> None:
        if isinstance(n, E.Cmp):
            names = E.free_names(n)
            for c in consts(n):
                for name in names:
                    out.setdefault(name, set()).update((c - 1, c, c + 1))
            return
        for child in E.children(n):
            walk(child)

    walk(node)
    return out


def interesting_values(node: E.Node, dims: Mapping[str, Any], cap: int | None = None) -> dict[str, set[int]]:
    """For each dim of ``dims`` (name -> a dim with ``min`` and ``max``): its least value and what ``harvest``
    finds for it in ``node``, within the dim's range (and at most ``cap``)."""
    found = harvest(node)
    return {name: {d.min} | {v for v in found.get(name, ()) if d.min <= v <= d.max and (cap is None or v <= cap)}
            for name, d in dims.items()}


def extra_constants(contract: Contract, constants: Iterable[int | str]) -> tuple[set[int], dict[str, set[int]]]:
    """More interesting values: integers (for every dim) and the ``harvest`` of guard texts (for the dims they
    name), e.g. the guards ``verify`` reported. Texts that are not conditions over dims are skipped."""
    every: set[int] = set()
    by_dim: dict[str, set[int]] = {}
    for c in constants:
        if isinstance(c, int) and not isinstance(c, bool):
            every.add(c)
            continue
        if not isinstance(c, str):
            raise InvalidArgument(f"constants: expected integers or guard texts, found {c!r}")
        try:
            node = E.parse(c)
        except ExprError:
            continue  # not a guard over dims (e.g. an output description): nothing to harvest
        for name, values in harvest(node).items():
            if name in contract.dim_names:
                by_dim.setdefault(name, set()).update(values)
    return every, by_dim
