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
    reported_by: str  # the command whose runs report it: verify (also gate and fuzz), gate, ref (also fuzz), fuzz, audit
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
    Rule("SC016", "guard-torch-cannot-discharge",
         "z3 proves a guard or guard_or_* condition settled over the domain, but torch's own reasoning cannot "
         "decide it from the Dim ranges: torch.export installs the guard and rejects the range", E, "verify",
         "remove the branch where z3 proves it dead (a condition on the static arguments in front of it), or "
         "compute the value without a guard (torch.sym_min/sym_max) so that export installs none"),
    Rule("SC017", "output-dtype-mismatch",
         "an output's dtype differs from the dtype the contract's path states for the case", E, "verify",
         "return the runtime's dtype for every input dtype (e.g. float32 statistics for half inputs, but the "
         "input's dtype for float64)"),
    Rule("SC018", "output-layout-mismatch",
         "an output's strides differ from the layout the contract's path states, somewhere in the domain", E,
         "verify", "allocate the output in the runtime's memory order (e.g. empty((B, L, H, E)).transpose(1, 2) "
         "where the runtime does that), not contiguous"),
    Rule("SC019", "output-presence-mismatch",
         "the kernel returns a tensor where the runtime returns None, or None where the runtime returns a tensor",
         E, "verify", "return None exactly where the runtime returns an undefined tensor"),
    Rule("SC020", "dynamic-size-range",
         "a data-dependent output size's range in the fake misses values the runtime can return", E, "verify",
         "create the size with torch.library.get_ctx().new_dynamic_size() (minimum 0), not the deprecated "
         "create_unbacked_symint() (minimum 2), and bound it with torch._check only where the runtime does"),
    Rule("SC021", "meta-accepts-rejected-input",
         "the meta kernel accepts an input in a [[rejects]] region where the runtime raises", E, "verify",
         "raise where the runtime does: torch._check the runtime's condition in the meta kernel, with its "
         "message, so that export and compile refuse the input instead of the device"),
    Rule("SC022", "guard-in-torch-helper",
         "a guard that torch's own helper (reached from a kernel line) installs when torch.export traces the op "
         "does not hold on the whole range of the contract's dims: export rejects the Dim range", E, "verify",
         "the guard is torch's, asked for by the helper the kernel's line calls (broadcasting, reshaping, "
         "contiguity): give the helper sizes it need not decide (build the shape directly, e.g. unsqueeze/expand "
         "instead of broadcasting a size that may be 1), or make the condition a contract precondition"),
    Rule("SC030", "audit-constant-comparison",
         "the kernel branches on a comparison of input sizes with a constant other than 0/1, and the op accepts "
         "both sides", E, "audit", "remove the branch from shape inference (it copies a runtime choice), or make "
         "it a documented precondition the op checks"),
    Rule("SC031", "audit-zero-one", "the kernel special-cases a size of 0 or 1 that the op accepts on both sides",
         E, "audit", "return the general shape for sizes 0 and 1 too, or use guard_or_false where the special "
         "case is only an optimisation"),
    Rule("SC032", "audit-specialization", "the kernel needs a size's concrete value (int(), a Python loop "
         "over a size)", E, "audit", "keep the SymInt: pass the size itself, or use torch.sym_max/sym_min/sym_ite"),
    Rule("SC033", "audit-modulo", "the kernel branches on a size modulo or divided by a constant (alignment)", E,
         "audit", "compute the aligned size arithmetically ((x + 7) // 8 * 8) instead of branching on it"),
    Rule("SC034", "audit-data-dependent", "the kernel's shapes depend on tensor data (.item(), nonzero) and "
         "it guards on them", E, "audit", "declare the data-dependent size (torch.library.get_ctx()."
         "new_dynamic_size()) and check it with torch._check instead of branching"),
    Rule("SC035", "audit-undischargeable", "a guard that holds for every input, which torch cannot decide "
         "from its own facts: under unbacked sizes it raises", E, "audit",
         "state the fact with torch._check before the branch, or drop the always-true test"),
    Rule("SC036", "audit-kernel-error", "the kernel raises under symbolic sizes on inputs it accepts at static "
         "sizes", E, "audit", "make the kernel work on SymInts (no .item(), no Python-int-only APIs on sizes)"),
    Rule("SC037", "audit-dim-branch", "the kernel branches on a relation between input sizes, and the op "
         "accepts both sides", E, "audit", "return a shape that does not depend on the relation, or make the "
         "relation a precondition (torch._check) if the op demands it"),
)
del E, INC, N


def rule(code: str) -> Rule:
    return RULES[code]


def rules_of(command: str) -> dict[str, Rule]:
    """The rules a command's runs report (``verify`` also covers the gate, which runs verify)."""
    commands = {"verify": {"verify"}, "gate": {"verify", "gate"}, "ref": {"ref"},
                "fuzz": {"verify", "ref", "fuzz"}, "audit": {"audit"}}[command]
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
