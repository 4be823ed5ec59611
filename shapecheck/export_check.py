"""Agreement with torch.export: export a small module that calls the op with a case's arguments, with the
contract's dynamic dims as ``torch.export.Dim``s over the contract ranges, under the kernel being checked.

A disagreement with shapecheck's verdict is explained, never silent: export assumes sizes 0 and 1 away
(``Dim(min=1)`` behaves as ``min=2``), knows nothing of the contract's output shapes, and follows the
example sizes' path.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, replace
from typing import Any

from . import _compat as C
from . import expr as E
from .binding import rebind, schema_signature
from .contract import BoundCase
from .errors import InternalError, ShapecheckError
from .findings import Verdict, Violation
from .report import CaseResult
from .solver import Decision, Outcome, Sat, Solver, restrict
from .trace import Kernel, call_args


@dataclass(frozen=True)
class ExportResult:
    ran: bool
    succeeded: bool | None
    agrees: bool | None
    message: str
    explanation: str = ""
    example: dict[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"ran": self.ran, "succeeded": self.succeeded, "agrees": self.agrees, "message": self.message,
                "explanation": self.explanation or None, "example": self.example}


def equal_classes(case: BoundCase, solver: Solver) -> dict[str, str]:
    """Dim -> representative, for dims the domain forces equal (export wants one ``Dim`` for them)."""
    rep: dict[str, str] = {}
    dyn = [d.name for d in case.dims if d.dynamic]
    for i, a in enumerate(dyn):
        if a in rep:
            continue
        rep[a] = a
        for b in dyn[i + 1:]:
            if b not in rep and solver.implies([case.domain], E.Cmp("==", E.Var(a), E.Var(b))).outcome == Outcome.PROVED:
                rep[b] = a
    return rep


def example_sizes(case: BoundCase, solver: Solver, classes: dict[str, str]) -> dict[str, int] | None:
    """Example sizes for export: inside the domain, each dynamic dim >= 2 (export specialises 0 and 1) and
    distinct across classes where the domain allows (equal sizes would be unified), as small as possible."""
    dyn = [d for d in case.dims if d.dynamic]
    conds = [case.domain] + [E.Cmp(">=", E.Var(d.name), E.Const(max(2, d.min))) for d in dyn]
    if solver.satisfiable(conds).sat is not Sat.SAT:
        conds = [case.domain]
    reps = sorted(set(classes.values()))
    for i, a in enumerate(reps):
        for b in reps[i + 1:]:
            trial = conds + [E.Cmp("!=", E.Var(a), E.Var(b))]
            if solver.satisfiable(trial).sat is Sat.SAT:
                conds = trial
    model = solver.small_model(conds)
    return None if model is None else restrict(model, [d.name for d in case.dims])


def run_export(kernel: Kernel, op: Any, case: BoundCase, sizes: dict[str, int],
               classes: dict[str, str] | None = None) -> tuple[bool | None, str]:
    """Export the op call at ``sizes`` with dynamic dims; True when export succeeded, None when the run
    says nothing about the kernel under test (it could not be set up, or export never called it)."""
    import torch
    from torch.export import Dim, export

    classes = classes or {d.name: d.name for d in case.dims if d.dynamic}
    made = {r: Dim(r, min=case.contract.dim(r).min, max=case.contract.dim(r).max) for r in set(classes.values())}
    dims = {name: made[r] for name, r in classes.items()}
    tensors: list[Any] = []
    dyn_specs: list[dict[int, Any]] = []

    dim_at: dict[str, tuple[int, int]] = {}  # dim -> (input, axis) that carries it, for int(s) arguments

    def make_tensor(a):
        shape = [E.evaluate(i, sizes) for i in a.shape.items]  # a composite size (C * r * r) is static here
        for j, i in enumerate(a.shape.items):
            if isinstance(i, E.Var):
                dim_at.setdefault(i.name, (len(tensors), j))
        dtype = C.DTYPES[a.dtype]
        t = torch.zeros(shape, dtype=dtype) if dtype == torch.bool else torch.randn(shape).to(dtype)
        spec = {j: dims[i.name] for j, i in enumerate(a.shape.items) if isinstance(i, E.Var) and i.name in dims}
        tensors.append(t)
        dyn_specs.append(spec)
        return _Slot(len(tensors) - 1)

    # the op is called as the op is (by its schema); the dispatcher then calls the kernel, rebound to its signature
    as_op = replace(kernel, signature=schema_signature(kernel.schema)) if kernel.schema is not None else kernel
    args, kwargs = call_args(as_op, case, make_tensor, _SizeSlot)
    missing = {n for x in [*args, *kwargs.values()] if isinstance(x, _SizeSlot)
               for n in E.free_names(x.arg.expr) if n not in dim_at}
    if missing:
        return None, (f"not run: int arguments use {', '.join(sorted(missing))}, which no input tensor carries "
                       "(export needs them as tensor sizes)")

    class Call(torch.nn.Module):
        def forward(self, inputs):
            def fill(x):
                try:
                    if isinstance(x, _SizeSlot):  # an int(s) argument: from the inputs' sizes, symbolic in export
                        return C.sym_value(x.arg.expr, {n: inputs[t].size(ax) for n, (t, ax) in dim_at.items()})
                    if isinstance(x, list):  # a tensors argument: a list of slots
                        return [fill(i) for i in x]
                    return inputs[x.index] if isinstance(x, _Slot) else x
                except Exception as err:  # noqa: BLE001 - export would report it as its own failure
                    raise InternalError(f"filling the exported call's arguments failed: "
                                        f"{type(err).__name__}: {err}") from err

            out = op(*[fill(a) for a in args], **{k: fill(v) for k, v in kwargs.items()})
            return tuple(o for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, torch.Tensor))

    reached: list[bool] = []

    def candidate(*a: Any, **kw: Any) -> Any:
        reached.append(True)
        if kernel.schema is not None and kernel.signature is not None:
            a, kw = rebind(kernel.schema, kernel.signature, a, kw)
        return kernel.fn(*a, **kw)

    install = contextlib.nullcontext() if kernel.op is not None else C.meta_kernel_installed(op, candidate)
    with install, _quiet():
        try:
            export(Call(), (tuple(tensors),), dynamic_shapes=(tuple(dyn_specs),), strict=True)
            if kernel.op is None and not reached:
                return None, ("not comparable: export never called the candidate kernel (torch reaches this "
                               "op through its own fake implementation, not the Python meta table)")
            return True, "export succeeded"
        except Exception as err:  # noqa: BLE001 - export's own failure is the datum here, whatever its type
            ours = _shapecheck_error(err)
            if ours is not None:  # a failure of shapecheck's own argument filling: never "export failed"
                raise ours from err
            text = str(err).strip()
            return False, f"{type(err).__name__}: {text[:600]}"
        finally:
            C.reset_dynamo()


def _shapecheck_error(err: BaseException) -> ShapecheckError | None:
    """A shapecheck error anywhere in the chain export wrapped ``err`` in (dynamo re-raises its own types)."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, ShapecheckError):
            return err
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return None


