"""A path's output entry beyond its shape: ``"none"`` (the runtime returns None), or a table with the shape,
the dtype, the memory layout and the range of each data-dependent size. ``contract.load`` reads each entry
through ``output_leaf``; ``contract.model.bind_case`` binds it per case through ``bind_output``.

The table, in TOML: ``{ shape = "(B, L, H, E)", dtype = "dtype", layout = "(0, 2, 1, 3)" }``;
``layout`` is ``contiguous``, ``like ARG``, a dim order, or (instead) ``strides = "(...)"``;
``layout_match`` is ``significant`` (the default: as Inductor's ``assert_size_stride`` compares, a size-1 dim's
stride is free and nothing is checked while the tensor is empty; ``dense`` is its older name) or ``exact``
(every stride);
``sizes = { n = { min = "0", max = "N" } }`` names data-dependent sizes the shape uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from ..edges import JSON
from ..errors import ContractError
from ..logic import expr as E
from . import dtypes
from . import spec as S

if TYPE_CHECKING:
    from .reader import Reader

OUTPUT_KEYS = {"shape", "dtype", "layout", "strides", "layout_match", "sizes", "doc"}


def output_leaf(r: Reader, value: JSON, key: str) -> S.OutputEntry:
    """One output entry: None (unspecified), an ``OutputSpec`` (``"none"`` or a table), or a shape/int node."""
    if value == S.UNSPECIFIED:
        return None
    if value == S.ABSENT:
        return S.OutputSpec(absent=True)
    if isinstance(value, dict):
        return _table(r, value, key)
    return sized(r, r.parse(value, key), key)


def sized(r: Reader, node: E.Node, key: str) -> E.Node:
    """``node`` if it can be an output's shape or integer: no string, and no condition outside an ``if``'s test
    (``"1 < N < D"``, ``"True"`` are no size; verify would blame the kernel for them)."""
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, E.Const) and (isinstance(n.value, bool) or not isinstance(n.value, int)):
            raise r.err(key, f"expected a shape, an integer expression or 'unspecified', found the "
                             f"{'condition' if isinstance(n.value, bool) else 'value'} {E.to_text(n)}")
        if isinstance(n, (E.Cmp, E.And, E.Or, E.Not)):
            raise r.err(key, f"expected a shape, an integer expression or 'unspecified', found the condition "
                             f"{E.to_text(n)}")
        todo += [c for c in E.children(n) if not (isinstance(n, E.Ite) and c is n.cond)]
    return node


def _table(r: Reader, t: dict[str, JSON], key: str) -> S.OutputSpec:
    r.table(t, key, OUTPUT_KEYS)
    r.want(t.get("doc", ""), f"{key}.doc", str)
    sizes = _sizes(r, t.get("sizes", {}), f"{key}.sizes")
    try:
        for s in sizes:  # the shape and the strides may use the output's own sizes
            r.names[s.name] = "data-dependent output size"
        shape = r.selectable(t["shape"], f"{key}.shape", lambda v, k: _shape_leaf(r, v, k)) if "shape" in t else None
        strides = r.selectable(t["strides"], f"{key}.strides", r.parse) if "strides" in t else None
    finally:
        for s in sizes:
            r.names.pop(s.name, None)
    dtype = r.selectable(t["dtype"], f"{key}.dtype", lambda v, k: _dtype_leaf(r, v, k)) if "dtype" in t else None
    layout = r.selectable(t["layout"], f"{key}.layout", lambda v, k: _layout_leaf(r, v, k)) if "layout" in t else None
    if layout is not None and strides is not None:
        raise r.err(key, "give 'layout' or 'strides', not both")
    if (layout is not None or strides is not None) and shape is None:
        raise r.err(key, "a layout needs the output's shape")
    match = r.want(t.get("layout_match", "significant"), f"{key}.layout_match", str)
    if match not in S.STRIDE_MATCHES:
        raise r.err(f"{key}.layout_match", f"expected one of {', '.join(S.STRIDE_MATCHES)}, found {match!r}")
    used = set().union(*(E.free_names(n) for n in _nodes(shape))) if shape is not None else set()
    for s in sizes:
        if s.name not in used:
            raise r.err(f"{key}.sizes.{s.name}", f"the data-dependent size {s.name!r} is not used in the shape")
    return S.OutputSpec(shape, dtype, layout, strides, match, sizes)


def _shape_leaf(r: Reader, value: JSON, key: str) -> E.Node | None:
    shape = output_leaf(r, value, key)
    if isinstance(shape, S.OutputSpec):
        raise r.err(key, "expected a shape or 'unspecified'")
    return shape


def _nodes(value: S.Selectable[E.Node | None]) -> list[E.Node]:
    if isinstance(value, S.Select):
        return [v for _, v in value.alternatives if isinstance(v, E.Node)]
    return [value] if isinstance(value, E.Node) else []


def _sizes(r: Reader, table: JSON, key: str) -> tuple[S.DynamicSize, ...]:
    r.want(table, key, dict)
    out = []
    for name, spec in table.items():
        k = f"{key}.{name}"
        r.name(name, k, "data-dependent size")
        r.table(spec, k, {"min", "max"}, {"min", "max"})
        lo, hi = r.parse(spec["min"], f"{k}.min"), r.parse(spec["max"], f"{k}.max")
        if isinstance(lo, E.Const) and isinstance(hi, E.Const) and isinstance(lo.value, int) and \
                isinstance(hi.value, int) and lo.value > hi.value:
            raise r.err(f"{k}.min", f"min {lo.value} is above max {hi.value}: the size has no value")
        out.append(S.DynamicSize(name, lo, hi))
    return tuple(out)


def _dtype_leaf(r: Reader, value: JSON, key: str) -> str | E.Node:
    r.want(value, key, str)
    if value not in r.names and dtypes.known(value):
        return value
    if value.strip().isidentifier() and value.strip() not in r.names:
        raise r.err(key, dtypes.unknown_message(value))
    return r.parse(value, key)  # a choice name or an expression over choices: bound per case


#: the memory formats an output layout may name, as their dim orders (outermost first)
_NAMED_ORDERS = {"channels_last": (0, 2, 3, 1), "channels_last_3d": (0, 2, 3, 4, 1)}


def _layout_leaf(r: Reader, value: JSON, key: str) -> S.OutputLayout:
    r.want(value, key, str)
    text = value.strip()
    if text == "contiguous":
        return text
    if text in _NAMED_ORDERS:  # as an input's layout names it (hunt 59: "unknown name 'channels_last'")
        return _NAMED_ORDERS[text]
    if text.startswith("like "):
        arg = text[5:].strip()
        if arg not in r.tensor_args:
            raise r.err(key, f"'like' needs a tensor argument, found {arg!r} (tensor arguments: "
                             f"{', '.join(sorted(r.tensor_args))})")
        return ("like", arg)
    if not text.startswith("("):
        raise r.err(key, f"expected 'contiguous', 'channels_last', 'channels_last_3d', 'like ARG' or a dim order such "
                         f"as (0, 2, 1, 3), found {value!r}")
    node = r.parse(text, key)
    items = node.items if isinstance(node, E.TupleE) else ()
    order = [i.value for i in items if isinstance(i, E.Const) and type(i.value) is int]
    if not items or len(order) != len(items) or sorted(order) != list(range(len(order))):
        raise r.err(key, f"expected 'contiguous', 'channels_last', 'channels_last_3d', 'like ARG' or a dim order such "
                         f"as (0, 2, 1, 3), found {value!r}")
    return tuple(order)


# ---------------------------------------------------------------------------------------------------------
# Binding


@dataclass(frozen=True)
class BoundOutput:
    """An output entry of one case: what the checks of ``prove.outputs`` compare the kernel's output with."""

    absent: bool = False
    shape: E.TupleE | None = None  # with the data-dependent sizes as names
    dtype: str | None = None
    strides: tuple[E.Node, ...] | None = None  # the strides the layout implies
    layout: str = ""  # the layout as written, for messages
    match: str = "significant"
    sizes: tuple[tuple[str, E.Node, E.Node], ...] = ()  # (name, min, max), bound


