"""A draft's paths from every case: the skeleton's cases (one per combination of its choices: ``keepdim``,
``out_int32``, an int argument's values) are each traced, their outputs compared, and the cases that return the
same outputs share a ``[[paths]]`` whose ``when`` names the choices that tell the groups apart
(``when = "keepdim"``, ``when = "not keepdim"``). A draft with one path for every case would fail ``verify``
on its own kernel wherever a choice changes an output's rank or dtype (kthvalue's ``keepdim``, searchsorted's
``out_int32``).

Only a case whose trace finished with no requires beyond the first case's can start a group of its own (a
branch it followed at the sample sizes is a ``# TODO`` on its path, as on the first one); any other case stays
with the first case's path, named in a ``# TODO``, and ``verify`` reports where it differs.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..rules import RuleCode

#: at most this many cases are traced for a draft (each costs one symbolic trace of the kernel)
MAX_CASES = 32


@dataclass
class DraftPath:
    """One ``[[paths]]`` of a draft: its ``when`` over the choices (``True`` for one path), its outputs (shape
    text or None: unspecified) and their tables (dtype, layout, data-dependent sizes), the cases it holds."""

    when: str
    outputs: list[str | None]
    tables: list[dict[str, Any] | None]
    cases: list[str] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)  # the trace's notes for a person (a branch it followed)


def signature(outputs: Sequence[str | None], tables: Sequence[dict[str, Any] | None]) -> str:
    """What two cases must share to share a path: every output's shape text and table."""
    return json.dumps([list(outputs), list(tables)], sort_keys=True, default=str)


def choice_text(name: str, value: Any) -> str:
    """``name`` at ``value`` as a condition of the contract language."""
    if isinstance(value, bool):
        return name if value else f"not {name}"
    if isinstance(value, str):
        return f"{name} == {value!r}"
    return f"{name} == {value}"


def _when(names: Sequence[str], combos: Iterable[tuple[Any, ...]],
          universe: Sequence[Sequence[Any]]) -> str:
    """The condition over ``names`` that holds at ``combos``: one term per combination, merged where a term
    holds for every value a choice takes (``universe``, per name): ``(a and b) or (a and not b)`` is ``a``."""
    terms = _merged(set(combos), universe)
    distinct = sorted(terms, key=repr)
    parts = []
    for combo in distinct:
        conds = [choice_text(n, v) for n, v in zip(names, combo) if v is not _ANY]
        if not conds:
            return "True"
        parts.append(" and ".join(conds) if len(conds) == 1 or len(distinct) == 1 else "(" + " and ".join(conds) + ")")
    return " or ".join(parts) if parts else "True"


class _Any:
    """A merged term's choice: any of its values (a fixed repr: the terms are sorted by it)."""

    def __repr__(self) -> str:
        return "*"


_ANY = _Any()


def _merged(terms: set[tuple[Any, ...]], universe: Sequence[Sequence[Any]]) -> set[tuple[Any, ...]]:
    """The combinations as few terms (Quine-McCluskey over choices): terms equal but at one position, which
    between them take every value of that choice, give a term with that position free; the terms no merge
    extends cover the combinations, the ones covering most first. Exact: a term holds on no combination
    outside ``terms`` among the choices' values."""
    minterms = set(terms)
    level, primes = set(terms), set()
    while level:
        merged_into: set[tuple[Any, ...]] = set()
        nxt: set[tuple[Any, ...]] = set()
        for i, values in enumerate(universe):
            every = {repr(v) for v in values}
            groups: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
            for t in level:
                if t[i] is not _ANY:
                    groups.setdefault(t[:i] + t[i + 1:], []).append(t)
            for rest, members in groups.items():
                if {repr(t[i]) for t in members} >= every:
                    nxt.add(rest[:i] + (_ANY,) + rest[i:])
                    merged_into.update(members)
        primes |= level - merged_into
        level = nxt
    chosen: set[tuple[Any, ...]] = set()
    left = set(minterms)
    while left:
        best = max(sorted(primes, key=repr),
                   key=lambda p: (len({m for m in left if _covers(p, m)}), sum(v is _ANY for v in p)))
        chosen.add(best)
        left = {m for m in left if not _covers(best, m)}
    return chosen


def _covers(term: tuple[Any, ...], combo: tuple[Any, ...]) -> bool:
    return all(t is _ANY or repr(t) == repr(c) for t, c in zip(term, combo))


def _telling(values: Sequence[Mapping[str, Any]], groups: Sequence[int]) -> list[str]:
    """The fewest choices whose values decide every case's group (the varying ones, smallest subsets first)."""
    varying = [n for n in values[0] if len({repr(v[n]) for v in values}) > 1]
    for k in range(1, len(varying) + 1):
        for names in itertools.combinations(varying, k):
            seen: dict[tuple[str, ...], int] = {}
            if all(seen.setdefault(tuple(repr(v[n]) for n in names), g) == g for v, g in zip(values, groups)):
                return list(names)
    return varying


