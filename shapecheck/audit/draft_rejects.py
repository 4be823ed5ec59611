"""``contract draft``'s ``[[rejects]]``: a requires the trace found because the kernel raises outside it (a
``torch._check``, broadcasting, a raise on one side of a guard) is also written as a runtime-check region, its
negation, so that ``verify`` goes on proving that the meta kernel refuses those inputs. Without it a kernel that
drops the check (cdist's column check, hunt 28 b10) passes the drafted contract: the requires only takes the
inputs out of the domain.

A region is written only where both kernels refuse it:

- the eager kernel raises at a point of it (the draft's other requires holding there). Where it accepts the
  point instead, the fake refuses an input the op takes: no region, a TODO that says so;
- the traced kernel raises on all of it: ``verify``'s own obligation for the region (``prove.rejects``) is run
  on the draft, and a region where it finds an input the kernel accepts (SC021), or cannot tell (SC005, the
  trace budget), is left out.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..logic import expr as E

#: a requires the kernel's branch gave (the sample took one side), not a check: its other side runs
NOT_A_CHECK = "the kernel guards on"
CASES = 24  # cases whose regions are proved (more: none is written, nothing is known of the rest)
TRACES = 48  # traces the proofs of one region may take in all
EAGER_CASES = 4  # cases whose point of a region the eager kernel is asked about


@dataclasses.dataclass(frozen=True)
class DraftReject:
    id: str
    when: str
    message: str
    source: str


def reject_regions(name: str, text_of: Callable[[Any], str], load: Callable[[str], Any],
                   inputs_at: Callable[[Mapping[str, Any]], Any], traced: Any, kernel: Any) -> bool:
    """Add to ``traced.rejects`` each region both kernels refuse (module doc); a requires the eager kernel does
    not demand gets a TODO. ``text_of(traced)``: the draft's text; ``load(text)``: the contract it loads as;
    ``inputs_at(values)``: the op's call for a case's choice values. Whether anything was added."""
    from ..errors import ContractError

    found: list[DraftReject] = []
    changed = False
    for i, (text, why) in enumerate(traced.requires):
        if why.startswith(NOT_A_CHECK):
            continue
        try:
            region = E.negate(E.parse(text))
            probe = dataclasses.replace(traced, rejects=[], requires=[
                *traced.requires[:i], (E.to_text(region), why), *traced.requires[i + 1:]])
            contract = load(text_of(probe))
        except (ContractError, ValueError):  # a requires this shapecheck cannot negate or load: no region
            continue
        seen = _eager_at(name, contract, inputs_at)
        if seen is None:
            continue
        case_id, sizes, res = seen
        at = ", ".join(f"{k}={v}" for k, v in sizes.items())
        if res.ok:
            traced.todos.append(f"the eager kernel accepts {at} (case {case_id}), where the fake raises: the requires "
                                f"{text} is the fake's alone (it refuses an input the op takes; `shapecheck ref "
                                "check` reports such points)")
            changed = True
            continue
        found.append(DraftReject(f"kernel-check-{len(found) + 1}", E.to_text(region), _message(res.error),
                                 f"drafted: the meta kernel raises there ({why.removeprefix('the kernel ')}); the "
                                 f"eager kernel raises at {at} (case {case_id})"))
    if not found:
        return changed
    traced.rejects = found
    from .._torch.core import quiet_torch_logging

    with quiet_torch_logging():  # FakeTensorMode logs each refusal of the region's inputs as an error
        kept = _proved(load(text_of(traced)), kernel, found)
    dropped = [r for r in found if r not in kept]
    for n, r in enumerate(kept, 1):  # ids in order again
        kept[n - 1] = dataclasses.replace(r, id=f"kernel-check-{n}")
    traced.rejects = kept
    from ..rules import RuleCode

    traced.todos.extend(f"the region {r.when} is not written as a [[rejects]]: the eager kernel raises there, but "
                        "the meta kernel was not proved to raise on all of it (verify's "
                        f"{RuleCode.META_ACCEPTS_REJECTED_INPUT} or {RuleCode.INCONCLUSIVE} on the draft)"
                        for r in dropped)
    return bool(kept or dropped or changed)


def _eager_at(name: str, contract: Any, inputs_at: Callable[[Mapping[str, Any]], Any]) -> Any:
    """The eager kernel's answer at the first point of the region a case has (every dim at 2 or more where the
    region allows): (case id, sizes, ``EagerResult``), or None where no case has a point or the kernel crashed."""
    from ..logic.solver import Bounds, Solver, restrict
    from .eager import worker

    solver = Solver([Bounds(d.name, d.min, d.max) for d in contract.dims])
    dims = [d.name for d in contract.dims]
    asked = 0
    for case in contract.cases():
        floor = [E.Cmp(">=", E.Var(d.name), E.Const(max(2, d.min))) for d in case.dims]
        model = solver.small_model([case.domain, *floor]) or solver.small_model([case.domain])
        if model is None:
            continue
        sizes = restrict(model, dims)
        res = worker().call(name, inputs_at(case.values), dict(sizes))
        if not res.crashed:
            return case.id, sizes, res
        asked += 1
        if asked >= EAGER_CASES:
            return None
    return None


def _proved(contract: Any, kernel: Any, found: list[DraftReject]) -> list[DraftReject]:
    """The regions ``verify`` proves the kernel refuses in every case of the draft (within the budgets)."""
    from ..prove.rejects import reject_obligations
    from ..prove.verify import make_solver

    cases = list(contract.cases())
    if len(cases) > CASES:
        return []
    solver = make_solver(contract, 10_000)
    bad: set[str] = set()
    used: dict[str, int] = {}
    for case in cases:
        for r in case.rejects:
            if r.id in bad:
                continue
            cache: dict = {}
            one = dataclasses.replace(case, rejects=(r,))
            failed = reject_obligations(kernel, one, solver, TRACES - used.get(r.id, 0), cache)
            used[r.id] = used.get(r.id, 0) + len(cache)
            if failed or used[r.id] >= TRACES:
                bad.add(r.id)
    return [r for r in found if r.id not in bad]


def _message(error: str) -> str:
    """The part of the eager kernel's error a ``message`` can require at every point of the region: its first
    line's longest stretch of words without a number (sizes differ from point to point); empty where none is telling."""
    first = error.splitlines()[0] if error else ""
    first = first.split(": ", 1)[1] if re.match(r"^\w+(Error|Exception): ", first) else first
    runs: list[list[str]] = [[]]
    for word in first.split():
        if re.search(r"(?:^|[^A-Za-z_])\d", word):  # a number (a size, ``size(1)=5``); ``batch2`` is a name
            runs.append([])
        else:
            runs[-1].append(word)
    best = max((" ".join(r).strip(" ,.;:([{'\"") for r in runs), key=len, default="")
    return best if len(best) >= 12 else ""
