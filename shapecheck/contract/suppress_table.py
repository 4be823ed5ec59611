"""Reading a contract's ``[[suppress]]`` tables (``contract.load`` calls ``load_suppressions`` with its
``Reader``, which names the file and key of every error): the rule must exist, the reason must say something,
dims must be declared, and an expiry date must be a real calendar date."""

from __future__ import annotations

import datetime
import difflib
import re
from typing import TYPE_CHECKING

from ..edges import JSON
from ..rules import NEVER_ACCEPTED, RULES, RuleCode
from . import spec as S
from .spec import short

if TYPE_CHECKING:
    from .reader import Reader

SUPPRESS_KEYS = {"rule", "reason", "case", "path", "dims", "message", "expires"}


def _calendar_date(text: str) -> bool:
    """Whether ``text`` is a real date written YYYY-MM-DD in ASCII digits (``\\d`` matches any script's digits,
    and those sort after every ASCII date: such a date would never expire)."""
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:  # 2027-02-30
        return False
    return True


def load_suppressions(r: Reader, items: JSON) -> tuple[S.Suppression, ...]:
    r.want(items, "suppress", list)
    return tuple(load_suppression(r, i, s) for i, s in enumerate(items))


def load_suppression(r: Reader, i: int, s: JSON) -> S.Suppression:
    key = f"suppress[{i}]"
    r.table(s, key, SUPPRESS_KEYS, {"rule", "reason"})
    rule = r.want(s["rule"], f"{key}.rule", str)
    if rule not in RULES:  # a rule no command reports would suppress nothing, silently, for ever
        close = difflib.get_close_matches(rule, RULES, n=3, cutoff=0.6)
        raise r.err(f"{key}.rule", f"unknown rule {short(rule)}" + (f" (did you mean {', '.join(close)}?)" if close
                                                                    else "") + f"; the rules: {', '.join(RULES)}")
    if rule in NEVER_ACCEPTED:
        says = "nothing was proved" if rule == RuleCode.INCONCLUSIVE else "shapecheck itself failed"
        raise r.err(f"{key}.rule", f"{rule} cannot be suppressed: it says {says} there, which no reason makes a "
                    "pass (narrow the contract, raise --timeout or --max-traces, or report the bug)")
    reason = r.want(s["reason"], f"{key}.reason", str)
    if not reason.strip():
        raise r.err(f"{key}.reason", "a suppression needs a reason")
    dims = r.want(s.get("dims", []), f"{key}.dims", list)
    if any(not isinstance(x, str) or r.names.get(x) != "dim" for x in dims):
        raise r.err(f"{key}.dims", f"expected a list of declared dims, found {short(dims)}")
    case = r.want(s.get("case", ""), f"{key}.case", str) or None
    path = r.want(s.get("path", ""), f"{key}.path", str) or None
    message = r.want(s.get("message", ""), f"{key}.message", str) or None
    expires = s.get("expires")
    if expires is not None:
        expires = str(r.want(expires, f"{key}.expires", str, datetime.date))
        if not _calendar_date(expires):
            raise r.err(f"{key}.expires", f"expected a calendar date YYYY-MM-DD in ASCII digits, found {short(expires)}")
    return S.Suppression(rule, reason, case, path, tuple(dims), expires, i, r.line("suppress", i), message)
