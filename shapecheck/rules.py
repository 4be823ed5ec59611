"""Every rule shapecheck reports, in one registry: what it means, whether it fails a run, its SARIF level,
the fix to suggest and its place in docs/rules.md. Adding a rule is an entry here plus the obligation that
emits it; every command, renderer and the docs read this table.

This module imports nothing from shapecheck or torch: renderers load it without loading torch or z3.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


class Severity(enum.StrEnum):
    """What a finding of the rule does to a run: fail it, make it inconclusive, or inform only."""

    ERROR = "error"  # a violation: the run fails (exit 1) unless the finding is suppressed
    INCONCLUSIVE = "inconclusive"  # nothing proved: the run is inconclusive (exit 3), never a pass
    NOTE = "note"  # a remark: the verdict stands
    INTERNAL = "internal"  # a bug in shapecheck in one case: the run's exit code is 4, the other cases still report

    @property
    def sarif_level(self) -> str:
        return {"error": "error", "inconclusive": "warning", "note": "note", "internal": "error"}[self.value]


class RuleCode(enum.StrEnum):
    """A rule's code: the key of ``RULES``. Code names a rule by its member (``RuleCode.GUARD_ON_DYNAMIC_DIM``,
    the rule's name in capitals), never by a string; the value is the code every output shows (``"SC001"``), so a
    member prints, compares and serialises as that string."""

    GUARD_ON_DYNAMIC_DIM = "SC001"
    OUTPUT_SHAPE_MISMATCH = "SC002"
    VALUE_SPECIALIZATION = "SC003"
    ASSERT_NARROWS_RANGE = "SC004"
    INCONCLUSIVE = "SC005"
    UNREACHABLE_PATH = "SC006"
    KERNEL_ERROR = "SC007"
    STALE_SUPPRESSION = "SC008"
    DISPATCH_MISMATCH = "SC010"
    RUNTIME_OUTPUT_SHAPE = "SC011"
    RUNTIME_VALUES = "SC012"
    RUNTIME_OUTPUT1_SHAPE = "SC013"
    RUNTIME_REJECTS = "SC014"
    META_RUNTIME_MISMATCH = "SC015"
    GUARD_TORCH_CANNOT_DISCHARGE = "SC016"
    OUTPUT_DTYPE_MISMATCH = "SC017"
    OUTPUT_LAYOUT_MISMATCH = "SC018"
    OUTPUT_PRESENCE_MISMATCH = "SC019"
    DYNAMIC_SIZE_RANGE = "SC020"
    META_ACCEPTS_REJECTED_INPUT = "SC021"
    GUARD_IN_TORCH_HELPER = "SC022"
    INTERNAL_ERROR = "SC023"
    RUNTIME_OUTPUT_LAYOUT = "SC024"
    AUDIT_CONSTANT_COMPARISON = "SC030"
    AUDIT_ZERO_ONE = "SC031"
    AUDIT_SPECIALIZATION = "SC032"
    AUDIT_MODULO = "SC033"
    AUDIT_DATA_DEPENDENT = "SC034"
    AUDIT_UNDISCHARGEABLE = "SC035"
    AUDIT_KERNEL_ERROR = "SC036"
    AUDIT_DIM_BRANCH = "SC037"
    AUDIT_EAGER_SHAPE = "SC038"
    AUDIT_EAGER_DTYPE = "SC039"
    AUDIT_EAGER_STRIDES = "SC040"
    AUDIT_FAKE_ACCEPTS = "SC041"
    AUDIT_FAKE_REJECTS = "SC042"
    AUDIT_EAGER_FORMULA = "SC043"
    AUDIT_EAGER_ALIAS = "SC044"


#: SC020's fix where the kernel's size is a plain one and the runtime's is made from data
PLAIN_SIZE_FIX = ("return a size made from data there too (torch.library.get_ctx().new_dynamic_size(), bounded with "
                  "torch._check), or a plain size only where the runtime's range is that one value")
#: what no suppression or baseline accepts: a finding that says nothing was proved (inconclusive) or that
#: shapecheck failed (an internal error) is no verdict on the kernel, and accepting it would make a pass
NEVER_ACCEPTED = frozenset({RuleCode.INCONCLUSIVE, RuleCode.INTERNAL_ERROR})


class Command(enum.StrEnum):
    """A command whose runs report findings; the value is how its reports name it (``shapecheck ref check``)."""

    VERIFY = "verify"
    GATE = "gate"
    FUZZ = "fuzz"
    REF = "ref check"
    AUDIT = "audit"


#: the rules each command's runs report, by the command each rule is reported by (``Rule.reported_by``): the
#: gate runs verify, fuzz runs verify's checks and ref check's
_REPORTS: dict[Command, frozenset[Command]] = {
    Command.VERIFY: frozenset({Command.VERIFY}), Command.GATE: frozenset({Command.VERIFY, Command.GATE}),
    Command.REF: frozenset({Command.REF}), Command.FUZZ: frozenset({Command.VERIFY, Command.REF, Command.FUZZ}),
    Command.AUDIT: frozenset({Command.AUDIT})}


@dataclass(frozen=True)
class Rule:
    code: RuleCode
    name: str  # kebab-case, the member's name in lower case (``GUARD_ON_DYNAMIC_DIM``: guard-on-dynamic-dim)
    summary: str  # what a finding means, one line
    severity: Severity
    reported_by: Command  # verify (also gate and fuzz), gate, ref check (also fuzz), fuzz, audit
    fix: str = ""  # the default fix suggestion; verify's fixes module refines some from what it explored

    @property
    def fails(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def anchor(self) -> str:
        """The rule's heading anchor in docs/rules.md (``## SC001 guard-on-dynamic-dim``)."""
        return f"{self.code.lower()}-{self.name}"


