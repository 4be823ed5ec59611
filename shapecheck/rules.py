"""Every rule shapecheck reports, in one registry: what it means, whether it fails a run, its SARIF level,
the fix to suggest and its place in docs/rules.md. Adding a rule is an entry here plus the obligation that
emits it; every command, renderer and the docs read this table.

This module imports nothing from shapecheck or torch: renderers load it without loading torch or z3.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass


class Severity(enum.StrEnum):
    """What a finding of the rule does to a run: fail it, make it inconclusive, or inform only."""

    ERROR = "error"  # a violation: the run fails (exit 1) unless the finding is suppressed
    INCONCLUSIVE = "inconclusive"  # nothing proved: the run is inconclusive (exit 3), never a pass
    NOTE = "note"  # a remark: the verdict stands

    @property
    def sarif_level(self) -> str:
        return {"error": "error", "inconclusive": "warning", "note": "note"}[self.value]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str  # what a finding means, one line
    severity: Severity
    reported_by: str  # the command whose runs report it: verify (also gate and fuzz), gate, ref (also fuzz), fuzz
    fix: str = ""  # the default fix suggestion; verify's fixes module refines some from what it explored

    @property
    def fails(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def anchor(self) -> str:
        """The rule's heading anchor in docs/rules.md (``## SC001 guard-on-dynamic-dim``)."""
        return f"{self.code.lower()}-{self.name}"


def _rules(*rules: Rule) -> dict[str, Rule]:
    return {r.code: r for r in rules}


E, INC, N = Severity.ERROR, Severity.INCONCLUSIVE, Severity.NOTE

RULES: dict[str, Rule] = _rules(
    Rule("SC001", "guard-on-dynamic-dim",
         "the kernel branches on a dynamic dim: a guard that does not hold on the whole range", E, "verify",
         "remove the branch, or state the relation it needs as a contract precondition (requires)"),
    Rule("SC002", "output-shape-mismatch",
         "an output shape differs from the contract's shape for a runtime path", E, "verify",
         "return the contract's shape on the path"),
    Rule("SC003", "value-specialization",
         "the kernel needs a dim's concrete value (int(), a constant replacement)", E, "verify",
         "use the SymInt directly: converting a size to a Python int (int(), a list of ints, .item()) fixes it "
         "to one value; pass the size itself to the tensor factory, or use torch.sym_max/sym_min/sym_ite where a "
         "value is computed from it"),
    Rule("SC004", "assert-narrows-range",
         "a torch._check / runtime assert or range refinement narrows a dim's range", E, "verify",
         "this range check belongs to the runtime, not to shape inference: express it as a contract "
         "precondition ([domain] requires) or remove it from the meta kernel"),
    Rule("SC005", "inconclusive", "the solver or the translation gave up: nothing was proved", INC, "verify"),
    Rule("SC006", "unreachable-path", "a contract path whose precondition holds for no input of any case", N,
         "verify", "fix the path's `when`, or delete the path"),
    Rule("SC007", "kernel-error", "the kernel raised an error on an input inside the contract's domain", E,
         "verify", "the meta kernel must not raise for inputs inside the contract's domain; check its "
         "preconditions"),
    Rule("SC008", "stale-suppression",
         "a contract suppression matches no violation: the finding it accepted is gone", E, "gate",
         "delete the [[suppress]] table"),
    Rule("SC010", "dispatch-mismatch",
         "the runtime's dispatch picks another path than the contract's `when` names", E, "ref"),
    Rule("SC011", "runtime-output-shape",
         "the runtime's output 0 shape differs from the contract's output-0 shape", E, "ref"),
    Rule("SC012", "runtime-values",
         "output 0 differs from the float64 math reference beyond the dtype tolerance", E, "ref"),
    Rule("SC013", "runtime-output1-shape",
         "output 1 differs from the shape the contract documents for the path", E, "ref"),
    Rule("SC014", "runtime-rejects", "the runtime raises on an input the path's precondition admits", E, "ref"),
    Rule("SC015", "meta-runtime-mismatch",
         "the meta kernel's output 0 differs from the runtime reference's where the contract states nothing "
         "(dtype, memory layout, or a shape no contract path covers)", E, "fuzz",
         "return the dtype and layout the runtime returns (e.g. a permuted view where the runtime allocates one "
         "order and returns another)"),
    Rule("SC021", "meta-accepts-rejected-input",
         "the meta kernel accepts an input in a [[rejects]] region where the runtime raises", E, "verify",
         "raise where the runtime does: torch._check the runtime's condition in the meta kernel, with its "
         "message, so that export and compile refuse the input instead of the device"),
)
del E, INC, N


def rule(code: str) -> Rule:
    return RULES[code]


def rules_of(command: str) -> dict[str, Rule]:
    """The rules a command's runs report (``verify`` also covers the gate, which runs verify)."""
    commands = {"verify": {"verify"}, "gate": {"verify", "gate"}, "ref": {"ref"},
                "fuzz": {"verify", "ref", "fuzz"}}[command]
    return {c: r for c, r in RULES.items() if r.reported_by in commands}


FAILING = frozenset(c for c, r in RULES.items() if r.fails)


def help_uri(r: Rule) -> str | None:
    """The rule's section of docs/rules.md, under the documentation address the installed package declares
    (``Project-URL: Documentation``); None when it declares none."""
    docs = _docs_url()
    return f"{docs}/rules.md#{r.anchor}" if docs else None


@functools.cache
def _docs_url() -> str | None:
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        urls = metadata("torch-shapecheck").get_all("Project-URL") or []
    except PackageNotFoundError:
        return None
    found = (u.split(",", 1) for u in urls if "," in u)
    return next((url.strip().rstrip("/") for label, url in found if label.strip().lower() == "documentation"), None)
