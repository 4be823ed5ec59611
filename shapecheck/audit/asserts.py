"""The fake's asserts as facts: inferred requires read back (``parsed_requires``), and an assert that holds for
every input but that torch.export cannot prove (SC035)."""

from __future__ import annotations

from typing import Any

from .._torch import static as CS
from ..findings import SourceLoc
from ..logic import expr as E
from ..logic.solver import Decision
from ..trace.run import broadcast_relation

#: the mark of a broadcast relation in a requires: ``a == b (or broadcast: 1)`` is ``a == b or a == 1 or b == 1``
BROADCAST = " (or broadcast: 1)"


def export_cannot_prove(explorer: Any, a: Any, pc: list[E.Node], most: int) -> None:
    """``a`` (a ``trace.run.Assert`` of a trace that returned over the region ``pc``) holds for every input (z3)
    over one size that torch's value ranges cannot prove with the size from 2 up: under unbacked sizes torch defers
    it, but torch.export with the size dynamic installs it as a guard its constraint check rejects (hunt 55:
    ``new_empty((n - n // 2,))``'s size check ``n - n // 2 >= 0``, "Constraints violated"). Added to the
    explorer's findings as undischargeable. ``most``: the greatest size of a dim."""
    names = E.free_names(a.expr)
    if len(names) != 1 or not names <= set(explorer.dims) or explorer.solver.decide([], a.expr)[0] is not Decision.TRUE:
        return
    try:
        says, reads = CS.static_answer(a.expr, {n: (2, most) for n in names}, {}, [])
    except CS.TorchCannotSay:
        return
    if says is None and reads == 1:
        text = E.to_text(a.expr)
        explorer.add("undischargeable", text, a.loc, explorer.near(pc) or {}, None,
                     f"{text} holds for every input (z3 proves it), but torch cannot prove it from its value ranges: "
                     f"under unbacked sizes it defers the check ({a.by or 'the kernel asserts it'}), and torch.export "
                     "with the size dynamic installs it as a guard that its constraint check rejects ('Constraints "
                     "violated')")


def parsed_requires(requires: list[tuple[str, SourceLoc | None, str]]) -> list[E.Node]:
    """The inferred requires that are facts in the contract language (not evidence text such as "(raised) ..."),
    a broadcast relation (``a == b (or broadcast: 1)``) as ``a == b or a == 1 or b == 1``."""
    out = []
    for expr, _, _ in requires:
        try:
            out.append(broadcast_relation(E.parse(expr.removesuffix(BROADCAST))) if expr.endswith(BROADCAST)
                       else E.parse(expr))
        except Exception:  # noqa: BLE001, S112 - evidence text: not a fact
            continue
    return out