def _rules(*rules: Rule) -> dict[RuleCode, Rule]:
    """The registry, checked as it loads: one rule per code, each code's member named after its rule."""
    out = {r.code: r for r in rules}
    assert list(out) == list(RuleCode), "every RuleCode has exactly one Rule, in code order"
    for r in rules:
        assert r.code.name == r.name.upper().replace("-", "_"), f"{r.code}: member {r.code.name} for rule {r.name}"
    return out


C, E, INC, N, BUG = RuleCode, Severity.ERROR, Severity.INCONCLUSIVE, Severity.NOTE, Severity.INTERNAL
V, G, F, REF, A = Command.VERIFY, Command.GATE, Command.FUZZ, Command.REF, Command.AUDIT

RULES: dict[RuleCode, Rule] = _rules(
    Rule(C.GUARD_ON_DYNAMIC_DIM, "guard-on-dynamic-dim",
         "the kernel branches on a dynamic dim: a guard that does not hold on the whole range", E, V,
         "remove the branch, or state the relation it needs as a contract precondition (requires)"),
    Rule(C.OUTPUT_SHAPE_MISMATCH, "output-shape-mismatch",
         "an output shape differs from the contract's shape for a runtime path", E, V,
         "return the contract's shape on the path"),
    Rule(C.VALUE_SPECIALIZATION, "value-specialization",
         "the kernel needs a dim's concrete value (int(), a constant replacement)", E, V,
         "use the SymInt directly: converting a size to a Python int (int(), a list of ints, .item()) fixes it "
         "to one value; pass the size itself to the tensor factory, or use torch.sym_max/sym_min/sym_ite where a "
         "value is computed from it"),
    Rule(C.ASSERT_NARROWS_RANGE, "assert-narrows-range",
         "a torch._check / runtime assert or range refinement narrows a dim's range", E, V,
         "this range check belongs to the runtime, not to shape inference: express it as a contract "
         "precondition ([domain] requires) or remove it from the meta kernel"),
    Rule(C.INCONCLUSIVE, "inconclusive", "the solver or the translation gave up: nothing was proved", INC, V),
    Rule(C.UNREACHABLE_PATH, "unreachable-path", "a contract path whose precondition (or a [[rejects]] region that) holds for no input of any case",
         N, V, "fix the path's (or the region's) `when`, or delete it"),
    Rule(C.KERNEL_ERROR, "kernel-error", "the kernel raised an error on an input inside the contract's domain", E,
         V, "the meta kernel must not raise for inputs inside the contract's domain; check its "
         "preconditions"),
    Rule(C.STALE_SUPPRESSION, "stale-suppression",
         "a contract suppression matches no violation: the finding it accepted is gone", E, G,
         "delete the [[suppress]] table"),
    Rule(C.DISPATCH_MISMATCH, "dispatch-mismatch",
         "the runtime's dispatch picks another path than the contract's `when` names", E, REF),
    Rule(C.RUNTIME_OUTPUT_SHAPE, "runtime-output-shape",
         "the runtime's output 0 shape differs from the contract's output-0 shape", E, REF),
    Rule(C.RUNTIME_VALUES, "runtime-values",
         "output 0 differs from the float64 math reference beyond the dtype tolerance", E, REF),
    Rule(C.RUNTIME_OUTPUT1_SHAPE, "runtime-output1-shape",
         "output 1 differs from the shape the contract documents for the path", E, REF),
    Rule(C.RUNTIME_REJECTS, "runtime-rejects", "the runtime raises on an input the path's precondition admits", E, REF),
    Rule(C.META_RUNTIME_MISMATCH, "meta-runtime-mismatch",
         "the meta kernel's output 0 differs from the runtime reference's where the contract states nothing "
         "(dtype, memory layout, or a shape no contract path covers)", E, F,
         "return the dtype and layout the runtime returns (e.g. a permuted view where the runtime allocates one "
         "order and returns another)"),
    Rule(C.GUARD_TORCH_CANNOT_DISCHARGE, "guard-torch-cannot-discharge",
         "z3 proves a guard or guard_or_* condition settled over the domain, but torch's own reasoning cannot "
         "decide it from the Dim ranges: torch.export installs the guard and rejects the range", E, V,
         "remove the branch where z3 proves it dead (a condition on the static arguments in front of it), or "
         "compute the value without a guard (torch.sym_min/sym_max) so that export installs none"),
    Rule(C.OUTPUT_DTYPE_MISMATCH, "output-dtype-mismatch",
         "an output's dtype differs from the dtype the contract's path states for the case", E, V,
         "return the runtime's dtype for every input dtype (e.g. float32 statistics for half inputs, but the "
         "input's dtype for float64)"),
    Rule(C.OUTPUT_LAYOUT_MISMATCH, "output-layout-mismatch",
         "an output's strides differ from the layout the contract's path states, somewhere in the domain", E,
         V, "allocate the output in the runtime's memory order (e.g. empty((B, L, H, E)).transpose(1, 2) "
         "where the runtime does that), not contiguous"),
    Rule(C.OUTPUT_PRESENCE_MISMATCH, "output-presence-mismatch",
         "the kernel returns a tensor where the runtime returns None, or None where the runtime returns a tensor",
         E, V, "return None exactly where the runtime returns an undefined tensor"),
    Rule(C.DYNAMIC_SIZE_RANGE, "dynamic-size-range",
         "a data-dependent output size's range in the fake misses values the runtime can return", E, V,
         "give the size the runtime's range: no larger min= in torch.library.get_ctx().new_dynamic_size() "
         "(minimum 0) or constrain_range, not torch.library's deprecated ctx.create_unbacked_symint() (minimum 2), "
         "and a torch._check on it only where the runtime bounds it"),
    Rule(C.META_ACCEPTS_REJECTED_INPUT, "meta-accepts-rejected-input",
         "the meta kernel accepts an input in a [[rejects]] region where the runtime raises", E, V,
         "raise where the runtime does: torch._check the runtime's condition in the meta kernel, with its "
         "message, so that export and compile refuse the input instead of the device"),
    Rule(C.GUARD_IN_TORCH_HELPER, "guard-in-torch-helper",
         "a guard that torch's own helper (reached from a kernel line) installs when torch.export traces the op "
         "does not hold on the whole range of the contract's dims: export rejects the Dim range", E, V,
         "the guard is torch's, asked for by the helper the kernel's line calls (broadcasting, reshaping, "
         "contiguity): give the helper sizes it need not decide (build the shape directly, e.g. unsqueeze/expand "
         "instead of broadcasting a size that may be 1), or make the condition a contract precondition"),
    Rule(C.INTERNAL_ERROR, "internal-error",
         "shapecheck itself failed in this case (a bug): nothing is known about the case; the other cases still "
         "report, and the run exits 4", BUG, V,
         "report the bug with the traceback (in the JSON report's finding; on stderr with SHAPECHECK_DEBUG=1 or "
         "--debug); `--case` runs the other cases alone"),
    Rule(C.RUNTIME_OUTPUT_LAYOUT, "runtime-output-layout",
         "an output's strides or dtype at run time differ from what the contract's output table states", E, REF,
         "state the runtime's layout (e.g. like ARG where it follows an input's memory format) or dtype in the "
         "output table, or fix the runtime where the contract states the intended one"),
    Rule(C.AUDIT_CONSTANT_COMPARISON, "audit-constant-comparison",
         "the kernel branches on a comparison of input sizes with a constant other than 0/1, and the op accepts "
         "both sides", E, A, "remove the branch from shape inference (it copies a runtime choice), or make "
         "it a documented precondition the op checks"),
    Rule(C.AUDIT_ZERO_ONE, "audit-zero-one", "the kernel special-cases a size of 0 or 1 that the op accepts on both sides",
         E, A, "return the general shape for sizes 0 and 1 too, or use guard_or_false where the special "
         "case is only an optimisation"),
    Rule(C.AUDIT_SPECIALIZATION, "audit-specialization", "the kernel needs a size's concrete value (int(), a Python loop "
         "over a size)", E, A, "keep the SymInt: pass the size itself, or use torch.sym_max/sym_min/sym_ite"),
    Rule(C.AUDIT_MODULO, "audit-modulo", "the kernel branches on a size modulo or divided by a constant (alignment)", E,
         A, "compute the aligned size arithmetically ((x + 7) // 8 * 8) instead of branching on it"),
    Rule(C.AUDIT_DATA_DEPENDENT, "audit-data-dependent", "the kernel's shapes depend on tensor data (.item(), nonzero) and "
         "it guards on them", E, A, "declare the data-dependent size (torch.library.get_ctx()."
         "new_dynamic_size()) and check it with torch._check instead of branching"),
    Rule(C.AUDIT_UNDISCHARGEABLE, "audit-undischargeable", "a guard that holds for every input, which torch cannot decide "
         "from its own facts: under unbacked sizes it raises", E, A,
         "state the fact with torch._check before the branch, or drop the always-true test"),
    Rule(C.AUDIT_KERNEL_ERROR, "audit-kernel-error", "the kernel raises under symbolic sizes on inputs it accepts at static "
         "sizes", E, A, "make the kernel work on SymInts (no .item(), no Python-int-only APIs on sizes)"),
    Rule(C.AUDIT_DIM_BRANCH, "audit-dim-branch", "the kernel branches on a relation between input sizes, and the op "
         "accepts both sides", E, A, "return a shape that does not depend on the relation, or make the "
         "relation a precondition (torch._check) if the op demands it"),
    Rule(C.AUDIT_EAGER_SHAPE, "audit-eager-shape",
         "the fake's outputs differ from the eager kernel's on the same inputs: their number, a tensor or None, a "
         "shape, a non-tensor value", E, A,
         "return what the eager kernel returns on the device (the same number of outputs, each of its shape); "
         "where the kernels of two devices differ, the fake must follow the one it stands for, or both must agree"),
    Rule(C.AUDIT_EAGER_DTYPE, "audit-eager-dtype", "an output of the fake has another dtype or device than the eager kernel's",
         E, A, "give each output the eager kernel's dtype (e.g. int32 where it returns int32, not the "
         "input's options) and the input's device, never a fixed one"),
    Rule(C.AUDIT_EAGER_STRIDES, "audit-eager-strides", "an output of the fake has other strides than the eager kernel's "
         "(dims of size > 1)", E, A, "allocate the output in the eager kernel's memory order"),
    Rule(C.AUDIT_FAKE_ACCEPTS, "audit-fake-accepts", "the fake returns where the eager kernel raises (or crashes) on the same "
         "inputs: export and compile accept a program the device refuses", E, A,
         "raise where the eager kernel does: torch._check the eager kernel's condition in the fake"),
    Rule(C.AUDIT_FAKE_REJECTS, "audit-fake-rejects", "the fake raises where the eager kernel returns: export cannot trace a "
         "valid call", E, A, "make the fake accept every input the kernel accepts (a parameter it lacks, "
         "a tensor made on a fixed device)"),
    Rule(C.AUDIT_EAGER_FORMULA, "audit-eager-formula", "the fake's symbolic output formula gives another size than the eager "
         "kernel returns at a drawn point", E, A,
         "compute the output size as the eager kernel does for every size, not only at the sample's"),
    Rule(C.AUDIT_EAGER_ALIAS, "audit-eager-alias", "an output of the fake is a view of an input where the eager kernel's "
         "is a tensor of its own, or the other way round", E, A,
         "return a view where the eager kernel returns one (x.view, x.t(), x.as_strided), and a new tensor (x.clone(), "
         "new_empty) where it does not: code after the op that writes to one writes to the other"),
)
del C, E, INC, N, BUG, V, G, F, REF, A


