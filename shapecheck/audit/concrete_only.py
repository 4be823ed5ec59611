"""Checks a fake makes on concrete ints only (``if isinstance(channels, int):``): on concrete sizes the fake raises
with the eager kernel, but under the symbolic sizes torch.export traces with it skips the check, and the exported
program takes sizes the op refuses (hunt 34: tico's ``circle_custom::prelu``). The differential comparison asks
``concrete_only`` at each point where both kernels raise."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..logic import expr as E
from .candidates import NO_EAGER
from .inputs import DATA_DEPENDENT, OpInputs, materialize

#: the disagreement's words (an SC041)
SKIPPED_UNDER_EXPORT = "the fake traced with symbolic sizes returns where the eager kernel raises"


def concrete_only(call: Callable[..., Any], returned: Sequence[tuple[list[E.Node], list[E.Node]]], inputs: OpInputs,
                  point: dict[str, int], eager_error: str, fake_error: str) -> str | None:
    """What the disagreement says, else None: a trace of the fake with symbolic sizes returned on a region that
    holds ``point`` (its conditions and its asserts all true there), where the fake on these sizes and the eager kernel both raise: the fake's
    check runs on concrete ints only (tico's prelu, ``if isinstance(channels, int)``), where a run with backed
    sizes, as torch.export's, returns too (``backed_returns``: torch's convolution rule checks the channels from
    the sizes' hints, which unbacked sizes lack, so export fails there and no program takes the sizes). Only at a
    point whose tensor dims are all 2 or more (sizes 0 and 1 are export's specialisations, and the trace's
    branches there torch's), and for a fake's error that is not a data-dependent size (the caller leaves out an
    eager error about made-up data)."""
    dims = inputs.tensor_dims()
    if not returned or any(v < 2 for k, v in point.items() if k in dims) \
            or fake_error.startswith(DATA_DEPENDENT) or any(m in eager_error for m in NO_EAGER):
        return None
    if not any(all(holds(c, point) for c in (*region, *asserts)) for region, asserts in returned) \
            or not backed_returns(call, inputs, point):
        return None
    return (f"the eager kernel: {eager_error}; the fake on these sizes raises too ({fake_error}), but its trace with "
            "symbolic sizes returns for every size of this region: a check it makes only on concrete ints "
            "(isinstance(n, int)), which torch.export's trace skips, so the exported program takes these sizes")


def backed_returns(call: Callable[..., Any], inputs: OpInputs, point: dict[str, int]) -> bool:
    """Whether the kernel returns at ``point`` run as torch.export runs it: every dim a backed size whose hint is
    its value (0 and 1 specialised). A check the fake makes only on Python ints is skipped there, as under the
    audit's unbacked sizes; a check that reads the sizes' hints runs (torch's convolution rule compares the
    channels: strict export then fails with "Cw = C", no program takes the sizes)."""
    from .._torch.attribution import Own
    from .._torch.backed import BackedRun

    run = BackedRun(Own())

    def size(d: str, example: int) -> Any:
        return run.dim(d, point.get(d, example))

    def tensor(dims, example, dtype, _fill):
        return run.empty([size(d, e) for d, e in zip(dims, example, strict=True)], dtype)

    try:
        with run.mode:
            args, kwargs = materialize(inputs, tensor, size)
    except Exception:  # noqa: BLE001 - inputs torch cannot make with backed sizes: nothing shown
        return False
    return run.run(call, args, kwargs)[1] is None


def holds(node: E.Node, point: dict[str, int]) -> bool:
    """Whether ``node`` is true at ``point``; False where it is undefined there (a division by 0, a name missing)."""
    try:
        return bool(E.evaluate(node, point))
    except Exception:  # noqa: BLE001 - undefined at this point: not known to hold
        return False
