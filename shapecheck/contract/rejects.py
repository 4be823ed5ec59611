"""Loading ``[[rejects]]``: the regions of the input space where the runtime raises (``contract.spec.RejectSpec``).

A region is ``case`` (which cases: a condition over choices only, which may name cases the domain excludes;
left out, every case of the domain) and ``when`` (where in those cases: a condition over dims and choices).
``kind`` says who refuses the input: the op itself (``runtime-check``) or only the dispatcher in front of it
(``dispatcher-limit``). ``contract.model.bind_case`` takes every region out of the domain; ``rejects`` proves that
the meta kernel raises on each runtime-check region.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..edges import JSON
from ..logic import expr as E
from . import spec as S

if TYPE_CHECKING:
    from .reader import Reader

REJECT_KEYS = {"id", "when", "case", "kind", "message", "source", "doc"}
_REJECT_ID = re.compile(r"[a-z0-9][a-z0-9_.-]*")


def load_rejects(r: Reader, items: JSON) -> tuple[S.RejectSpec, ...]:
    """The ``[[rejects]]`` tables (``r``: the ``contract.reader.Reader`` of the file)."""
    r.want(items, "rejects", list)
    seen: set[str] = set()
    return tuple(load_reject(r, i, x, seen) for i, x in enumerate(items))


def load_reject(r: Reader, i: int, x: JSON, seen: set[str]) -> S.RejectSpec:
    key = f"rejects[{i}]"
    r.table(x, key, REJECT_KEYS, {"id"})
    rid = r.want(x["id"], f"{key}.id", str)
    if not _REJECT_ID.fullmatch(rid):
        raise r.err(f"{key}.id", f"expected a kebab-case id, found {rid!r}")
    if rid in seen:
        raise r.err(f"{key}.id", f"duplicate reject id {rid!r}")
    seen.add(rid)
    key = f"rejects.{rid}"
    if "when" not in x and "case" not in x:
        raise r.err(key, "a reject needs 'when' (a condition over dims and choices), 'case' (over choices), or both")
    when = r.parse(x.get("when", True), f"{key}.when")
    case = None
    if "case" in x:
        case = r.parse(x["case"], f"{key}.case")
        bad = E.free_names(case) - set(r.choices)
        if bad:
            raise r.err(f"{key}.case", f"'case' may only use choices; found {sorted(bad)}")
    kind = r.want(x.get("kind", "runtime-check"), f"{key}.kind", str)
    if kind not in S.REJECT_KINDS:
        raise r.err(f"{key}.kind", f"expected one of {', '.join(S.REJECT_KINDS)}, found {kind!r}")
    text = {k: r.want(x.get(k, ""), f"{key}.{k}", str) for k in ("message", "source", "doc")}
    return S.RejectSpec(rid, when, case, kind, text["message"], text["source"], text["doc"], r.line("rejects", i))