def rule(code: RuleCode) -> Rule:
    return RULES[code]


def rules_of(command: Command) -> dict[RuleCode, Rule]:
    """The rules a command's runs report (the gate's include verify's, which it runs; fuzz's verify's and ref
    check's)."""
    return {c: r for c, r in RULES.items() if r.reported_by in _REPORTS[command]}


FAILING = frozenset(c for c, r in RULES.items() if r.fails)
#: the rules whose finding makes a run inconclusive (exit 3) when nothing fails it
INCONCLUSIVE = frozenset(c for c, r in RULES.items() if r.severity is Severity.INCONCLUSIVE)
#: the rules whose finding is a bug in shapecheck (exit 4)
INTERNAL = frozenset(c for c, r in RULES.items() if r.severity is Severity.INTERNAL)
#: the rule of an internal error in one case
INTERNAL_ERROR = RuleCode.INTERNAL_ERROR


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


def counted(findings: Sequence[Any]) -> str:
    """``3 violations`` and, where any, ``, 1 inconclusive, 2 notes``: a finding counts by its rule's severity
    (an SC005 leaves a case unproved; it is no violation)."""
    by = {s: sum(1 for v in findings if RULES[v.code].severity is s) for s in Severity}
    text = f"{by[Severity.ERROR] + by[Severity.INTERNAL]} violations"
    if by[Severity.INCONCLUSIVE]:
        text += f", {by[Severity.INCONCLUSIVE]} inconclusive"
    if by[Severity.NOTE]:
        text += f", {by[Severity.NOTE]} notes"
    return text
