"""The meta kernel's outputs at an example against a contract path's (``fuzz op``'s check 1): the ways they
differ (shape SC002; where an output table states them, dtype SC017, layout SC018, None SC019, a data-dependent
size's range SC020), and how an output is described in a failure."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..contract.model import BoundPath
from ..findings import PathId
from ..logic import expr as E
from ..rules import RuleCode


def as_verify_says(p: BoundPath, d: tuple[RuleCode, str, str, str]) -> tuple[set[str], str]:
    """A difference of the outputs as verify states the same finding: the dims of the contract's output (verify's
    names those of both formulas; a suppression narrowed to dims matches here only where it does there) and, for
    a shape, verify's message ("output 0 is (2,) but the contract's path only says (1,)")."""
    m = re.match(r"output (\d+) ", d[3])
    j = int(m.group(1)) if m else -1
    node = p.outputs[j] if 0 <= j < len(p.outputs) else None
    names = E.free_names(node) if node is not None else set()
    if d[0] != RuleCode.OUTPUT_SHAPE_MISMATCH or j < 0:
        return names, d[3]
    return names, f"output {j} is {d[2]} but the contract's path {PathId(p.id, p.era)} says {d[1]}"


def contract_differences(paths: list[BoundPath], outs: list[Any], dims: Mapping[str, int],
                         tables: str = "none") -> list[tuple[RuleCode, str, str, str]]:
    """(rule, expected, got, message) for each way the kernel's outputs at ``dims`` differ from a holding path's:
    a shape (SC002), and where an output table states them (``tables``: "all"; "sizes" for the range alone),
    the dtype (SC017), the layout (SC018), None (SC019), a data-dependent size's range (SC020)."""
    shapes_only = tables == "none"
    out = []
    for p in paths:
        for j, want in enumerate(p.outputs):
            spec = p.specs[j] if j < len(p.specs) else None
            got = outs[j] if j < len(outs) else None
            if spec is not None and spec.absent != (got is None) and tables == "all":
                out.append((RuleCode.OUTPUT_PRESENCE_MISMATCH, "None" if spec.absent else "a tensor", describe(got), f"output {j} is "
                            f"{describe(got)} but path {p.id}@{p.era} says {'None' if spec.absent else 'a tensor'}"))
                continue
            if want is None and spec is not None:
                want = spec.shape  # an output table: its shape
            if want is None or got is None:
                continue
            expected = expected_text(want, dims, spec)
            actual = describe(got) if j < len(outs) else "nothing"
            if not same_shape(expected, actual):
                out.append((RuleCode.OUTPUT_SHAPE_MISMATCH, expected, actual, f"output {j} is {actual} but path {p.id}@{p.era} says {expected}"))
                continue
            if spec is not None and not shapes_only:
                out += _table_differences(p, j, spec, got, dims, tables == "all")
    return out


def _table_differences(p: BoundPath, j: int, spec: Any, got: Any, dims: Mapping[str, int], layout: bool) -> list[tuple]:
    from .._torch.backed import DataDependent

    out = []
    where = f"output {j} on path {p.id}@{p.era}"
    if layout and spec.dtype is not None and dtype_name(got) != spec.dtype:
        out.append((RuleCode.OUTPUT_DTYPE_MISMATCH, spec.dtype, dtype_name(got), f"{where} has dtype {dtype_name(got)}, the contract "
                    f"{spec.dtype}"))
    if layout and spec.strides is not None and hasattr(got, "stride") and got.numel() > 0:
        want = tuple(E.evaluate(s, dims) for s in spec.strides)
        have = tuple(got.stride())
        if spec.match == "exact":
            differs = want != have
        else:  # significant (dense, its older name): a size-1 dim's stride does not count
            differs = any(w != h for w, h, n in zip(want, have, got.shape) if n != 1)
        if differs:
            out.append((RuleCode.OUTPUT_LAYOUT_MISMATCH, str(want), str(have), f"{where} has strides {have}, the contract's layout "
                        f"{spec.layout} gives {want} for shape {tuple(got.shape)}"))
    if isinstance(got, DataDependent) and spec.sizes and spec.shape is not None:
        names = [getattr(i, "name", None) for i in spec.shape.items]
        ranges = dict(zip(names, got.ranges))
        for name, lo, hi in spec.sizes:
            have = ranges.get(name)
            if have is None:
                continue
            least, most = E.evaluate(lo, dims), E.evaluate(hi, dims)
            if (have[0] is not None and have[0] > least) or (have[1] is not None and have[1] < most):
                out.append((RuleCode.DYNAMIC_SIZE_RANGE, f"[{least}, {most}]", f"[{have[0]}, {have[1]}]", f"{where}: the fake's "
                            f"data-dependent size {name} ranges over [{have[0]}, {have[1]}], which misses values in "
                            f"the runtime's [{least}, {most}]"))
                continue
            refused = [v for v in (least, most) if not got.admits(names.index(name), v)]
            if refused:
                out.append((RuleCode.DYNAMIC_SIZE_RANGE, f"[{least}, {most}]", f"not {refused[0]}", f"{where}: the fake's "
                            f"torch._check on its data-dependent size {name} refuses {name} = {refused[0]}, a value in "
                            f"the runtime's [{least}, {most}]"))
    return out


def expected_text(want: Any, dims: Mapping[str, int], spec: Any) -> str:
    """A contract output at the example: its shape, with ``?`` for a data-dependent size the contract names."""

    sizes = {name for name, _, _ in spec.sizes} if spec is not None and getattr(spec, "sizes", None) else set()
    if isinstance(want, E.TupleE):
        items = ["?" if isinstance(i, E.Var) and i.name in sizes else str(E.evaluate(i, dims)) for i in want.items]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return fmt_value(E.evaluate(want, dims))


def same_shape(expected: str, actual: str) -> bool:
    """Two shapes as ``describe`` writes them, ``?`` (a data-dependent size) matching any size."""
    if expected == actual:
        return True
    a, b = _items(expected), _items(actual)
    return a is not None and b is not None and len(a) == len(b) and all(
        x == y or "?" in (x, y) for x, y in zip(a, b))


def _items(text: str) -> list[str] | None:
    if not (text.startswith("(") and text.endswith(")")):
        return None
    return [t.strip() for t in text[1:-1].split(",") if t.strip()]


def describe(x: Any) -> str:
    """An output as a report shows it: a tensor's shape (``?`` for a size the data decides), an integer,
    'nothing' or a type name."""
    import torch

    from .._torch.backed import DataDependent

    if isinstance(x, DataDependent):
        return repr(x)
    if isinstance(x, torch.Tensor):
        return str(tuple(int(d) for d in x.shape))
    if isinstance(x, (int, torch.SymInt)):
        return str(int(x))
    return "nothing" if x is None else type(x).__name__


def fmt_value(v: Any) -> str:
    return str(tuple(v)) if isinstance(v, tuple) else str(v)


def dtype_name(x: Any) -> str:
    return str(x.dtype).replace("torch.", "") if hasattr(x, "dtype") else "-"


def density(x: Any) -> str:
    # The contract language states no strides, so only density is compared (both sides are dense tensors).
    if not hasattr(x, "is_contiguous"):
        return "-"
    return "contiguous" if x.is_contiguous() else f"strided{tuple(x.stride())}"
