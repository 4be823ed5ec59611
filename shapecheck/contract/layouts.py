"""Input layouts: how a tensor argument is laid out in memory (``[[args]]`` keys ``layout``, ``strides``,
``expand`` and ``storage_offset``), read by ``contract.load`` (``load_layout``) and bound per case by
``contract.model`` (``bind_layout``) into the argument's strides and storage offset, expressions over dims.

- ``layout``: ``contiguous`` (the default), ``channels_last`` (rank 4), ``channels_last_3d`` (rank 5), a dim
  order such as ``(0, 2, 1, 3)`` (outermost first: a contiguous tensor of the permuted shape, permuted back,
  as an output table's ``layout`` reads it), or the name of a choice whose values are such layouts;
- ``strides``: instead of ``layout``, one stride per dim, expressions over dims and choices (``(1, M)``: a
  column-major (M, K) matrix; ``(LD, 1)``: rows padded to a leading dimension LD);
- ``expand``: dims of the shape that are broadcast (stride 0), e.g. ``[0, 1]``; the layout's strides are those
  of the tensor before it is expanded (size 1 at those dims);
- ``storage_offset``: the tensor starts this many elements into its storage (an expression over dims).

Each may be a list of ``{when, value}`` alternatives. Strides follow torch's rules (``outputs.dense_strides``:
each the product of the sizes inside it, each size taken as at least 1 for ``contiguous`` and a dim order, as
``empty`` and ``empty_permuted`` do, and as it is for the channels_last formats, as
``empty(..., memory_format=...)`` does), so a traced input has exactly torch's strides, symbolic in the dims.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..edges import JSON
from ..errors import ContractError, ExprError
from ..logic import expr as E
from .outputs import dense_strides
from .spec import Binding, BoundLayout, InputLayout, LayoutSpec, short

if TYPE_CHECKING:
    from .reader import Reader

NAMED = {"contiguous": None, "channels_last": (4, (0, 2, 3, 1)), "channels_last_3d": (5, (0, 2, 3, 4, 1))}
KEYS = ("layout", "strides", "expand", "storage_offset")


def parse_layout(text: str) -> str | tuple[int, ...] | None:
    """A layout as written: a name of ``NAMED`` or a dim order ``(1, 0)``; None for anything else."""
    text = text.strip()
    if text in NAMED:
        return text
    try:
        node = E.parse(text)
    except ExprError:
        return None
    items = node.items if isinstance(node, E.TupleE) else ()
    order = [i.value for i in items if isinstance(i, E.Const) and type(i.value) is int]
    if not items or len(order) != len(items) or sorted(order) != list(range(len(order))):
        return None
    return tuple(order)


_WANT = "'contiguous', 'channels_last', 'channels_last_3d', a dim order such as (0, 2, 1, 3), or a choice of them"


def load_layout(r: Reader, a: dict[str, JSON], key: str) -> LayoutSpec | None:
    """The layout keys of a tensor argument ``a`` (the ``spec.LayoutSpec`` it loads); None when it has none."""
    if not any(k in a for k in KEYS):
        return None
    if "layout" in a and "strides" in a:
        raise r.err(key, "give 'layout' or 'strides', not both")

    def layout_leaf(value: JSON, k: str) -> InputLayout:
        r.want(value, k, str)
        if r.names.get(value.strip()) == "choice":
            # a case id shows the value, and a dim order's commas would split it: names only
            bad = [v for v in r.choices[value.strip()] if v not in NAMED]
            if bad:
                raise r.err(k, f"the choice {value.strip()!r} gives the layout, but its value {short(bad[0])} is "
                               f"not a layout name ({', '.join(NAMED)}); for a dim order or strides, select by a "
                               "choice: layout = [{ when = \"transposed\", value = \"(0, 2, 1, 3)\" }, "
                               "{ value = \"contiguous\" }]")
            return E.Var(value.strip())
        parsed = parse_layout(value)
        if parsed is None:
            raise r.err(k, f"expected {_WANT}, found {short(value)}")
        return parsed

    def expand_leaf(value: JSON, k: str) -> tuple[int, ...]:
        r.want(value, k, list)
        for j, x in enumerate(value):
            r.want(x, f"{k}[{j}]", int)
        if len(set(value)) != len(value):
            raise r.err(k, f"a dim appears twice in {short(value)}")
        return tuple(value)

    return LayoutSpec(
        layout=r.selectable(a["layout"], f"{key}.layout", layout_leaf) if "layout" in a else None,
        strides=r.selectable(a["strides"], f"{key}.strides", r.parse) if "strides" in a else None,
        expand=r.selectable(a["expand"], f"{key}.expand", expand_leaf) if "expand" in a else None,
        offset=r.selectable(a["storage_offset"], f"{key}.storage_offset", r.parse) if "storage_offset" in a else None)


def bind_layout(b: Binding, spec: LayoutSpec | None, shape: E.TupleE, key: str,
                shapes: Mapping[str, E.TupleE]) -> BoundLayout | None:
    """The layout of a tensor argument of ``shape`` in the case ``b`` (a ``contract.model._CaseBinder``) binds;
    None for a plain contiguous tensor (no layout key, or keys that say just that)."""
    if spec is None:
        return None
    rank, where = len(shape.items), f"{b.c.file}: [{key}"
    expand = b.pick(spec.expand, f"{key}.expand") if spec.expand is not None else ()
    dims = tuple(d + rank if d < 0 else d for d in expand)
    if any(not 0 <= d < rank for d in dims):
        raise ContractError(f"{where}.expand]", f"expand names dims {list(expand)}, but the shape "
                                                f"{E.to_text(shape)} has {rank} (case {b.case})")
    offset: E.Node = E.Const(0)
    if spec.offset is not None:
        offset = b.scalar(b.pick(spec.offset, f"{key}.storage_offset"), f"{key}.storage_offset", shapes)
        if E.kind_of(offset) != "int" or (isinstance(offset, E.Const) and isinstance(offset.value, int) and offset.value < 0):
            raise ContractError(f"{where}.storage_offset]", f"expected a non-negative integer expression, found "
                                                            f"{E.to_text(offset)} (case {b.case})")
    if spec.strides is not None:
        node = b.scalar(b.pick(spec.strides, f"{key}.strides"), f"{key}.strides", shapes)
        if not isinstance(node, E.TupleE) or len(node.items) != rank:
            raise ContractError(f"{where}.strides]", f"expected {rank} strides, one per dim of {E.to_text(shape)}, "
                                                     f"found {E.to_text(node)} (case {b.case})")
        for s in node.items:
            if E.kind_of(s) != "int" or (isinstance(s, E.Const) and isinstance(s.value, int) and s.value < 0):
                raise ContractError(f"{where}.strides]", f"a stride must be a non-negative integer, found "
                                                         f"{E.to_text(s)} in {E.to_text(node)} (case {b.case})")
        strides, order, text = node.items, None, f"strides {E.to_text(node)}"
    else:
        layout: InputLayout = b.pick(spec.layout, f"{key}.layout") if spec.layout is not None else "contiguous"
        if isinstance(layout, E.Var):
            value = b.value_of(layout.name)
            assert isinstance(value, str)  # the choice's values are layout names (contract.load checked them)
            layout = parse_layout(value) or value
        order, text = _order(layout, rank, f"{where}.layout]", b.case)
        base = tuple(E.Const(1) if i in dims else s for i, s in enumerate(shape.items))
        strides = dense_strides(base, order, {d.name: d.min for d in b.c.dims}, at_least_one=layout not in NAMED
                                or layout == "contiguous")
    mins = {d.name: d.min for d in b.c.dims}
    strides = tuple(_expanded(shape.items[i], s, mins) if i in dims else s for i, s in enumerate(strides))
    name = text
    if dims:
        text += f", expand {E.to_text(E.TupleE(tuple(E.Const(d) for d in dims)))}"
    if offset != E.Const(0):
        text += f", storage_offset {E.to_text(offset)}"
    if text == "contiguous":
        return None
    return BoundLayout(tuple(strides), offset, order, text, name)


def _expanded(size: E.Node, base: E.Node, mins: Mapping[str, int]) -> E.Node:
    """The stride ``torch.Tensor.expand`` gives a dim of the layout's tensor (size 1 there, stride ``base``)
    expanded to ``size``: 0 where the size grows, ``base`` where it stays 1 (torch keeps the stride of a dim it
    does not expand): ``base * max(0, min(size, 2 - size))`` where the size's range holds 1 and more (no
    conditional: torch's ``sym_ite`` wants both sides SymInts)."""
    if isinstance(size, E.Const):
        return base if size.value == 1 else E.Const(0)
    if isinstance(size, E.Var) and mins.get(size.name, 0) >= 2:
        return E.Const(0)
    one = E.Call("max", (E.Const(0), E.Call("min", (size, E.arith("-", E.Const(2), size)))))
    return E.arith("*", base, one)


def _order(layout: str | tuple[int, ...], rank: int, where: str, case: str) -> tuple[tuple[int, ...], str]:
    """(dim order, text) of a layout name or dim order on a tensor of ``rank`` dims."""
    if layout == "contiguous":
        return tuple(range(rank)), "contiguous"
    if isinstance(layout, str):
        named = NAMED[layout]
        assert named is not None  # contiguous is answered above
        need, order = named
        if rank != need:
            raise ContractError(where, f"{layout} needs a tensor of rank {need}, the shape has rank {rank} "
                                       f"(case {case})")
        return order, layout
    if len(layout) != rank:
        raise ContractError(where, f"a dim order of {len(layout)} dims for a shape of rank {rank} (case {case})")
    return layout, f"dim order {E.to_text(E.TupleE(tuple(E.Const(i) for i in layout)))}"


def layout_nodes(layout: BoundLayout | None) -> list[E.Node]:
    """The expressions of a bound layout that may use dims (for the dims a case's inputs need)."""
    return [] if layout is None else [*layout.strides, layout.offset]
