"""``shapecheck ref check``: run the op's runtime reference (``runtime.reference.reference_for``: the metal_ref ports of the
MPS attention paths) on inputs that satisfy each contract path's precondition, and check dispatch, output
shapes, values and the documented second output, with the rule codes, tolerances and quirks ``fuzz op`` uses.

Inputs are z3 models of domain /\\ when, aimed at the boundary values the contract's expressions name
(``c-1, c, c+1`` for every constant a dim is compared with, and 1), then at random points; sizes are kept
small by minimisation. Where Apple MPS is available the real op runs too and is compared with the port.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import time
from dataclasses import dataclass, field
from typing import Any

from ..contract.model import BoundCase, BoundPath, Contract
from ..errors import TargetError
from ..findings import Finding, PathId, Verdict
from ..kernel.sources import Kernel
from ..logic import expr as E
from ..logic.solver import Bounds, Sat, Solver, restrict
from ..rules import RuleCode
from ..search.boundaries import interesting_values as _interesting
from ..search.examples import Example, largest_storage
from ..trace.run import call_args, made
from .ref_crash import Outcome, RefResume, at_point
from .ref_findings import SIDE_CAP, MetaRefuses, PathRun, RefFinding, first_line, meta_outputs
from .reference import RUNTIME_RULES, RuntimeReference, Unmodelled, compare_values, reference_for
from .reference import accepted_by as accepted_by
from .reference import live_runtime_suppressions as live_runtime_suppressions

REF_RULES = RUNTIME_RULES


@dataclass
class RefReport:
    op: str
    contract: str
    verdict: Verdict  # fail on a finding, else pass when an input ran, else inconclusive
    paths: list[PathRun]
    seconds: float
    mps: str
    unexercised: list[str] = field(default_factory=list)  # suppressions no input matched (sampling)

    @property
    def findings(self) -> list[RefFinding]:
        return [f for p in self.paths for f in p.findings if not f.suppressed]

    @property
    def suppressed(self) -> list[RefFinding]:
        return [f for p in self.paths for f in p.findings if f.suppressed]

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code

    def as_findings(self) -> tuple[Finding, ...]:
        """Each runtime finding (suppressed ones included, marked) as a finding of its rule on its contract path."""
        return tuple(Finding(code=f.code, case=f.case, path=PathId(f.path, f.era), expr=f"{f.code} on {f.path}@{f.era}",
                             counterexample={k: int(v) for k, v in f.sizes.items()}, message=f.message,
                             suppressed=f.suppressed)
                     for f in self.findings + self.suppressed)

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "contract": self.contract, "verdict": self.verdict.value, "mps": self.mps,
                "paths": [p.to_json() for p in self.paths], "findings": [f.to_json() for f in self.findings],
                "suppressed": [f.to_json() for f in self.suppressed], "unexercised_suppressions": self.unexercised,
                "seconds": round(self.seconds, 3)}


def interesting_values(node: E.Node, dims: dict[str, Any]) -> dict[str, set[int]]:
    """For each dim, its least value and the constants it is compared with in ``node`` and their neighbours,
    within range and ``SIDE_CAP`` (``search.boundaries.interesting_values``, as the fuzz plan harvests them)."""
    return _interesting(node, dims, SIDE_CAP)


def points_for_path(contract: Contract, era: str, path_id: str, examples: int, seed: int,
                    solver: Solver, spread: bool = False) -> list[tuple[BoundCase, BoundPath, dict[str, int]]]:
    """Inputs inside domain /\\ when of one path: boundary targets first, then random points (one dim drawn,
    the others least; ``spread``: every dim drawn, for a runtime whose output depends on them all together,
    such as a real kernel's strides)."""
    rng = random.Random(f"{seed}:{era}:{path_id}")
    reach = []
    for case in contract.cases():
        p = next((p for p in case.paths if p.id == path_id and p.era == era), None)
        if p is not None and solver.satisfiable([case.domain, p.when]).sat is Sat.SAT:
            reach.append((case, p))
    if not reach:
        return []
    targets: list[tuple[int, list[E.Node]]] = []
    for i, (case, p) in enumerate(reach):
        dims = {d.name: d for d in case.dims}
        values = interesting_values(E.conj([case.domain, p.when]), dims)
        for name, vals in sorted(values.items()):
            for v in sorted(vals):
                targets.append((i, [E.Cmp("==", E.Var(name), E.Const(v))]))
    rng.shuffle(targets)
    # boundaries: every distinct (dim, value) at least once, spread over cases
    seen_targets: set[str] = set()
    ordered = []
    for i, extra in targets:
        key = E.to_text(extra[0])
        if key not in seen_targets:
            seen_targets.add(key)
            ordered.append((i, extra))
    ordered += [t for t in targets if t not in ordered]
    randoms: list[tuple[int, list[E.Node]]] = []
    while len(ordered) + len(randoms) < examples + (len(targets) if spread else 0):  # spread: random points too
        i = rng.randrange(len(reach))
        case, _ = reach[i]
        drawn = case.dims if spread else [rng.choice(case.dims)]
        randoms.append((i, [E.Cmp("==", E.Var(d.name), E.Const(rng.randint(d.min, min(d.max, 64)))) for d in drawn]))
    if spread:  # boundaries and random points in turn: least models alone (N=0, C=1) never show a stride
        ordered = [t for pair in itertools.zip_longest(ordered, randoms) for t in pair if t is not None]
    else:
        ordered += randoms
    points = []
    seen: set[tuple] = set()
    for i, extra in ordered:
        if len(points) >= examples:
            break
        case, p = reach[i]
        caps = [E.Cmp("<=", E.Var(d.name), E.Const(SIDE_CAP)) for d in case.dims]
        model = solver.small_model([case.domain, p.when, *caps, *extra])
        if model is None and len(extra) > 1:
            model = _relaxed(solver, [case.domain, p.when, *caps], extra)
        if model is None:
            continue
        sizes = restrict(model, _point_names(contract, case, p))
        if E.evaluate(case.domain, sizes) is not True or E.evaluate(p.when, sizes) is not True:
            continue  # never run an input outside the path
        key = (case.id, tuple(sorted(sizes.items())))
        if key not in seen:
            seen.add(key)
            points.append((case, p, sizes))
    return points


def _point_names(contract: Contract, case: BoundCase, p: BoundPath) -> list[str]:
    """The dims a point of path ``p`` needs a value of: those of the case's arguments, and those that only its
    domain, precondition or outputs name (``C`` in ``Ci == C * r * r``, the output's ``(B, C, H * r, W * r)``)."""
    nodes = [case.domain, p.when, *(o for o in p.outputs if o is not None),
             *(o for o, _ in p.runtime_outputs if o is not None)]
    for spec in p.specs:
        if spec is not None and spec.shape is not None:
            nodes.append(spec.shape)
        if spec is not None and spec.strides is not None:
            nodes.extend(spec.strides)
    used = {d.name for d in case.dims}.union(*(E.free_names(n) for n in nodes))
    return [d.name for d in contract.dims if d.name in used]


def _relaxed(solver: Solver, base: list[E.Node], drawn: list[E.Node]) -> dict[str, int] | None:
    """A point drawn in every dim that the contract's relations refuse (``A1 == B1`` drawn apart): each drawn
    value kept in turn while the relations still allow it, the rest left to the least model. Without this, a
    contract that relates two dims got almost no drawn points with every dim drawn, only its least ones."""
    kept: list[E.Node] = []
    for cond in drawn:
        if solver.satisfiable([*base, *kept, cond]).sat is Sat.SAT:
            kept.append(cond)
    return solver.small_model([*base, *kept])


#: elements of storage a real input of ref check may span (2**28: a gigabyte of float32)
REAL_ELEMENTS = 2**28


def _largest_output(p: BoundPath, sizes: dict[str, int]) -> int:
    """The most elements an output of path ``p`` holds at ``sizes`` by the contract's shapes (0 where a shape is
    not known there)."""
    most = 0
    for shape in (*p.outputs, *(o for o, _ in p.runtime_outputs)):
        if shape is None:
            continue
        try:
            value = E.evaluate(shape, sizes)
        except Exception:  # noqa: BLE001 - a shape the point does not decide (a data-dependent size): unbounded here
            continue
        if isinstance(value, tuple) and all(type(v) is int for v in value):
            most = max(most, math.prod(max(v, 0) for v in value))
    return most


def _out_of_memory(err: BaseException) -> bool:
    """torch's allocator refusing a size (``DefaultCPUAllocator: can't allocate memory``, CUDA out of memory)."""
    text = str(err)
    return "can't allocate memory" in text or "out of memory" in text.lower() or "CUBLAS_STATUS_ALLOC_FAILED" in text


def check_point(case: BoundCase, p: BoundPath, sizes: dict[str, int], seed: int, mps: bool,
                reference: RuntimeReference | None = None) -> list[RefFinding]:
    """The findings of one input of contract path ``p``: dispatch (SC010), whether the runtime accepts it
    (SC014), output 0's shape (SC011) and values (SC012), output 1's documented shape (SC013). Raises
    ``runtime.reference.Unmodelled`` where the reference cannot run the input."""
    ref = (reference or _reference(case.contract)).for_path(p.id)
    span = largest_storage(Example(case, tuple(sizes.items()), seed))
    if span > REAL_ELEMENTS:  # a storage_offset of 2**62: no real tensor of it can be made here
        raise Unmodelled(f"storage too large for a real tensor: an input spans {span} elements (at most "
                         f"{REAL_ELEMENTS})")
    out_span = _largest_output(p, sizes)
    if out_span > REAL_ELEMENTS:  # the runtime would allocate it (a 10.9 GB padded volume: hunt 56), or be killed
        raise Unmodelled(f"output too large: {out_span} elements (at most {REAL_ELEMENTS})")
    args = ref.arguments(case, sizes, seed)
    want_path = ref.runtime_path(p.id)
    found = []

    def finding(code: RuleCode, message: str) -> RefFinding:
        return RefFinding(code, p.era, p.id, case.id, dict(sizes), message)

    got = ref.select_path(args, p.era)
    if got is not None and got != want_path:  # None: a reference without paths (the op's eager kernel)
        found.append(finding(RuleCode.DISPATCH_MISMATCH, f"the runtime dispatches to {got}, the contract's `when` names {p.id}"))
    try:
        outs = ref.run(args, p.era, want_path)
    except Unmodelled:
        raise
    except MemoryError as err:
        raise Unmodelled(f"the machine could not allocate the runtime's tensors ({first_line(err) or 'MemoryError'})") \
            from None
    except ref.rejects as err:
        if _out_of_memory(err):  # the allocator's refusal is this machine's, not the op's
            raise Unmodelled(f"the machine could not allocate the runtime's tensors ({first_line(err)})") from None
        found.append(finding(RuleCode.RUNTIME_REJECTS, f"{type(err).__name__}: {first_line(err)}"))
        return found
    out0, out1 = outs[0], (outs[1] if len(outs) > 1 else None)
    if getattr(ref, "compares_all_outputs", False):
        found.extend(_against_meta(case, sizes, outs, finding))
    found.extend(_against_tables(p, sizes, outs, finding))
    if p.outputs[0] is not None:
        expected = E.evaluate(p.outputs[0], sizes)
        if tuple(out0.shape) != tuple(expected):
            found.append(finding(RuleCode.RUNTIME_OUTPUT_SHAPE, f"output 0 is {tuple(out0.shape)}, the contract says {tuple(expected)}"))
    if p.runtime_outputs and len(p.runtime_outputs) > 1 and p.runtime_outputs[1][0] is not None and out1 is not None:
        doc1 = E.evaluate(p.runtime_outputs[1][0], sizes)
        if tuple(out1.shape) != tuple(doc1):
            found.append(finding(RuleCode.RUNTIME_OUTPUT1_SHAPE, f"output 1 is {tuple(out1.shape)}, the contract documents {tuple(doc1)} "
                                          f"({p.runtime_outputs[1][1]})"))
    oracle = ref.expected(args, p.era, want_path)
    if oracle is not None and oracle.numel() == out0.numel():
        atol, rtol = ref.tolerance(args, str(out0.dtype).replace("torch.", ""))
        bad = compare_values(out0, oracle, atol, rtol)
        if bad is not None:
            found.append(finding(RuleCode.RUNTIME_VALUES, f"{bad.bad} of {bad.total} values differ from the float64 reference "
                                          f"(max abs error {bad.max_error:.3g}, tolerance {atol:g}+{rtol:g}*|ref|)"))
    if mps:
        found.extend(_compare_mps(case, args, out0, finding))
    return found


def _against_tables(p: BoundPath, sizes: dict[str, int], real: tuple[Any, ...], finding) -> list[RefFinding]:
    """The runtime's outputs against what the path's output tables state of them beyond the shape: the dtype and
    the strides (SC024), compared as the table says (significant strides by default: a size-1 dim's stride
    and an empty tensor's are free, as Inductor's assert_size_stride compares)."""
    from ..contract.dtypes import canonical

    found = []
    for j, spec in enumerate(p.specs):
        x = real[j] if j < len(real) else None
        if spec is None or spec.absent or not hasattr(x, "stride"):
            continue
        dtype = str(x.dtype).removeprefix("torch.")
        if spec.dtype is not None and canonical(spec.dtype) != dtype:
            found.append(finding(RuleCode.RUNTIME_OUTPUT_LAYOUT, f"output {j} has dtype {dtype}, the contract says {spec.dtype}"))
        if spec.strides is None or spec.shape is None or len(x.shape) != len(spec.shape.items):
            continue  # no layout stated, or a shape the other checks report
        # a data-dependent size (``sizes``) is the runtime's own at its place (hunt 42: nonzero's ``(n, 1)`` with a
        # layout was "unbound name n", exit 2)
        at = dict(sizes) | {item.name: int(x.shape[i]) for i, item in enumerate(spec.shape.items)
                            if isinstance(item, E.Var) and item.name in {n for n, _, _ in spec.sizes}}
        if tuple(x.shape) != E.evaluate(spec.shape, at):
            continue  # a shape the other checks report
        want, got, shape = E.evaluate(E.TupleE(spec.strides), at), tuple(x.stride()), tuple(x.shape)
        differ = [i for i, (g, w) in enumerate(zip(got, want)) if g != w and (spec.match == "exact" or shape[i] > 1)]
        if differ and (spec.match == "exact" or 0 not in shape):
            found.append(finding(RuleCode.RUNTIME_OUTPUT_LAYOUT, f"output {j} has strides {got} for shape {shape}, the contract's "
                                          f"{spec.layout} gives {want} ({spec.match} comparison, dims "
                                          f"{', '.join(map(str, differ))})"))
    return found


def _against_meta(case: BoundCase, sizes: dict[str, int], real: tuple[Any, ...], finding) -> list[RefFinding]:
    """The real kernel's outputs against the meta kernel's: shape, dtype, significant strides (SC015), or the
    meta kernel raising where the real one does not (SC007)."""
    from .check import data_dependent_like
    from .reference import outputs_differ

    try:
        meta = meta_outputs(case, sizes)
    except MetaRefuses as refusal:  # the meta kernel refuses an input the real kernel takes
        err = refusal.error
        return [finding(RuleCode.KERNEL_ERROR, f"the meta kernel raises {type(err).__name__} where the runtime runs: {first_line(err)}")]
    if len(meta) != len(real):
        return [finding(RuleCode.META_RUNTIME_MISMATCH, f"the meta kernel returns {len(meta)} outputs, the runtime {len(real)}")]
    for j, (m, r) in enumerate(zip(meta, real)):
        why = None if data_dependent_like(m, r) else outputs_differ(m, r)
        if why is not None:
            return [finding(RuleCode.META_RUNTIME_MISMATCH, f"output {j} of the meta kernel has {why}")]
    return []


def _reference(contract: Contract, device: str = "cpu") -> RuntimeReference:
    ref, why = reference_for(contract.op, device=device)
    if ref is None:
        raise TargetError(f"{contract.file}: {why}")
    return ref


def _compare_mps(case: BoundCase, named: dict[str, Any], out0, finding) -> list[RefFinding]:
    import torch

    from .._torch import core as C
    from ..contract.find import normalize_op

    op = C.resolve_op(normalize_op(case.contract.op))
    kernel = Kernel("mps", lambda *a, **k: None, frozenset())
    args, kwargs = call_args(kernel, case, made(named, lambda t: t.to("mps")))
    real0 = op(*args, **kwargs)[0].cpu()
    out = []
    if tuple(real0.shape) != tuple(out0.shape):
        out.append(finding(RuleCode.RUNTIME_OUTPUT_SHAPE, f"real MPS output 0 is {tuple(real0.shape)}, metal_ref gives {tuple(out0.shape)}"))
    elif not torch.allclose(real0.double(), out0.double(), atol=2e-2, rtol=2e-2, equal_nan=True):
        out.append(finding(RuleCode.RUNTIME_VALUES, "real MPS output 0 differs from metal_ref beyond 2e-2"))
    return out


def mps_available() -> bool:
    import torch

    return bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())


