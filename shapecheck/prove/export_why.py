"""Why torch.export and shapecheck disagree on a case, where the cause is established: export's 0/1
assumption, the example sizes' side of a guard, a guard kept as a check of the exported program's inputs, or
what export has no contract for (output shapes, dtypes, strides). Anything else is "not explained"."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..contract.model import BoundCase
from ..findings import Finding
from ..logic import expr as E
from ..logic.solver import Decision, Outcome, Solver, restrict
from ..rules import RuleCode

#: exports again at other example sizes: (export's verdict or None, its message)
Retry = Callable[[dict[str, int]], tuple[bool | None, str]]
#: runs the exported program at other sizes: the error it raised, or None
RunAt = Callable[[dict[str, int]], "str | None"]
#: exports at the example with every dim static: (export's verdict or None, its message)
Static = Callable[[], tuple[bool | None, str]]
#: the torch function that reports a constraint violation (torch 2.13)
CONSTRAINT_REPORT = "_suggest_or_raise_constraint_violation"


def explain(case: BoundCase, violations: list[Finding], export_ok: bool, message: str, solver: Solver,
            retry: Retry | None = None, example: dict[str, int] | None = None, run_at: RunAt | None = None,
            static: Static | None = None) -> str:
    """Why export and shapecheck disagree on a case, where the cause is established. ``retry(sizes)`` exports
    again at other example sizes, ``run_at(sizes)`` runs the exported program there, ``static()`` exports at the
    example with every dim static (experiments that can establish a cause)."""
    if not export_ok:  # a cause only where export's own message and z3 establish it, else export's words
        return (_equal_dims(case, message, solver) or _raised_minimum(case, message, solver)
                or _composite_relation(case, message)
                or _scalar_output(message) or _static_too(message, static)
                or f"not explained; export said: {first_line(message)}")
    reasons = []
    # export traces a dynamic dim from 2 up, unless the domain keeps it below 2 (a static size for export)
    ge2 = [E.Cmp(">=", E.Var(d.name), E.Const(2)) for d in case.dims if d.dynamic
           and (solver.extreme([case.domain], d.name, lowest=False) or 2) >= 2]
    for v in violations:
        if v.code in (RuleCode.GUARD_ON_DYNAMIC_DIM, RuleCode.VALUE_SPECIALIZATION, RuleCode.ASSERT_NARROWS_RANGE,
                      RuleCode.GUARD_IN_TORCH_HELPER):
            cond = v.node
            kept = _kept_as_runtime_check(case, v, solver, ge2, run_at, example, _pins(v, violations, example))
            if kept:
                reasons.append(kept)
                continue
            if cond is not None and v.code != RuleCode.VALUE_SPECIALIZATION:
                decided = solver.decide([case.domain, *ge2], cond)[0] if _is_bool(cond) else Decision.BOTH
                pts = [p for p in (v.witness, v.counterexample) if p]
                lows = sorted({d.min for d in case.dims if d.name in v.dims and d.min < 2})
                # export's 0/1 assumption explains it only where a dim of the guard may be below 2 and the
                # finding has a real point (else it is not explained)
                if decided in (Decision.TRUE, Decision.FALSE) and lows and pts:
                    seen = " and ".join(", ".join(f"{k}={p[k]}" for k in v.dims if k in p) for p in pts)
                    low = " and ".join(str(n) for n in lows)
                    reasons.append(
                        f"{v.code} `{v.expr}`: export's 0/1 assumption. export's Dims start at 2 whatever their "
                        f"min, and it never traces sizes 0 or 1; for every size >= 2 the guard is {decided.value}, so "
                        f"export sees no guard. shapecheck models the contract's sizes from {low} and reaches both "
                        f"sides ({seen})")
                    continue
                other = _other_side(case, v, solver, ge2, retry, example)
                if other:
                    reasons.append(other)
        elif v.code == RuleCode.OUTPUT_SHAPE_MISMATCH:
            which = re.match(r"(output \d+)", v.expr)
            reasons.append(f"{v.code} on {v.path}: export has no contract, so it cannot know "
                           f"{which.group(1) if which else 'the output'} should be {_shape_text(v)}; the traced "
                           "graph is consistent with the meta kernel")
        elif v.code in (RuleCode.OUTPUT_DTYPE_MISMATCH, RuleCode.OUTPUT_LAYOUT_MISMATCH, RuleCode.OUTPUT_PRESENCE_MISMATCH):
            what = {RuleCode.OUTPUT_DTYPE_MISMATCH: "dtype", RuleCode.OUTPUT_LAYOUT_MISMATCH: "strides",
                    RuleCode.OUTPUT_PRESENCE_MISMATCH: "presence (None or a tensor)"}[v.code]
            reasons.append(f"{v.code} on {v.path}: export has no contract for an output's {what}, so it follows the "
                           "meta kernel; the traced graph is consistent with it")
        elif v.code == RuleCode.DYNAMIC_SIZE_RANGE and "not a data-dependent size" in v.message:
            reasons.append(f"{v.code} on {v.path}: export has no contract for the runtime's data-dependent size, so it "
                           "follows the fake's plain size; the exported program gives that size where the runtime may "
                           f"give another ({v.counterexample})")
        elif v.code == RuleCode.DYNAMIC_SIZE_RANGE:
            reasons.append(f"{v.code} on {v.path}: export traces the fake's range for a data-dependent size and has no "
                           "contract for the runtime's, so it succeeds; the exported program asserts the fake's range "
                           f"when it runs, and fails where the runtime gives a value outside it ({v.counterexample})")
        elif v.code == RuleCode.META_ACCEPTS_REJECTED_INPUT:
            reasons.append(f"{v.code} on {v.path}: the meta kernel accepts inputs the runtime rejects, so export "
                           "accepts them too (the finding is that export succeeds where the device would refuse)")
        elif v.code == RuleCode.KERNEL_ERROR:
            reasons.append(f"{v.code}: the kernel raised on a domain point ({v.counterexample}) export's example did "
                           "not reach")
    return "; ".join(dict.fromkeys(reasons)) or f"not explained; export said: {first_line(message)}"


#: the words of a reason that is no disagreement: export's program refuses a point of the contract's domain, so
#: export's outcome is shapecheck's fail (prove.export makes the case agree)
KEPT_GUARD = "export succeeded, but kept the guard as a check of the exported program's inputs"
#: how the exported program reports a guard it kept as a check of its inputs (torch 2.13: its guards
#: function), or a deferred runtime assertion
_PROGRAM_GUARD = re.compile(r"Guard failed|Runtime assertion failed", re.I)


def _pins(v: Finding, violations: Sequence[Finding], example: dict[str, int] | None) -> list[E.Node]:
    """Every other guard finding's condition on the side export's example takes: a point on ``v``'s other side
    that keeps them is one where only ``v``'s guard can refuse it (hunt 53: the program's ``A == C`` check was
    quoted as the kept ``B // 2 + 1 == A``)."""
    out: list[E.Node] = []
    for u in violations:
        if u is v or u.node is None or example is None or not _is_bool(u.node):
            continue
        try:
            at = E.evaluate(u.node, example)
        except Exception:  # noqa: BLE001 - a name the example lacks: no pin
            continue
        if isinstance(at, bool):
            out.append(u.node if at else E.negate(u.node))
    return out