def bind_output(b: S.Binding, spec: S.OutputSpec, key: str, shapes: dict[str, E.TupleE],
                layouts: Mapping[str, S.BoundLayout | None] | None = None) -> BoundOutput:
    """``spec`` for the case ``b`` (a ``contract.model._CaseBinder``) binds; ``layouts``: each present tensor
    argument's ``spec.BoundLayout`` (None: contiguous), for ``like ARG``."""
    if spec.absent:
        return BoundOutput(absent=True)
    file = b.c.file
    picked = b.pick(spec.shape, f"{key}.shape") if spec.shape is not None else None
    # a shape: a layout checks that it is one, below (and prove.outputs reads it as one where it has sizes)
    shape = None if picked is None else cast(E.TupleE, b.scalar(picked, f"{key}.shape", shapes))
    dtype: S.ChoiceValue | E.Node | None
    dtype = None
    if spec.dtype is not None:
        node = b.pick(spec.dtype, f"{key}.dtype")
        dtype = node if isinstance(node, str) else b.scalar(node, f"{key}.dtype")
        dtype = dtype.value if isinstance(dtype, E.Const) else dtype
        if isinstance(dtype, str) and not dtypes.known(dtype):
            raise ContractError(f"{file}: [{key}.dtype]", f"{dtypes.unknown_message(dtype, False)} (case {b.case})")
        if not isinstance(dtype, str):
            shown = E.to_text(dtype) if isinstance(dtype, E.Node) else repr(dtype)
            raise ContractError(f"{file}: [{key}.dtype]", f"expected a dtype fixed by the choices, found {shown} "
                                                         f"(case {b.case})")
    sizes = tuple((s.name, b.scalar(s.min, f"{key}.sizes.{s.name}.min"), b.scalar(s.max, f"{key}.sizes.{s.name}.max"))
                  for s in spec.sizes)
    strides, layout = None, ""
    if spec.strides is not None or spec.layout is not None:
        if not isinstance(shape, E.TupleE):
            raise ContractError(f"{file}: [{key}.shape]", "a layout needs a tensor shape")
        floor = {d.name: d.min for d in b.c.dims} | {n: -1 for n, _, _ in sizes}
        strides, layout = _strides(b, spec, key, shape, shapes, floor, layouts or {})
    return BoundOutput(False, shape, dtype, strides, layout, spec.strides_match, sizes)


