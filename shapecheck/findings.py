"""Findings as data: where (``SourceLoc``), what (``Violation``, one finding of a rule) and the verdict they
give. A leaf module: it imports only the rule registry, so every renderer can load it without torch or z3.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from typing import Any

from .codec import TRANSIENT
from .rules import FAILING, RULES, Rule


@dataclass(frozen=True)
class SourceLoc:
    """A place in a source file (the kernel's own line, a contract table)."""

    file: str
    line: int
    function: str = ""
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "function": self.function, "text": self.text}


class Verdict(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"

    @property
    def exit_code(self) -> int:
        return {"pass": 0, "fail": 1, "inconclusive": 3}[self.value]


#: fields of a Violation that are in-process only (expression nodes): never in JSON
_NODES = ("node", "expected", "fallback")


@dataclass(frozen=True, kw_only=True)
class Violation:
    """One finding of one rule in one case. Built by keyword; ``node`` and ``expected`` carry the obligation's
    expression trees (contract language) so that fixes and explanations never re-parse ``expr``."""

    code: str
    case: str
    path: str | None = None
    expr: str
    dims: tuple[str, ...] = ()
    location: SourceLoc | None = None
    counterexample: dict[str, int]
    message: str
    witness: dict[str, int] | None = None
    restricts: str = ""
    suppressed: str = ""  # the reason, when a contract suppression matches
    fix: str = ""  # a suggested fix
    # the way of running the op whose kernel this is a finding of, where torch.export's and plain
    # FakeTensorMode's kernels differ: "fake" for plain FakeTensorMode's (``kernel.sources.Kernel.mode``)
    mode: str = ""
    node: Any = field(default=None, metadata=TRANSIENT)  # the guard/assert/obligation as an expression node
    expected: Any = field(default=None, metadata=TRANSIENT)  # SC002: the contract's shape (or integer) node
    fallback: Any = field(default=None, metadata=TRANSIENT)  # SC002 on a guard_or_* fallback side: export's side

    @property
    def rule(self) -> Rule:
        return RULES[self.code]

    @property
    def kind(self) -> str:
        return self.rule.name

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Violation:
        """A finding read back from ``verify --format json`` (a process edge: ``fuzz op --from-verify``).
        Raises ValueError on a record that is not one."""
        try:
            loc = d.get("location")
            return cls(code=str(d["code"]), case=str(d.get("case", "")), path=d.get("path"), expr=str(d.get("expr", "")),
                       dims=tuple(d.get("dims") or ()), message=str(d.get("message", "")),
                       location=SourceLoc(str(loc["file"]), int(loc["line"]), str(loc.get("function", "")),
                                          str(loc.get("text", ""))) if loc else None,
                       counterexample={str(k): int(v) for k, v in (d.get("counterexample") or {}).items()},
                       witness={str(k): int(v) for k, v in d["witness"].items()} if d.get("witness") else None,
                       suppressed=str(d.get("suppressed") or ""), mode=str(d.get("mode") or ""))
        except (KeyError, TypeError, AttributeError, OverflowError) as err:  # OverflowError: int(Infinity)
            raise ValueError(f"not a verify finding ({type(err).__name__}: {err})") from None

    def to_json(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _NODES}
        d["kind"] = self.kind
        d["dims"] = list(self.dims)
        d["location"] = None if self.location is None else self.location.to_json()
        if not self.suppressed:
            d.pop("suppressed")
        if not self.mode:
            d.pop("mode")
        return d


def verdict_of(violations: list[Violation]) -> Verdict:
    codes = {v.code for v in violations if not v.suppressed}
    if codes & FAILING:
        return Verdict.FAIL
    if "SC005" in codes:
        return Verdict.INCONCLUSIVE
    return Verdict.PASS
