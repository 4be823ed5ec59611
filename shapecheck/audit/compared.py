"""Predicates on an op's audit record: whether its fake met the eager kernel on an input it takes."""

from __future__ import annotations

from typing import Any

from .explore import STOPPED


def was_compared(rec: dict[str, Any]) -> bool:
    """Whether the fake's outputs were compared with the eager kernel's at one point or more: at the first
    inputs, or at a traced variant's (the first inputs refused, a rank the eager kernel takes: hunt 55)."""
    eager = rec.get("eager") or {}
    return (eager.get("status") == "compared" and eager.get("compared", 0) > 0) or \
        valid_call_traced(rec.get("variants") or [])


def valid_call_traced(variants: list[dict[str, Any]]) -> bool:
    """Whether a variant was traced and compared with the eager kernel at a point or more. A layout or dtype of
    the refused first inputs that the eager kernel happens to take is compared but not traced: it alone says
    nothing of the op's valid inputs (hunt 55: a transposed int64 tensor warp took where it refused the first
    inputs)."""
    return any(v.get("status") == "traced" and v.get("compared", 0) > 0 for v in variants)


def only_uncompared(rec: dict[str, Any]) -> bool:
    """An inconclusive op whose traces all finished but whose fake never met its eager kernel on an input it takes
    (not "explored in part": hunt 55)."""
    notes = rec.get("notes") or []
    return rec["status"] in ("inconclusive", "findings") and any(n.startswith("not compared:") for n in notes) \
        and not any(n.startswith((*STOPPED, "not traced:", "stopped:")) for n in notes)
