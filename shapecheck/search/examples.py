"""What an example is: a case of a contract and a value for each dim it needs, with the seed of its tensor values.

``Example`` (and ``Inputs``, an example with its cpu tensors made), ``parse_example`` (its text read back),
``example_at`` (the example at a given point, e.g. a verify counterexample), ``holds`` (the contract's own
predicate) and ``largest_tensor`` (what the size bound measures).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..contract.model import BoundArg, BoundCase, BoundPath, Contract, case_id
from ..errors import ExprError
from ..logic import expr as E
from ..logic.compiled import compiled


@dataclass(frozen=True, eq=False)
class Example:
    """One concrete argument set: a case (dtypes, masks, flags) and a value for each of its dims.

    Tensors are made on demand (``arguments``); their values come from ``seed``.
    """

    case: BoundCase
    dims: tuple[tuple[str, int], ...]
    seed: int = 0
    aim: str | None = None  # the path ("id@era") the generator steered towards; informative only

    @property
    def values(self) -> dict[str, int]:
        return dict(self.dims)

    @property
    def case_id(self) -> str:
        return self.case.id

    def shape(self, arg: str) -> tuple[int, ...] | None:
        """The concrete shape of a tensor argument (None when absent in this case)."""
        return self._shapes.get(arg)

    @functools.cached_property
    def _shapes(self) -> dict[str, tuple[int, ...]]:
        values = self.values
        return {a.name: compiled(a.shape)(values) for a in input_tensors(self.case)}

    def text(self) -> str:
        """``case;dims;seed=N``: what ``parse_example`` and ``shapecheck fuzz op --example`` read back."""
        dims = ",".join(f"{k}={v}" for k, v in self.dims)
        return f"{self.case.id};{dims};seed={self.seed}"

    def arguments(self, device: str | None = "cpu") -> dict[str, Any]:
        """Every argument of the contract by name, in order: tensors, None for absent ones, scalars as the
        case fixes them. Tensors: ``"cpu"``, values drawn from ``seed``; another device (``"meta"``), empty;
        None, ``torch.empty`` on the default device (fake tensors under a FakeTensorMode)."""
        from ..trace.arguments import make_arguments

        return make_arguments(self.case, self.values, self.seed, device)

    def __repr__(self) -> str:
        return f"Example({self.text()!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # Hypothesis pretty-prints dataclasses field by field (the whole contract); print the short form.
        printer.text(repr(self))


@dataclass(frozen=True, eq=False)
class Inputs:
    """An example with its arguments made on the cpu (what ``inputs`` draws)."""

    example: Example
    arguments: Mapping[str, Any]

    def __repr__(self) -> str:
        return f"Inputs({self.example.text()!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))



def parse_example(contract: Contract, text: str, *, max_elements: int | None = None) -> Example:
    """Read ``case;dims[;seed=N]`` (``Example.text``) back; ValueError naming what is wrong.

    The case part may list only some choices if it names a single case. The dims must be inside the
    contract's domain (and within ``max_elements`` if given).
    """
    parts = [p.strip() for p in text.split(";")]
    if len(parts) not in (2, 3):
        raise ValueError(f"expected 'CASE;DIMS[;seed=N]', found {text!r}")
    want = _pairs(parts[0], "case")
    matches = [c for c in contract.cases()
               if all(_fmt(c.values.get(k)) == v for k, v in want.items()) and set(want) <= set(c.values)]
    if len(matches) != 1:
        names = ", ".join(n for n, _ in contract.choices)
        what = "no case" if not matches else f"{len(matches)} cases"
        raise ValueError(f"{parts[0]!r} matches {what} (choices: {names})")
    case = matches[0]
    dims: dict[str, int] = {}
    for k, v in _pairs(parts[1], "dims").items():
        try:
            dims[k] = int(v)
        except ValueError:
            raise ValueError(f"dim {k}={v!r} is not an integer") from None
    seed = 0
    if len(parts) == 3:
        key, _, value = parts[2].partition("=")
        if key.strip() != "seed" or not value.strip().isdigit():
            raise ValueError(f"expected 'seed=N', found {parts[2]!r}")
        seed = int(value)
    needed = relevant_dims(case, case.paths)
    missing = [d for d in needed if d not in dims]
    extra = [d for d in dims if d not in needed]
    if missing or extra:
        raise ValueError(f"case {case.id} needs dims {', '.join(needed)}"
                         + (f"; missing {', '.join(missing)}" if missing else "")
                         + (f"; unknown {', '.join(extra)}" if extra else ""))
    for d in needed:
        dim = contract.dim(d)
        if not dim.min <= dims[d] <= dim.max:
            raise ValueError(f"{d}={dims[d]} is outside its range [{dim.min}, {dim.max}]")
    if not holds(case.domain, dims):
        raise ValueError(f"{parts[1]} is outside the domain of case {case.id}: {E.to_text(case.domain)}")
    ex = Example(case, tuple((d, dims[d]) for d in needed), seed)
    if max(largest_tensor(ex), largest_storage(ex)) > TORCH_ELEMENTS:
        raise ValueError(f"a tensor of this example spans {max(largest_tensor(ex), largest_storage(ex))} elements, "
                         f"more than torch can address (2**63 - 1): no kernel can run on it")
    if max_elements is not None and largest_tensor(ex) > max_elements:
        raise ValueError(f"a tensor of this example has {largest_tensor(ex)} elements > {max_elements}")
    return ex


def example_at(case: BoundCase, dims: Mapping[str, int], seed: int = 0) -> Example | None:
    """The example of ``case`` at ``dims`` (e.g. a verify counterexample), or None if outside the domain."""
    needed = relevant_dims(case, case.paths)
    if any(d not in dims for d in needed):
        return None
    point = {d: int(dims[d]) for d in needed}
    if not all(case.contract.dim(d).min <= v <= case.contract.dim(d).max for d, v in point.items()):
        return None
    if not holds(case.domain, point):
        return None
    return Example(case, tuple(point.items()), seed)


def holds(node: E.Node, values: Mapping[str, int]) -> bool:
    """The contract's own predicate at a point; False where it is undefined (a division by zero)."""
    try:
        return E.evaluate(node, values) is True
    except ExprError:
        return False