class _Slot:
    def __init__(self, index: int):
        self.index = index


class _SizeSlot:
    def __init__(self, arg: Any):
        self.arg = arg


@contextlib.contextmanager
def _quiet():
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(previous)


def confirm(case: BoundCase, result: CaseResult, violations: list[Violation], kernel: Kernel, op: Any,
            solver: Solver) -> ExportResult:
    if result.skipped:
        return ExportResult(False, None, None, f"case skipped: {result.skipped}")
    classes = equal_classes(case, solver)
    sizes = example_sizes(case, solver, classes)
    if sizes is None:
        return ExportResult(False, None, None, "no example sizes satisfy the domain")
    ok, message = run_export(kernel, op, case, sizes, classes)
    if ok is None:
        return ExportResult(False, None, None, message, example=sizes)
    if result.verdict == Verdict.INCONCLUSIVE:
        return ExportResult(True, ok, None, message, "shapecheck was inconclusive: nothing to agree with", sizes)
    agrees = ok == (result.verdict == Verdict.PASS)
    why = "" if agrees else explain(case, violations, ok, message, solver)
    return ExportResult(True, ok, agrees, message, why, sizes)


def explain(case: BoundCase, violations: list[Violation], export_ok: bool, message: str, solver: Solver) -> str:
    """Why export and shapecheck disagree on a case."""
    if not export_ok:
        return ("export failed although shapecheck proved the kernel guard-free and right on every path; export "
                "traces more than the meta kernel (dynamo, the module, the example sizes), so the cause lies "
                f"outside the kernel's shape logic: {message.splitlines()[0] if message else ''}")
    reasons = []
    ge2 = [E.Cmp(">=", E.Var(d.name), E.Const(2)) for d in case.dims if d.dynamic]
    for v in violations:
        if v.code in ("SC001", "SC003", "SC004"):
            cond = v.node
            if cond is not None and v.code != "SC003":
                decided = solver.decide([case.domain, *ge2], cond)[0] if _is_bool(cond) else Decision.BOTH
                if decided in (Decision.TRUE, Decision.FALSE):
                    pts = [p for p in (v.witness, v.counterexample) if p]
                    seen = " and ".join(", ".join(f"{k}={p[k]}" for k in v.dims if k in p) for p in pts)
                    reasons.append(
                        f"{v.code} `{v.expr}`: export's 0/1 assumption. export treats Dim(min=1) like min=2 and "
                        f"never traces sizes 0 or 1; for every size >= 2 the guard is {decided.value}, so export sees "
                        f"no guard. shapecheck models size 1 and reaches both sides ({seen})")
                    continue
            dims = v.dims
            if len(dims) > 1:
                reasons.append(f"{v.code} `{v.expr}` relates {', '.join(dims)}: export absorbs such guards into its "
                               "derived-dim constraints when the example sizes satisfy them, instead of rejecting")
            else:
                reasons.append(f"{v.code} `{v.expr}`: export followed the example sizes' side of the guard; the "
                               "other side was never traced and the range check did not catch it")
        elif v.code == "SC002":
            reasons.append(f"SC002 on {v.path}: export has no contract, so it cannot know output 0 should be "
                           f"{_shape_text(v)}; the traced graph is consistent with the meta kernel")
        elif v.code == "SC007":
            reasons.append(f"SC007: the kernel raised on a domain point ({v.counterexample}) export's example did "
                           "not reach")
    return "; ".join(dict.fromkeys(reasons)) or "export succeeded while shapecheck failed, for no reason shapecheck can name"


def _shape_text(v: Violation) -> str:
    return E.to_text(v.expected) if v.expected is not None else "the contract's shape"


def _is_bool(node: E.Node) -> bool:
    return isinstance(node, (E.Cmp, E.And, E.Or, E.Not)) or node in (E.TRUE, E.FALSE)

