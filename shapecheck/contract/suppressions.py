"""Contract ``[[suppress]]`` tables: which are in force (not past their expiry date), which finding each
accepts, and where each stands in its file. verify, gate and ref check all read them through here."""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable
from dataclasses import replace

from ..findings import Violation

_HEADER = re.compile(r"^\s*\[\[\s*suppress\s*\]\]")


def today() -> str:
    return datetime.date.today().isoformat()


def expired(s, on: str | None = None) -> bool:
    """Whether the suppression's ``expires`` date has passed (it then suppresses nothing)."""
    return bool(s.expires) and s.expires < (on or today())


def in_force(suppressions: Iterable, rules: Iterable[str] | None = None) -> list:
    """The suppressions not past their date, of the given rules (all rules when None)."""
    wanted = None if rules is None else set(rules)
    now = today()
    return [s for s in suppressions if not expired(s, now) and (wanted is None or s.rule in wanted)]


def matches(s, v: Violation) -> bool:
    """Whether suppression ``s`` covers violation ``v``, expiry aside: same rule, and the case, path and dims
    it names (each optional) agree. A path without an era covers that path in every era."""
    if s.rule != v.code:
        return False
    if s.case and s.case not in v.case:
        return False
    if s.path and (v.path or "") != s.path and (v.path or "").split("@")[0] != s.path:
        return False
    if s.dims and not set(s.dims) <= set(v.dims):
        return False
    return True


def apply(suppressions: list, violations: list[Violation]) -> list[Violation]:
    """Each violation marked with the reason of the first suppression in force that covers it."""
    live = in_force(suppressions)
    if not live:
        return violations
    out = []
    for v in violations:
        s = next((s for s in live if matches(s, v)), None)
        out.append(replace(v, suppressed=s.reason) if s is not None else v)
    return out


def header_lines(file: str) -> list[int]:
    """The 1-based line of each ``[[suppress]]`` header of a contract file, in order."""
    text = contract_text(file)
    return [i for i, line in enumerate(text.splitlines(), 1) if _HEADER.match(line)]


def contract_text(file: str) -> str:
    """A contract file read again, for line numbers only (the contract itself was loaded already): read as the
    contract was (``limits.read_bounded``: a regular file within the contract limit, so a file swapped for a
    FIFO or ``/dev/zero`` since cannot hang the report), and empty when it no longer can be: the report then
    points at line 1 rather than losing the run's results."""
    from ..limits import CONTRACT_BYTES, TooLarge, read_bounded

    try:
        return read_bounded(file, CONTRACT_BYTES).decode("utf-8", "replace")
    except (OSError, TooLarge):
        return ""