def largest_tensor(ex: Example) -> int:
    """Elements of the largest tensor the example implies (arguments and every path's stated shapes)."""
    out = 0
    values = ex.values
    for shape in implied_shapes(ex.case, ex.case.paths):
        try:
            value = compiled(shape)(values)
        except ZeroDivisionError:
            continue
        n = 1
        for x in value:
            n *= max(int(x), 0)
        out = max(out, n)
    return out


#: elements a tensor's storage may span for torch to make it at all (sizes, strides and offsets are int64)
TORCH_ELEMENTS = 2**63 - 1


def largest_storage(ex: Example) -> int:
    """Elements of the largest storage the example's input tensors span: a tensor's element count, or with a
    layout its storage offset + 1 + sum((size - 1) * stride) (``storage_offset = "2**40"`` spans that much)."""
    out = 0
    for a in input_tensors(ex.case):
        try:
            sizes = [max(int(x), 0) for x in compiled(a.shape)(ex.values)]
            n = 1
            for x in sizes:
                n *= x
            if a.layout is not None and n:
                strides = [int(x) for x in compiled(E.TupleE(a.layout.strides))(ex.values)]
                n = int(compiled(E.TupleE((a.layout.offset,)))(ex.values)[0]) + 1 + \
                    sum((x - 1) * abs(st) for x, st in zip(sizes, strides))
        except ZeroDivisionError:
            continue
        out = max(out, n)
    return out


def relevant_dims(case: BoundCase, paths: Iterable[BoundPath]) -> tuple[str, ...]:
    """The dims an example of this case needs: those of its tensors, its domain and its paths."""
    used = {d.name for d in case.dims} | E.free_names(case.domain)
    for p in paths:
        used |= E.free_names(p.when)
        for o in p.outputs:
            if o is not None:
                used |= E.free_names(o)
    return tuple(d.name for d in case.contract.dims if d.name in used)


def input_tensors(case: BoundCase) -> list[BoundArg]:
    """The case's input tensors: each present tensor argument, and each element of a tensors argument
    (named ``name[i]``)."""
    out: list[BoundArg] = []
    for a in case.args:
        if a.present and a.kind == "tensor" and a.shape is not None:
            out.append(a)
        elif a.present and a.kind == "tensors":
            out.extend(a.elements())
    return out


def implied_shapes(case: BoundCase, paths: Iterable[BoundPath]) -> list[E.TupleE]:
    shapes = [a.shape for a in input_tensors(case)]
    for p in paths:
        for o in (*p.outputs, *(s for s, _ in p.runtime_outputs)):
            if isinstance(o, E.TupleE) and o not in shapes:
                shapes.append(o)
    return shapes



def _pairs(text: str, what: str) -> dict[str, str]:
    out = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise ValueError(f"{what}: expected name=value, found {item!r}")
        if k.strip() in out:
            raise ValueError(f"{what}: {k.strip()} given twice ({k.strip()}={out[k.strip()]}, {item})")
        out[k.strip()] = v.strip()
    return out


def _fmt(value: Any) -> str:
    return case_id({"x": value})[2:]