def _kept_as_runtime_check(case: BoundCase, v: Finding, solver: Solver, ge2: Sequence[E.Node],
                           run_at: RunAt | None, example: dict[str, int] | None,
                           pins: Sequence[E.Node] = ()) -> str:
    """Export succeeded, but kept the guard (or the specialised value) as a check of the exported program's
    inputs rather than rejecting the Dim ranges (split's number of chunks, a floor division of two Dims): run
    at sizes >= 2 on the guard's other side, the program raises that check. Empty unless it does. The point keeps
    the other guards (``pins``) on the example's side where one does, so that the check raised is this one's."""
    if run_at is None or example is None or v.node is None:
        return ""
    at_example = E.evaluate(v.node, example)
    if v.code == RuleCode.VALUE_SPECIALIZATION:
        if not isinstance(at_example, int) or isinstance(at_example, bool):
            return ""
        other: E.Node = E.Cmp("!=", v.node, E.Const(at_example))
    elif isinstance(at_example, bool) and _is_bool(v.node):
        other = E.negate(v.node) if at_example else v.node
    else:
        return ""
    point = (solver.small_model([case.domain, *ge2, other, *pins]) if pins else None) \
        or solver.small_model([case.domain, *ge2, other])
    if point is None:
        return ""
    point = restrict(point, [d.name for d in case.dims])
    raised = run_at(point)
    if not raised or not _PROGRAM_GUARD.search(raised):
        return ""
    show = ", ".join(f"{k}={x}" for k, x in point.items())
    ex = ", ".join(f"{k}={example[k]}" for k in v.dims if k in example)
    side = (f"`{v.expr}` is {str(at_example).lower()} at the example ({ex})" if isinstance(at_example, bool)
            else f"`{v.expr}` is {at_example} at the example ({ex})")
    return (f"{v.code} `{v.expr}`: {KEPT_GUARD} instead of rejecting the Dim ranges; run at {show} (the other side "
            f"of the guard from export's example, sizes >= 2) the program raises {raised[:300]}. The program "
            f"accepts only the example's side ({side}): the guard restricts the dims, as shapecheck says")