def _strides(b: S.Binding, spec: S.OutputSpec, key: str, shape: E.TupleE, shapes: dict[str, E.TupleE],
             floor: dict[str, int], layouts: Mapping[str, S.BoundLayout | None]) -> tuple[tuple[E.Node, ...], str]:
    file, rank = b.c.file, len(shape.items)
    if spec.strides is not None:
        node = b.scalar(b.pick(spec.strides, f"{key}.strides"), f"{key}.strides", shapes)
        if not isinstance(node, E.TupleE) or len(node.items) != rank:
            raise ContractError(f"{file}: [{key}.strides]", f"expected {rank} strides, one per dim of "
                                                           f"{E.to_text(shape)}, found {E.to_text(node)}")
        return node.items, f"strides {E.to_text(node)}"
    layout = b.pick(spec.layout, f"{key}.layout")
    if layout == "contiguous":
        order, text = tuple(range(rank)), "contiguous"
    elif isinstance(layout, tuple) and layout[:1] == ("like",):
        # the input's dim order (its layout's; identity for a contiguous input), on the output's own shape
        if layout[1] not in shapes or len(shapes[layout[1]].items) != rank:
            raise ContractError(f"{file}: [{key}.layout]", f"'like {layout[1]}' needs a present tensor argument "
                                                          f"of rank {rank} (case {b.case})")
        given = layouts.get(layout[1])
        if given is not None and given.order is None:
            raise ContractError(f"{file}: [{key}.layout]", f"'like {layout[1]}' needs {layout[1]}'s dim order, but "
                                                          f"it gives explicit {given.text}: state the output's "
                                                          f"strides (case {b.case})")
        order = tuple(range(rank)) if given is None or given.order is None else given.order  # (None raised above)
        text = f"like {layout[1]}" + ("" if given is None else f" ({given.name})")
        if given is not None and given.name.startswith("channels_last"):  # torch keeps its rule for sizes 0
            return _unless_ambiguous(shapes[layout[1]], shape, dense_strides(shape.items, order, floor,
                                                                            at_least_one=False), floor), text
    else:
        order = cast(tuple[int, ...], layout)  # _layout_leaf's dim order: neither 'contiguous' nor ('like', ARG)
        text = f"dim order {E.to_text(E.TupleE(tuple(E.Const(i) for i in order)))}"
        if len(order) != rank:
            raise ContractError(f"{file}: [{key}.layout]", f"a dim order of {len(order)} dims for a shape of rank "
                                                          f"{rank} (case {b.case})")
    return dense_strides(shape.items, order, floor), text


