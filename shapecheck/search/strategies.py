"""Hypothesis strategies built from a contract: a case, then dims that satisfy its domain (and a path's ``when``).

``cases(contract)`` draws ``Example``s (a case plus concrete dims and a seed for tensor values);
``inputs(contract)`` draws ``Inputs`` (an example with its argument tensors made). Hard constraints are met
by construction or with z3's help, never by rejection: a drawn target point is repaired by the conditions'
simple atoms, else completed by z3 keeping as many drawn values as it can. Every point is checked with
``logic.expr.evaluate`` before it is emitted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from hypothesis import strategies as st

from ..contract.model import BoundCase, BoundPath, Contract
from ..errors import InternalError
from ..logic.compiled import compiled as compiled
from ..logic.compiled import fast_holds as fast_holds
from ..trace import arguments
from .examples import Example as Example
from .examples import Inputs as Inputs
from .examples import example_at as example_at
from .examples import holds as holds
from .examples import largest_tensor as largest_tensor
from .examples import parse_example as parse_example
from .plan import DEFAULT_MAX_ELEMENTS as DEFAULT_MAX_ELEMENTS
from .plan import DEFAULT_MAX_SIDE as DEFAULT_MAX_SIDE
from .plan import Plan as Plan
from .plan import SizeBound as SizeBound


def cases(contract: Contract, *, path: str | None = None, era: str | None = None,
          max_elements: int = DEFAULT_MAX_ELEMENTS, max_side: int = DEFAULT_MAX_SIDE,
          constants: Iterable[int | str] = (), case_filter: Callable[[BoundCase], bool] | None = None,
          timings: dict[str, float] | None = None) -> st.SearchStrategy[Example]:
    """Examples of ``contract``: a case, then dims inside its domain (and ``path``'s ``when`` if given).

    - ``path``: ``"id"`` or ``"id@era"``; only cases where that path is reachable within the bound are drawn.
    - ``era``: only the paths of this era are aimed at and harvested for constants.
    - ``max_elements``, ``max_side``: the size bound (see ``SizeBound``).
    - ``constants``: more interesting values: integers (for every dim) or guard texts such as ``"L <= 8"``
      (their constants, for the dims they name), e.g. the guards ``verify`` reported.
    - ``case_filter``: draw only cases for which this returns true.
    - ``timings``: if given, ``timings["generation"]`` accumulates the seconds spent drawing.
    """
    plan = Plan(contract, SizeBound(max_elements, max_side), path=path, era=era, constants=constants,
                case_filter=case_filter)
    return _examples(plan, timings)


def inputs(contract: Contract, path: str | None = None, **kwargs: Any) -> st.SearchStrategy[Inputs]:
    """Concrete argument sets of ``contract`` (cpu tensors with sizes, dtypes, masks, flags); see ``cases``."""
    return cases(contract, path=path, **kwargs).map(lambda ex: Inputs(ex, ex.arguments("cpu")))


def make_arguments(ex: Example, device: str | None = "cpu") -> dict[str, Any]:
    """``Example.arguments``: the example's arguments by name (see ``trace.arguments.make_arguments``)."""
    return arguments.make_arguments(ex.case, ex.values, ex.seed, device)


def _examples(plan: Plan, timings: dict[str, float] | None) -> st.SearchStrategy[Example]:
    @st.composite
    def draw_example(draw: Callable) -> Example:
        start = time.perf_counter()
        index = plan.feasible_index(draw(plan.case_draw))
        cp = plan.case_plan(index)
        aim: BoundPath | None = cp.aims[0] if plan.path is not None else draw(cp.aim_draw)
        target = {name: draw(cp.draws[name]) for name in cp.dims}
        order = tuple(draw(cp.order_draw)) if len(cp.dims) > 1 else cp.dims
        seed = draw(plan.seed_draw)
        point = plan.complete(cp, aim, target, order)
        if point is None and aim is not None and plan.path is None:
            aim = None  # the aimed path is unreachable in this case within the bound: the domain alone
            point = plan.complete(cp, aim, target, order)
        if point is None:
            raise InternalError(f"case {cp.case.id} has no point within the bound after a feasibility check")
        if timings is not None:
            timings["generation"] = timings.get("generation", 0.0) + time.perf_counter() - start
        return Example(cp.case, point, seed, None if aim is None else f"{aim.id}@{aim.era}")

    return draw_example()