def _other_side(case: BoundCase, v: Finding, solver: Solver, ge2: Sequence[E.Node], retry: Retry | None,
                example: dict[str, int] | None) -> str:
    """Export succeeded at example sizes on one side of the guard: export again at sizes >= 2 on the other
    side. If that fails, the cause is established: export followed the example's side."""
    if retry is None or example is None or not _is_bool(v.node):
        return ""
    side = E.evaluate(v.node, example)
    if not isinstance(side, bool):
        return ""
    other = E.negate(v.node) if side else v.node
    keep = [E.Cmp("==", E.Var(n), E.Const(x)) for n, x in example.items() if n not in v.dims]
    at = solver.small_model([case.domain, *ge2, other, *keep])
    if at is None:
        return ""
    at = restrict(at, [d.name for d in case.dims])
    ok, msg = retry(at)
    if ok is not False or not (CONSTRAINT_REPORT in msg or "Constraints violated" in msg
                               or any(re.search(rf"\b{re.escape(n)}\b", msg) for n in v.dims)):
        return ""  # export's failure must name a dim of the guard: else it may have another cause
    show = lambda p: ", ".join(f"{k}={p[k]}" for k in v.dims if k in p)  # noqa: E731
    return (f"{v.code} `{v.expr}`: export followed the example sizes' side of the guard ({show(example)}: "
            f"{str(side).lower()}) and accepted it; exported again at sizes on the other side ({show(at)}), it "
            f"fails: {first_line(msg)}")


def conjuncts(node: E.Node) -> tuple[E.Node, ...]:
    return node.args if isinstance(node, E.And) else (node,)


def first_line(message: str) -> str:
    return message.splitlines()[0] if message else ""


_SUGGESTED_MIN = re.compile(r"\b(\w+) = Dim\('\1', min=(\d+)")


def _raised_minimum(case: BoundCase, message: str, solver: Solver) -> str:
    """Export asks a higher minimum for a dim (its suggested fix ``X = Dim('X', min=m)``) because the contract
    relates X to other dims (``padding0 < A1``), which Dims cannot state, and export traces every other dynamic
    dim at 2 or more: z3 proves the domain and those sizes imply X >= m, and the domain allows X < m (where
    another dim is 0 or 1). Empty unless both are established."""
    names = {d.name for d in case.dims if d.dynamic}
    for x, m in _SUGGESTED_MIN.findall(message):
        if x not in names:
            continue
        least = int(m)
        others = [E.Cmp(">=", E.Var(n), E.Const(2)) for n in sorted(names - {x})]
        raised = solver.implies([case.domain, *others], E.Cmp(">=", E.Var(x), E.Const(least)))
        below = solver.small_model([case.domain, E.Cmp("<", E.Var(x), E.Const(least))])
        if raised.outcome is not Outcome.PROVED or below is None:
            continue
        related = sorted(n for n in E.free_names(case.domain) if n != x and n in names
                         and any(x in E.free_names(p) and n in E.free_names(p) for p in conjuncts(case.domain)))
        if not related:
            continue
        at = ", ".join(f"{n}={below[n]}" for n in [x, *related] if n in below)
        return (f"export asks Dim('{x}', min={least}): the contract relates {x} to {', '.join(related)}, which "
                f"Dims cannot state, and export traces every other dynamic dim at sizes >= 2, where the domain "
                f"implies {x} >= {least} (z3); the contract also allows {x} < {least} (e.g. {at}), where one of "
                f"them is below 2. shapecheck checks the contract's whole range")
    return ""


