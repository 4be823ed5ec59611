"""One report per guard or disagreement of an audited op: the keys under which a finding repeats an earlier one
(the first inputs' or another variant's)."""

from __future__ import annotations

import re
from typing import Any

from .differential import numbers_aside
from .explore import Finding


def first_per_kind(found: list[Any]) -> list[Any]:
    """The first disagreement of each (class, what, and for a call only one kernel refuses, that kernel's error with
    the numbers aside: ``refusal``): one finding per way the kernels differ, at its first point. A kernel larger than its input and
    a channel count the groups do not divide are two checks the fake lacks, whichever point shows one first."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for d in found:
        if (key := (d.cls, d.what, refusal(d.cls, d.detail))) not in seen:
            seen.add(key)
            out.append(d)
    return out


def finding_key(f: Finding, from_end: bool = False) -> tuple:
    """One report per guard or disagreement: its class, expression (unbacked sizes are numbered per trace: u4 in
    one, u5 in the next), line, and for a call only one kernel refuses, the refusal. ``from_end``: a
    tensor's dims named by their place from the end (``finding_keys``)."""
    expr = _from_end(f.expr, f.counterexample) if from_end else f.expr
    return (f.cls, re.sub(r"\bu\d+\b", "u", expr), (f.loc.file, f.loc.line) if f.loc else None,
            refusal(f.cls, f.message))


def finding_keys(f: Finding) -> set[tuple]:
    """The keys under which a finding repeats an earlier one: its dims read from the start (a batch dim: a rank
    variant's ``x_0 <= 8`` is the first inputs' ``x_0 <= 8``) or from the end (a 4-D query's ``query_2 <= 8`` is a
    3-D one's ``query_1 <= 8``)."""
    return {finding_key(f), finding_key(f, from_end=True)}


_DIM = re.compile(r"\b([A-Za-z_]\w*?)_(\d+)\b")


def _from_end(expr: str, point: dict[str, int]) -> str:
    """``expr`` with each dim ``NAME_I`` of the point's tensors named by its place from the end (``query_1`` of a
    3-D query and ``query_2`` of a 4-D one are both ``query_-2``)."""
    ranks: dict[str, int] = {}
    for k in point:
        m = _DIM.fullmatch(k)
        if m is not None:
            ranks[m.group(1)] = max(ranks.get(m.group(1), 0), int(m.group(2)) + 1)
    return _DIM.sub(lambda m: f"{m.group(1)}_{int(m.group(2)) - ranks[m.group(1)]}" if m.group(1) in ranks
                    else m.group(0), expr)


def refusal(cls: str, detail: str) -> str:
    """A fake-accepts disagreement's eager error, a fake-rejects one's fake error, with the numbers aside (its first
    line); "" for another class. Two checks a fake makes at one line (its ``def``, where no size assert locates
    them: bitsandbytes' blocksize and dtype checks, hunt 43) are two findings."""
    if cls == "fake-rejects":
        m = re.search(r"the fake(?: raises|:) (.*)", detail)
        text = m.group(1) if m else detail
        return re.sub(r"torch\.\w+", "torch.#", numbers_aside(re.split(r"; the eager kernel| on inputs the eager", text)[0]))
    if cls != "fake-accepts":
        return ""
    # "the eager kernel: ERROR", or a crash's own words ("the eager kernel killed its process (SIGSEGV)"), whatever
    # the point before them says
    m = re.search(r"the eager kernel:? (.*)", detail)
    return numbers_aside((m.group(1) if m else detail).splitlines()[0])
