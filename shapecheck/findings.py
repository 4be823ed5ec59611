"""Findings as data, the one record every command produces: where (``SourceLoc``; a contract path or region
as ``PathId``, which carries the line of its table), what (``Finding``: one finding of a rule, from verify,
gate, fuzz, ref check or audit) and what they give (``Verdict``; ``PathStatus`` for one contract path). A leaf
module: it imports only the rule registry and the codec, so every renderer can load it without torch or z3.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

from .codec import TRANSIENT, is_transient
from .rules import FAILING, INCONCLUSIVE, INTERNAL, RULES, Rule, RuleCode

DEFAULT_ERA = "default"


@dataclass(frozen=True)
class SourceLoc:
    """A place in a source file (the kernel's own line, a contract table)."""

    file: str
    line: int
    function: str = ""
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "function": self.function, "text": self.text}

    @property
    def short(self) -> str:
        """``file.py:12``: the file's name and the line, for a message."""
        return f"{self.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{self.line}"


@dataclass(frozen=True, eq=False)
class PathId:
    """A contract path (``[[paths]]``: its id in its era) or a ``[[rejects]]`` region (``rejects.<id>``), as
    findings name it: ``id@era``, or ``id`` alone in the default era. ``line`` is the line of its table in the
    contract file (of its ``id`` key; 0 when unknown), recorded when the contract loaded; it takes no part in
    equality: two ids of one path are equal wherever they came from. A PathId equals (and hashes as) the text
    that names it, so a report's ``"path"`` text finds it in a set or a dict."""

    id: str
    era: str = DEFAULT_ERA
    line: int = 0

    def __str__(self) -> str:
        return self.id if self.era == DEFAULT_ERA else f"{self.id}@{self.era}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PathId):
            return (self.id, self.era) == (other.id, other.era)
        if isinstance(other, str):
            return str(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    @classmethod
    def parse(cls, text: str) -> PathId:
        """The id a report or the command line writes (``id@era`` or ``id``): the one place it is split."""
        pid, _, era = text.partition("@")
        return cls(pid, era or DEFAULT_ERA)

    def named_by(self, text: str) -> bool:
        """Whether ``text`` (a suppression's ``path``, a ``--path``) names this path: its id alone (any era),
        or ``id@era``."""
        return text in (self.id, str(self), f"{self.id}@{self.era}")


class Verdict(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"  # shapecheck failed (a bug) in some case: every other case's result still stands

    @property
    def exit_code(self) -> int:
        return {"pass": 0, "fail": 1, "inconclusive": 3, "error": 4}[self.value]

    @classmethod
    def worst(cls, verdicts: Iterable[Verdict]) -> Verdict:
        """error if any is (shapecheck failed), else fail if any fails, else inconclusive if any is, else pass
        (pass for none)."""
        seen = set(verdicts)
        return next((v for v in (cls.ERROR, cls.FAIL, cls.INCONCLUSIVE) if v in seen), cls.PASS)


class PathStatus(enum.StrEnum):
    """What was proved of one contract path's output obligations in one case, in the order reports list them."""

    PROVED = "proved"  # on every finished trace that reaches it, and those cover the path
    REFUTED = "refuted"  # a finding on its outputs
    UNKNOWN = "unknown"  # z3 could not decide (its reachability or an output)
    PARTIAL = "partial"  # proved where finished traces reach; part of the path has none
    UNCHECKED = "unchecked"  # reachable, but no finished trace
    UNREACHABLE = "unreachable"  # its precondition holds for no input of the case


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One finding of one rule in one case. Built by keyword; ``node`` and ``expected`` carry the obligation's
    expression trees (contract language) so that fixes and explanations never re-parse ``expr``."""

    code: RuleCode
    case: str
    path: PathId | None = None
    expr: str
    dims: tuple[str, ...] = ()
    location: SourceLoc | None = None
    counterexample: dict[str, int]
    message: str
    witness: dict[str, int] | None = None
    restricts: str = ""
    suppressed: str = ""  # the reason, when a contract suppression matches
    fix: str = ""  # a suggested fix
    traceback: str = ""  # SC023 (an internal error): the Python traceback, for the bug report
    # the way of running the op whose kernel this is a finding of, where torch.export's and plain
    # FakeTensorMode's kernels differ: "fake" for plain FakeTensorMode's (``kernel.sources.Kernel.mode``)
    mode: str = ""
    node: Any = field(default=None, metadata=TRANSIENT)  # the guard/assert/obligation as an expression node
    expected: Any = field(default=None, metadata=TRANSIENT)  # SC002: the contract's shape (or integer) node
    fallback: Any = field(default=None, metadata=TRANSIENT)  # SC002 on a guard_or_* fallback side: export's side
    # SC002: (where it holds, the output's name, the kernel's formula, the message's suffix): the replay's other points
    region: Any = field(default=None, metadata=TRANSIENT)

    @property
    def rule(self) -> Rule:
        return RULES[self.code]

    @property
    def kind(self) -> str:
        return self.rule.name

    @property
    def point_label(self) -> str:
        """What outputs call the finding's point: a counterexample where the rule fails the run, an example where
        it only makes the run inconclusive or informs (the point is where it was seen, not a proof of a bug)."""
        return "counterexample" if self.code in FAILING or self.code in INTERNAL else "example"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Finding:
        """A finding read back from ``verify --format json`` (a process edge: ``fuzz op --from-verify``).
        Raises ValueError on a record that is not one."""
        try:
            loc = d.get("location")
            return cls(code=RuleCode(d["code"]), case=str(d.get("case", "")),
                       path=PathId.parse(str(d["path"])) if d.get("path") else None, expr=str(d.get("expr", "")),
                       dims=tuple(d.get("dims") or ()), message=str(d.get("message", "")),
                       location=SourceLoc(str(loc["file"]), int(loc["line"]), str(loc.get("function", "")),
                                          str(loc.get("text", ""))) if loc else None,
                       counterexample={str(k): _size(v) for k, v in (d.get("counterexample") or {}).items()},
                       witness={str(k): _size(v) for k, v in d["witness"].items()} if d.get("witness") else None,
                       suppressed=str(d.get("suppressed") or ""), mode=str(d.get("mode") or ""))
        except (KeyError, TypeError, AttributeError, ValueError, OverflowError) as err:  # OverflowError: int(Infinity)
            raise ValueError(f"not a verify finding ({type(err).__name__}: {err})") from None

    def to_json(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if not is_transient(f)}
        d["kind"] = self.kind
        d["path"] = None if self.path is None else str(self.path)
        d["dims"] = list(self.dims)
        d["location"] = None if self.location is None else self.location.to_json()
        if not self.suppressed:
            d.pop("suppressed")
        if not self.traceback:
            d.pop("traceback")
        if not self.mode:
            d.pop("mode")
        return d


def _size(value: Any) -> int:
    """A point's value read back from JSON: an integer, never a float or bool coerced (1.5 is not 1)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"a size must be an integer, not {value!r}")
    return value


Violation = Finding  # the name before findings of every command were one record (public API: shapecheck.Violation)


def verdict_of(findings: Iterable[Finding]) -> Verdict:
    """ERROR (exit 4) when shapecheck failed in some case, else FAIL on a failing finding, else INCONCLUSIVE on
    an inconclusive one (z3 gave up, the time budget ran out), else PASS."""
    codes = {v.code for v in findings if not v.suppressed}
    if codes & INTERNAL:
        return Verdict.ERROR
    if codes & FAILING:
        return Verdict.FAIL
    if codes & INCONCLUSIVE:
        return Verdict.INCONCLUSIVE
    return Verdict.PASS
