"""``shapecheck ref check``: run the op's runtime reference (``runtime.reference.reference_for``: the metal_ref ports of the
MPS attention paths) on inputs that satisfy each contract path's precondition, and check dispatch, output
shapes, values and the documented second output, with the rule codes, tolerances and quirks ``fuzz op`` uses.

Inputs are z3 models of domain /\\ when, aimed at the boundary values the contract's expressions name
(``c-1, c, c+1`` for every constant a dim is compared with, and 1), then at random points; sizes are kept
small by minimisation. Where Apple MPS is available the real op runs too and is compared with the port.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from ..contract.model import BoundCase, BoundPath, Contract
from ..errors import TargetError
from ..kernel.sources import Kernel
from ..logic import expr as E
from ..logic.solver import Bounds, Sat, Solver, restrict
from ..search.boundaries import interesting_values as _interesting
from ..trace.run import call_args, made
from .ref_findings import SIDE_CAP, PathRun, RefFinding, first_line, meta_outputs
from .reference import RUNTIME_RULES, RuntimeReference, Unmodelled, compare_values, reference_for
from .reference import accepted_by as accepted_by
from .reference import live_runtime_suppressions as live_runtime_suppressions

REF_RULES = RUNTIME_RULES


@dataclass
class RefReport:
    op: str
    contract: str
    verdict: str
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
        return 1 if self.verdict == "fail" else (3 if self.verdict == "inconclusive" else 0)

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "contract": self.contract, "verdict": self.verdict, "mps": self.mps,
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
    while len(ordered) < examples + (len(targets) if spread else 0):  # spread: examples random points too
        i = rng.randrange(len(reach))
        case, _ = reach[i]
        drawn = case.dims if spread else [rng.choice(case.dims)]
        ordered.append((i, [E.Cmp("==", E.Var(d.name), E.Const(rng.randint(d.min, min(d.max, 64)))) for d in drawn]))
    points = []
    seen: set[tuple] = set()
    for i, extra in ordered:
        if len(points) >= examples:
            break
        case, p = reach[i]
        caps = [E.Cmp("<=", E.Var(d.name), E.Const(SIDE_CAP)) for d in case.dims]
        model = solver.small_model([case.domain, p.when, *caps, *extra])
        if model is None:
            continue
        sizes = restrict(model, [d.name for d in case.dims])
        if E.evaluate(case.domain, sizes) is not True or E.evaluate(p.when, sizes) is not True:
            continue  # never run an input outside the path
        key = (case.id, tuple(sorted(sizes.items())))
        if key not in seen:
            seen.add(key)
            points.append((case, p, sizes))
    return points


def check_point(case: BoundCase, p: BoundPath, sizes: dict[str, int], seed: int, mps: bool,
                reference: RuntimeReference | None = None) -> list[RefFinding]:
    """The findings of one input of contract path ``p``: dispatch (SC010), whether the runtime accepts it
    (SC014), output 0's shape (SC011) and values (SC012), output 1's documented shape (SC013). Raises
    ``runtime.reference.Unmodelled`` where the reference cannot run the input."""
    ref = (reference or _reference(case.contract)).for_path(p.id)
    args = ref.arguments(case, sizes, seed)
    want_path = ref.runtime_path(p.id)
    found = []

    def finding(code: str, message: str) -> RefFinding:
        return RefFinding(code, p.era, p.id, case.id, dict(sizes), message)

    got = ref.select_path(args, p.era)
    if got is not None and got != want_path:  # None: a reference without paths (the op's eager kernel)
        found.append(finding("SC010", f"the runtime dispatches to {got}, the contract's `when` names {p.id}"))
    try:
        outs = ref.run(args, p.era, want_path)
    except ref.rejects as err:
        found.append(finding("SC014", f"{type(err).__name__}: {first_line(err)}"))
        return found
    out0, out1 = outs[0], (outs[1] if len(outs) > 1 else None)
    if getattr(ref, "compares_all_outputs", False):
        found.extend(_against_meta(case, sizes, outs, finding))
    if p.outputs[0] is not None:
        expected = E.evaluate(p.outputs[0], sizes)
        if tuple(out0.shape) != tuple(expected):
            found.append(finding("SC011", f"output 0 is {tuple(out0.shape)}, the contract says {tuple(expected)}"))
    if p.runtime_outputs and len(p.runtime_outputs) > 1 and p.runtime_outputs[1][0] is not None and out1 is not None:
        doc1 = E.evaluate(p.runtime_outputs[1][0], sizes)
        if tuple(out1.shape) != tuple(doc1):
            found.append(finding("SC013", f"output 1 is {tuple(out1.shape)}, the contract documents {tuple(doc1)} "
                                          f"({p.runtime_outputs[1][1]})"))
    oracle = ref.expected(args, p.era, want_path)
    if oracle is not None and oracle.numel() == out0.numel():
        atol, rtol = ref.tolerance(args, str(out0.dtype).replace("torch.", ""))
        bad = compare_values(out0, oracle, atol, rtol)
        if bad is not None:
            found.append(finding("SC012", f"{bad.bad} of {bad.total} values differ from the float64 reference "
                                          f"(max abs error {bad.max_error:.3g}, tolerance {atol:g}+{rtol:g}*|ref|)"))
    if mps:
        found.extend(_compare_mps(case, args, out0, finding))
    return found


def _against_meta(case: BoundCase, sizes: dict[str, int], real: tuple[Any, ...], finding) -> list[RefFinding]:
    """The real kernel's outputs against the meta kernel's: shape, dtype, significant strides (SC015), or the
    meta kernel raising where the real one does not (SC007)."""
    from .check import data_dependent_like
    from .reference import outputs_differ

    try:
        meta = meta_outputs(case, sizes)
    except Exception as err:  # the meta kernel refuses an input the real kernel takes
        return [finding("SC007", f"the meta kernel raises {type(err).__name__} where the runtime runs: {first_line(err)}")]
    if len(meta) != len(real):
        return [finding("SC015", f"the meta kernel returns {len(meta)} outputs, the runtime {len(real)}")]
    for j, (m, r) in enumerate(zip(meta, real)):
        why = None if data_dependent_like(m, r) else outputs_differ(m, r)
        if why is not None:
            return [finding("SC015", f"output {j} of the meta kernel has {why}")]
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
        out.append(finding("SC011", f"real MPS output 0 is {tuple(real0.shape)}, metal_ref gives {tuple(out0.shape)}"))
    elif not torch.allclose(real0.double(), out0.double(), atol=2e-2, rtol=2e-2, equal_nan=True):
        out.append(finding("SC012", "real MPS output 0 differs from metal_ref beyond 2e-2"))
    return out


def mps_available() -> bool:
    import torch

    return bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())


def ref_check(contract: Contract, *, eras: tuple[str, ...] = (), examples: int = 24, seed: int = 0,
              device: str = "cpu") -> RefReport:
    """Run every path of ``contract`` (in ``eras``) on the op's runtime reference (``runtime.reference.reference_for``);
    with the op's eager kernel, also every ``[[rejects]]`` region (``runtime.refcheck_rejects``)."""
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
            try:
                run.findings.extend(check_point(case, bp, sizes, seed * 1_000_003 + k, mps, ref))
            except Unmodelled as err:  # not counted as an input that ran
                run.note = run.note or f"not modelled by the reference: {str(err).splitlines()[0][:80]}"
                continue
            run.points += 1
    if getattr(ref, "compares_all_outputs", False):
        from .refcheck_rejects import check_rejects

        runs.extend(check_rejects(contract, ref, examples, seed, solver))
    unexercised = _suppress(contract, runs)
    failing = any(not f.suppressed for r in runs for f in r.findings)
    verdict = "fail" if failing else ("pass" if any(r.points for r in runs) else "inconclusive")
    note = ("real op compared on mps" if mps else "Apple MPS not available: only the CPU ports ran") \
        if not getattr(ref, "compares_all_outputs", False) else f"{ref.describe(())}, against the meta kernel"
    return RefReport(contract.op, contract.file, verdict, runs, time.perf_counter() - start, note, unexercised)


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
