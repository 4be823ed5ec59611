"""A case's path map (``verify --explore``, ``prove.pathmap.PathMap``) as text."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..prove.pathmap import PathMap


def render_path_map(pm: PathMap) -> list[str]:
    lines = [f"case {pm.case}: {len(pm.paths)} meta path(s) from {pm.traces} trace(s)"
             + ("" if pm.covered else f"; NOT covered, e.g. {_pt(pm.uncovered_example)}")
             + ("; exploration truncated at the trace bound" if pm.truncated else "")]
    for p in pm.paths:
        where = f" (returns at line {p.returned_at.line})" if p.returned_at else ""
        lines.append(f"  {p.id}{where}: {p.region}")
        lines.append(f"      example: {_pt(p.example)}")
        lines.append(f"      outputs: {', '.join(p.outputs)}")
        for o in p.overlaps:
            verdict = {True: "output 0 matches", False: "output 0 DIFFERS", None: "output 0 unspecified"}[o.out0_matches]
            extra = f" (e.g. {_pt(o.counterexample)})" if o.counterexample else ""
            lines.append(f"      overlaps {o.path}: {verdict}{extra}")
    for b in pm.breaks:
        lines.append(f"  shape-polymorphism break: {b.a} and {b.b} give different output {b.output} at "
                     f"{_pt(b.point)}: {b.a_out0} vs {b.b_out0}")
    return lines


def _pt(point: dict[str, int] | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in (point or {}).items()) or "-"