_EQUAL = re.compile(r"The values of (\w+) = .*? and (\w+) = .*? must always be equal")


def _equal_dims(case: BoundCase, message: str, solver: Solver) -> str:
    """Export's trace needed two dims equal ("The values of X ... and Y ... must always be equal": a guard it
    installed at the example sizes) while the contract's domain allows them to differ: a relation Dims cannot
    express (``B == Bo or B == 1``). Empty unless both halves are established."""
    names = {d.name for d in case.contract.dims}
    for x, y in _EQUAL.findall(message):
        if x not in names or y not in names:
            continue
        apart = solver.small_model([case.domain, E.Cmp("!=", E.Var(x), E.Var(y))])
        if apart is None:
            continue
        at = ", ".join(f"{n}={apart[n]}" for n in (x, y))
        return (f"export's trace installed the guard {x} == {y} at the example sizes (its message: the values "
                f"of {x} and {y} must always be equal), but the contract's domain allows them to differ (e.g. "
                f"{at}), which torch.export's Dims cannot state; shapecheck traced both sides")
    return ""


_RELATED = re.compile(r"The values of (\w+) = \S+ must always be related to the values of .+? by \1 = (.+?)\.?\s*$",
                      re.M)


def _composite_relation(case: BoundCase, message: str) -> str:
    """Export related an input size over several dims, which had a Dim of its own (``composite.composite_axes``:
    ``self_size0`` for ``H * H``), to the other dims by an expression no Dim can state ("self_size0 = H**2": a
    derived Dim is linear in one root): export cannot express the contract; held at an example value instead,
    the size would pin the dims (hunt 35: view from ``(H * H, A)``). Empty for any other name."""
    composite = {"".join(c if c.isalnum() else "_" for c in f"{a.name}_size{j}"): item for a in case.args
                 if a.kind == "tensor" and a.shape is not None for j, item in enumerate(a.shape.items)
                 if not isinstance(item, (E.Var, E.Const))}
    for name, relation in _RELATED.findall(message):
        item = composite.get(name.rstrip("_"))
        if item is not None:
            return (f"export cannot express this contract: the input size {E.to_text(item)} has a Dim of its own "
                    f"({name}), as a user gives it, and export's trace relates it to the other dims by "
                    f"{name} = {relation}, which no Dim states (a derived Dim is linear in one root); held at an "
                    "example value instead, the size would pin its dims. shapecheck's verdict stands")
    return ""


_NON_TENSOR = re.compile(r"torch\.\* op returned non-Tensor")


def _scalar_output(message: str) -> str:
    """Export cannot trace the op at all when it returns a Python scalar (an int or bool output: a graph break,
    which strict export refuses): the contract is outside what export can express, so no verdict of export's."""
    if not _NON_TENSOR.search(message):
        return ""
    kind = re.search(r"example_value type: (\w+)", message)
    return (f"export cannot express this contract: the op returns a Python {kind.group(1) if kind else 'scalar'}, "
            "not a tensor, and strict export refuses any op whose output is not a tensor (a graph break: "
            f"{first_line(message)}), whatever its kernel does")


#: failures of torch.export's own tracing, not of a kernel: a data-dependent size left inside a sparse output
#: (``_spdiags``'s nnz: "Pending unbacked symbols {u0} not in returned outputs"), a dynamo graph break
_TRACER_ERRORS = ("PendingUnbackedSymbolNotFound:", "Unsupported:")


def _static_too(message: str, static: Static | None) -> str:
    """Where export's own tracing failed, and fails the same way with every dim static at the same example: the
    failure is not about the contract's dims, so export has no verdict on them."""
    if static is None or not message.startswith(_TRACER_ERRORS):
        return ""
    ok, again = static()
    if ok is not False or first_line(again) != first_line(message):
        return ""
    return (f"export cannot express this contract: its own tracing fails the same way with every dim static, at "
            f"the same example ({first_line(message)}), so the failure is not about the dims the contract checks")


def _shape_text(v: Finding) -> str:
    from ..logic.simplify import shown

    return shown(v.expected) if v.expected is not None else "the contract's shape"


def _is_bool(node: E.Node) -> bool:
    return isinstance(node, (E.Cmp, E.And, E.Or, E.Not)) or node in (E.TRUE, E.FALSE)