Side = tuple[str, list[str | None], list[dict[str, Any] | None], list[str]]  # when, outputs, tables, TODOs
CaseOutputs = tuple[list[str | None], list[dict[str, Any] | None], list[str], list[Side]]  # ..., TODOs, sides


def _case_signature(got: CaseOutputs) -> str:
    """What two cases must share to share their paths: every side's ``when`` and outputs, or the outputs."""
    if got[3]:
        return json.dumps([[w, list(o), list(t)] for w, o, t, _ in got[3]], sort_keys=True, default=str)
    return signature(got[0], got[1])


def _both(when: str, side: str) -> str:
    """A path's ``when``: the choices' and the side's."""
    if when == "True" or side == "True":
        return side if when == "True" else when
    return f"({when}) and ({side})"


def _group_paths(when: str, got: CaseOutputs, cases: list[str]) -> list[DraftPath]:
    """A group of cases' paths: one, or one per side of its kernel's branches on the sizes."""
    outputs, tables, todos, sides = got
    if not sides:
        return [DraftPath(when, outputs, tables, cases, todos)]
    return [DraftPath(_both(when, w), o, t, cases, (todos if i == 0 else []) + side_todos)
            for i, (w, o, t, side_todos) in enumerate(sides)]


def draft_paths(first: CaseOutputs, cases: Sequence[Any], trace: Callable[[Any], CaseOutputs | None]
                ) -> tuple[list[DraftPath], list[str]]:
    """The paths for ``cases`` (the first one already traced: ``first``), and the ids of the cases whose trace
    did not finish (``trace`` gave None), which stay on the first case's path(s). Where the cases' sides would
    make more than ``MAX_PATHS`` paths, each group of cases gets one path, its sample side's outputs."""
    got: list[CaseOutputs] = [first]
    unfinished: list[str] = []
    for case in cases[1:]:
        one = trace(case)
        if one is None:
            unfinished.append(case.id)
        got.append(first if one is None else one)
    paths = _paths(cases, got, _case_signature)
    if len(paths) > MAX_PATHS and any(g[3] for g in got):
        flat = _paths(cases, [(o, t, todos, []) for o, t, todos, _ in got], _case_signature)
        flat[0].todos.append(f"the kernel branches on the sizes too, and the cases' sides would make {len(paths)} "
                             "paths, more than a draft writes: each path below is its cases' sample side, and verify "
                             f"reports where the other sides differ ({RuleCode.OUTPUT_SHAPE_MISMATCH})")
        return flat, unfinished
    return paths, unfinished


#: paths a draft writes at most where the cases' sides multiply them
MAX_PATHS = 12


def _paths(cases: Sequence[Any], got: list[CaseOutputs], key: Callable[[CaseOutputs], str]) -> list[DraftPath]:
    """A path per group of cases with the same ``key`` (each case's traced outputs in ``got``), or per side of
    its kernel's branches on the sizes."""
    sigs = [key(g) for g in got]
    order = list(dict.fromkeys(sigs))
    if len(order) == 1:
        return _group_paths("True", got[0], [c.id for c in cases])
    groups = [order.index(s) for s in sigs]
    found = [got[sigs.index(s)] for s in order]
    values = [dict(c.values) for c in cases]
    names = _telling(values, groups)
    paths = []
    for g, one in enumerate(found):
        members = [i for i, x in enumerate(groups) if x == g]
        universe = [list({repr(v[n]): v[n] for v in values}.values()) for n in names]
        when = _when(names, [tuple(values[i][n] for n in names) for i in members], universe)
        paths += _group_paths(when, one, [cases[i].id for i in members])
    return paths


def scoped(text: str, needed: Sequence[bool], cases: Sequence[Any]) -> str:
    """The requires ``text`` where the cases with ``needed`` true are (by the fewest choices that tell them from
    the rest): ``ceil_mode or A1 // 2 >= 1`` for a requires of the cases with ``ceil_mode`` false."""
    values = [dict(c.values) for c in cases]
    groups = [int(n) for n in needed]
    names = _telling(values, groups)
    universe = [list({repr(v[n]): v[n] for v in values}.values()) for n in names]
    when = _when(names, [tuple(values[i][n] for n in names) for i, n_ in enumerate(needed) if n_], universe)
    if when == "True":
        return text
    bare = when.removeprefix("not ")
    negated = bare if when.startswith("not ") and bare.isidentifier() else \
        f"not {when}" if when.isidentifier() else f"not ({when})"
    return f"{negated} or ({text})" if " and " in text else f"{negated} or {text}"
