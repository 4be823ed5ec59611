"""Contract ``[[suppress]]`` tables: which are in force (not past their expiry date) and which finding each
accepts; where each stands in its file is its ``line`` (``contract.lines``, at load). verify, gate and ref check
all read them through here."""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import replace

from ..findings import Finding


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


def matches(s, v: Finding) -> bool:
    """Whether suppression ``s`` covers violation ``v``, expiry aside: same rule, and the case, path, dims and
    message text it names (each optional) agree. A path without an era covers that path in every era."""
    return covers(s, v.code, v.case, v.dims, v.path) and (not getattr(s, "message", None) or s.message in v.message)


def covers(s, rule: str, case: str, dims: Iterable[str], path=None) -> bool:
    """``matches`` for a finding given by its parts (``fuzz op``'s guard check has no ``Finding``): ``path`` a
    ``findings.PathId`` or None (a guard, which no one path owns). A suppression's ``message`` text is left to
    ``matches``: a guard given by its parts has no message, and is covered by the rest."""
    if s.rule != rule:
        return False
    if s.case and s.case not in case:
        return False
    if s.path and not (path is not None and path.named_by(s.path)):
        return False
    if s.dims and not set(s.dims) <= set(dims):
        return False
    return True


def apply(suppressions: list, violations: list[Finding]) -> list[Finding]:
    """Each violation marked with the reason of the first suppression in force that covers it; one that only an
    expired suppression covers says so in its message (it counts again, and the user should know why)."""
    live = in_force(suppressions)
    now = today()
    gone = [s for s in suppressions if expired(s, now)]
    if not live and not gone:
        return violations
    out = []
    for v in violations:
        s = next((s for s in live if matches(s, v)), None)
        old = None if s is not None else next((s for s in gone if matches(s, v)), None)
        if s is not None:
            v = replace(v, suppressed=s.reason)
        elif old is not None:
            v = replace(v, message=f"{v.message} (a [[suppress]] accepted it until it expired on {old.expires})")
        out.append(v)
    return out

