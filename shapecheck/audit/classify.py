"""The audit's classes of guards, asserts and specialisations, and which rule each finding class reports.

A guard the kernel raises on an op's input sizes is one of:

- a **relation** (not a finding): the op rejects one side. At a point on that side, next to the example
  the op accepts, the kernel raises at static sizes (or the kernel asserts it). The accepted side becomes
  an inferred ``requires``, and exploration goes on with it assumed;
- otherwise both sides are inputs the op accepts, and the kernel branches between them. The class follows
  the guard's form: it needs a size's value (``int()``), a modulo or alignment, a comparison with a
  constant other than 0/1, a 0/1 special case, or a comparison between input dims.

Torch-free and z3-free: works on contract-language expressions (``expr``).
"""

from __future__ import annotations

from ..logic import expr as E
from ..rules import RuleCode

#: finding class -> rule code, in the order the report ranks them (most likely to break torch.export first)
CLASSES: dict[str, RuleCode] = {
    "eager-shape": RuleCode.AUDIT_EAGER_SHAPE,
    "fake-rejects": RuleCode.AUDIT_FAKE_REJECTS,
    "eager-formula": RuleCode.AUDIT_EAGER_FORMULA,
    "constant-comparison": RuleCode.AUDIT_CONSTANT_COMPARISON,
    "specialization": RuleCode.AUDIT_SPECIALIZATION,
    "modulo": RuleCode.AUDIT_MODULO,
    "dim-branch": RuleCode.AUDIT_DIM_BRANCH,
    "kernel-error": RuleCode.AUDIT_KERNEL_ERROR,
    "data-dependent": RuleCode.AUDIT_DATA_DEPENDENT,
    "undischargeable": RuleCode.AUDIT_UNDISCHARGEABLE,
    "eager-dtype": RuleCode.AUDIT_EAGER_DTYPE,
    "eager-strides": RuleCode.AUDIT_EAGER_STRIDES,
    "eager-alias": RuleCode.AUDIT_EAGER_ALIAS,
    "fake-accepts": RuleCode.AUDIT_FAKE_ACCEPTS,
    "zero-one": RuleCode.AUDIT_ZERO_ONE,
}
#: the classes a comparison with the eager kernel finds (the others come from the symbolic exploration)
DIFFERENTIAL = frozenset({"eager-shape", "eager-dtype", "eager-strides", "eager-alias", "fake-accepts",
                          "fake-rejects", "eager-formula"})
RANK = {name: i for i, name in enumerate(CLASSES)}
RELATION = "relation"


def classify_guard(node: E.Node) -> str:
    """The finding class of a branch (both sides accepted by the op) on ``node``, from its form."""
    kinds = [_comparison_kind(c) for c in _comparisons(node)]
    if _has_modulo(node) and (_has_modulo(node, ("%",)) or not kinds or set(kinds) != {"zero-one"}):
        # a floor division only inside a test for 0 or 1 (an output's numel, ``S * (L // 2 + 1) == 0``) is that
        # test, not an alignment
        return "modulo"
    if not kinds:
        return "constant-comparison"
    return min(kinds, key=RANK.__getitem__)


def _comparisons(node: E.Node) -> list[E.Cmp]:
    if isinstance(node, E.Cmp):
        return [node]
    if isinstance(node, (E.And, E.Or)):
        return [c for a in node.args for c in _comparisons(a)]
    if isinstance(node, E.Not):
        return _comparisons(node.operand)
    return []


def _comparison_kind(c: E.Cmp) -> str:
    """One comparison: against a constant (0/1 or another), or between expressions of dims."""
    left, right, op = c.left, c.right, c.op
    if isinstance(left, E.Const) and not isinstance(right, E.Const):
        left, right, op = right, left, {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
    if isinstance(right, E.Const) and isinstance(right.value, int):
        extra = _additive_constants(left)
        if extra - {0, 1, -1}:
            return "constant-comparison"
        # the boundary between the two sides: x < 2 and x >= 2 split at 1, like x <= 1
        boundary = right.value - 1 if op in ("<", ">=") else right.value
        return "zero-one" if boundary in (0, 1) else "constant-comparison"
    if (_additive_constants(left) | _additive_constants(right)) - {0, 1, -1}:
        return "constant-comparison"
    return "dim-branch"


def _additive_constants(node: E.Node) -> set[int]:
    """Integer constants added to or subtracted from dims (``x + 8``); coefficients (``2*x``) do not count."""
    if isinstance(node, E.Const) and isinstance(node.value, int):
        return {node.value}
    if isinstance(node, E.Arith) and node.op in ("+", "-"):
        return _additive_constants(node.left) | _additive_constants(node.right)
    if isinstance(node, E.Neg):
        return _additive_constants(node.operand)
    if isinstance(node, E.Call):
        return set().union(*(_additive_constants(a) for a in node.args))
    return set()


def _has_modulo(node: E.Node, ops: tuple[str, ...] = ("%", "//")) -> bool:
    """A ``%`` or a ``//`` (of ``ops``) by a constant other than 1 anywhere in the guard (alignment, divisibility)."""
    if isinstance(node, E.Arith) and node.op in ops and isinstance(node.right, E.Const) \
            and node.right.value not in (1, -1):
        return True
    return any(_has_modulo(child, ops) for child in _children(node))


def _children(node: E.Node) -> tuple[E.Node, ...]:
    if isinstance(node, (E.Arith, E.Cmp)):
        return (node.left, node.right)
    if isinstance(node, (E.And, E.Or, E.Call)):
        return tuple(node.args)
    if isinstance(node, (E.Not, E.Neg)):
        return (node.operand,)
    if isinstance(node, E.Ite):
        return (node.cond, node.then, node.other)
    return ()


def raw_class(raw: str, is_specialization: bool) -> str:
    """The class of a guard outside the contract language, from torch's own text."""
    if is_specialization:
        return "specialization"
    if "Mod(" in raw or "FloorDiv(" in raw or "%" in raw:
        return "modulo"
    return "constant-comparison"