def ref_check(contract: Contract, *, eras: tuple[str, ...] = (), examples: int = 24, seed: int = 0,
              device: str = "cpu", resume: RefResume | None = None) -> RefReport:
    """Run every path of ``contract`` (in ``eras``) on the op's runtime reference (``runtime.reference.reference_for``);
    with the op's eager kernel, also every ``[[rejects]]`` region (``runtime.refcheck_rejects``). ``resume``: the
    inputs an earlier process ran, or crashed on (``runtime.ref_crash``)."""
    ref = _reference(contract, device)
    start = time.perf_counter()
    solver = Solver([Bounds(d.name, d.min, d.max) for d in contract.dims])
    mps = mps_available() and not getattr(ref, "compares_all_outputs", False)
    runs = []
    for p in contract.paths:
        if eras and p.era not in eras:
            continue
        run = PathRun(p.era, p.id)
        runs.append(run)
        if not ref.has_path(p.era, p.id):
            run.note = f"{ref.name} has no port for {p.id} in era {p.era}"
            continue
        points = points_for_path(contract, p.era, p.id, examples, seed, solver,
                                 spread=getattr(ref, "compares_all_outputs", False))
        if not points:
            run.note = "no input satisfies the path's precondition in any case"
        for k, (case, bp, sizes) in enumerate(points):
            found, ran, note = at_point(resume, (p.era, p.id, k), case.id, sizes,
                                        functools.partial(_one_point, case, bp, sizes, seed * 1_000_003 + k, mps, ref))
            run.findings.extend(found)
            run.points += ran
            run.note = run.note or note
    if getattr(ref, "compares_all_outputs", False):
        from .refcheck_rejects import check_rejects

        runs.extend(check_rejects(contract, ref, examples, seed, solver, resume))
    unexercised = _suppress(contract, runs)
    failing = any(not f.suppressed for r in runs for f in r.findings)
    verdict = Verdict.FAIL if failing else (Verdict.PASS if any(r.points for r in runs) else Verdict.INCONCLUSIVE)
    note = ("real op compared on mps" if mps else "Apple MPS not available: only the CPU ports ran") \
        if not getattr(ref, "compares_all_outputs", False) else f"{ref.describe(())}, against the meta kernel"
    return RefReport(contract.op, contract.file, verdict, runs, time.perf_counter() - start, note, unexercised)


def _one_point(case: BoundCase, p: BoundPath, sizes: dict[str, int], seed: int, mps: bool,
               ref: RuntimeReference) -> Outcome:
    try:
        return check_point(case, p, sizes, seed, mps, ref), True, ""
    except Unmodelled as err:  # not counted as an input that ran
        return [], False, f"not modelled by the reference: {str(err).splitlines()[0][:80]}"


def _suppress(contract: Contract, runs: list[PathRun]) -> list[str]:
    """Mark findings that a contract ``[[suppress]]`` for a ref rule accepts; return the suppressions no
    finding matched. Inputs are sampled, so an unmatched suppression is reported, not failed."""
    from dataclasses import replace

    live = live_runtime_suppressions(contract)
    used: set[int] = set()
    for r in runs:
        for i, f in enumerate(r.findings):
            s = accepted_by(live, f.code, f.path, f.case)
            if s is not None:
                r.findings[i] = replace(f, suppressed=s.reason)
                used.add(s.index)
    ran = {r.path for r in runs if r.points}
    return [f"suppress[{s.index}] {s.rule} {s.path or ''}".strip() for s in live
            if s.index not in used and (not s.path or s.path in ran)]