def _unless_ambiguous(given: E.TupleE, shape: E.TupleE, strides: tuple[E.Node, ...], floor: dict[str, int]
                      ) -> tuple[E.Node, ...]:
    """``like ARG`` of a channels-last ARG: contiguous strides where ARG's channels and spatial sizes are all 1.
    There a channels-last tensor's strides are those of a contiguous one, and torch reads its memory format
    from them (``suggest_memory_format``; c10's ``is_channels_last_strides_2d``/``_3d``: "fallback to NCHW as
    default layout for ambiguous cases"): the runtime's output in that format is contiguous (hunt 37: a 3-D
    convolution of a (2, 1, 1, 1, 1) input, eager and fake alike)."""
    ones = E.conj([E.compare("==", d, E.Const(1)) for d in given.items[1:]])
    if ones == E.FALSE:
        return strides
    plain = dense_strides(shape.items, tuple(range(len(shape.items))), floor)
    return tuple(E.Ite(ones, c, x) if c != x else x for c, x in zip(plain, strides))


def dense_strides(sizes: tuple[E.Node, ...], order: tuple[int, ...], floor: dict[str, int],
                  at_least_one: bool = True) -> tuple[E.Node, ...]:
    """The strides torch gives a dense tensor whose dims, outermost first, are ``order``: each stride is the
    product of the sizes of the dims inside it, each size at least 1 (``empty``'s and ``empty_permuted``'s
    rule, so a size-0 dim does not zero the strides outside it). ``floor``: each name's least value (a name
    known to be >= 1 needs no ``max(., 1)``). ``at_least_one=False``: the sizes as they are, the rule of
    ``empty(..., memory_format=torch.channels_last)`` (``(2, 0, 3, 4)`` has strides ``(0, 1, 0, 0)``)."""
    factors: list[E.Node] = []
    for d in order:
        size = sizes[d]
        if not at_least_one:
            pass
        elif isinstance(size, E.Const):
            size = E.Const(max(size.value, 1))
        elif not (isinstance(size, E.Var) and floor.get(size.name, -1) >= 1):
            size = E.Call("max", (size, E.Const(1)))
        factors.append(size)
    out: list[E.Node] = [E.Const(1)] * len(sizes)
    for k, d in enumerate(order):
        acc: E.Node = E.Const(1)
        for f in factors[k + 1:]:  # outermost first: (0, 2, 1, 3) of (B, H, L, E) gives L * H * E for dim 0
            acc = E.arith("*", acc, f)
        out[d] = acc
    return tuple(out)
