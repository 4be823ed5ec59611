"""``audit --draft DIR``: a draft contract for each audited op, written by ``contract draft``'s writer
(``schema_draft.draft_contract``) with the audit's findings and inferred relations as comments
(``draft.audit_notes``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import ShapecheckError, UserError
from ..paths import write_text
from .draft import audit_notes
from .schema_draft import GIVEN_RANKS, draft_contract


def write_drafts(run: Any, source: Any, directory: str) -> int:
    """One ``DIR/<ns>/<name>.<overload>.toml`` per audited op, written by ``contract draft``'s writer with the
    audit's findings as comments; the number written. An op the draft cannot be made for is left out."""
    written = 0
    for rec in run.records:
        if rec["status"] == "not-run":
            continue
        try:  # the tensors' ranks of the call the audit traced (its samples'), so that the body drafts that call
            text = draft_contract(rec["op"], example_ranks(rec.get("example") or ""), notes=audit_notes(rec),
                                  rank_source=GIVEN_RANKS[1])
        except ShapecheckError:
            try:
                text = draft_contract(rec["op"], notes=audit_notes(rec))
            except ShapecheckError:
                continue  # no draft for this op rather than a broken one (contract draft says why, op by op)
        ns, _, rest = rec["op"].partition("::")
        path = Path(directory) / ns / f"{rest}.toml"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text(path, text)
        except OSError as err:
            raise UserError(f"--draft {directory}: cannot write {path} ({err.strerror})") from None
        written += 1
    return written


def example_ranks(example: str) -> dict[str, int]:
    """The rank of each tensor argument of an audit record's example call (``x=float32[x_0, x_1], dim=1``)."""
    ranks = {}
    for name, dims in re.findall(r"(?:^|, )(\w+)=\w+\[([^\[\]]*)\]", example):
        ranks[name] = len([d for d in dims.split(",") if d.strip()])
    return ranks
