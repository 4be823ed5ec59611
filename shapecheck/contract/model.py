"""Contracts: the validated ``Contract`` (read from TOML by ``contract.load``); a contract x one combination of
choices -> ``BoundCase``.

A contract declares dims (named sizes with ranges), choices (the discrete case values), arguments (how
each argument is built from dims and choices), paths (runtime code paths: ``when`` + output shapes) and
the meta obligations. Every error names the file and the TOML key.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypedDict, TypeVar, overload

from .. import limits as L
from ..errors import ContractError, ExprError
from ..findings import PathId
from ..logic import expr as E
from . import dtypes
from .layouts import BoundLayout, bind_layout, layout_nodes
from .outputs import BoundOutput, bind_output
from .spec import (  # noqa: F401 - re-exported: the declarations are part of the contract module's API
    ARG_KINDS,
    INT32_MAX,
    OP_NAME,
    SCHEMA,
    UNSPECIFIED,
    ArgSpec,
    ArgValue,
    ChoiceValue,
    ContractInfo,
    Default,
    Dim,
    OutputDoc,
    OutputSpec,
    PathSpec,
    RejectSpec,
    Select,
    Selectable,
    Suppression,
)

T = TypeVar("T")
#: an argument's value in one case: a literal, a tuple of them (``ints``, ``bools``, ``floats``), a dtype name
BoundValue = bool | int | float | str | tuple[bool | int | float, ...]


@dataclass(frozen=True)
class Contract:
    file: str
    op: str
    dims: tuple[Dim, ...]
    choices: tuple[tuple[str, tuple[ChoiceValue, ...]], ...]
    requires: tuple[tuple[str, E.Node], ...]  # (key, expr)
    exclude: tuple[tuple[str, E.Node], ...]
    lets: tuple[tuple[str, Selectable[E.Node]], ...]
    args: tuple[ArgSpec, ...]
    paths: tuple[PathSpec, ...]
    guard_free: bool = True
    suppressions: tuple[Suppression, ...] = ()
    doc: str = ""
    rejects: tuple[RejectSpec, ...] = ()

    @property
    def info(self) -> ContractInfo:
        return ContractInfo(self.file, self.op, self.suppressions)

    @property
    def dim_names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dims)

    def dim(self, name: str) -> Dim:
        for d in self.dims:
            if d.name == name:
                return d
        raise KeyError(name)

    @property
    def eras(self) -> tuple[str, ...]:
        seen: list[str] = []
        for p in self.paths:
            if p.era not in seen:
                seen.append(p.era)
        return tuple(seen)

    def cases(self) -> Iterator[BoundCase]:
        """Every combination of choices that is not excluded, bound (once per contract)."""
        return iter(self._bound_cases)

    @functools.cached_property
    def _bound_cases(self) -> tuple[BoundCase, ...]:
        names = [n for n, _ in self.choices]
        out = []
        memo: dict = {"budget": [L.BIND_NODES_PER_CASE * L.max_cases()]}
        for combo in itertools.product(*(vals for _, vals in self.choices)):
            bound = bind_case(self, dict(zip(names, combo)), memo)
            if bound is not None:
                out.append(bound)
        return tuple(out)

    def excluded_reject_cases(self) -> tuple[BoundCase, ...]:
        """The cases a ``[[rejects]]`` rejects whole (a ``case`` and no ``when``), which are therefore not in the
        domain (``cases``), and which ``[domain] exclude`` does not drop: each holds the rejects that name it
        with their ``case`` (its domain is empty)."""
        return self._excluded_reject_cases

    @functools.cached_property
    def _excluded_reject_cases(self) -> tuple[BoundCase, ...]:
        if not any(r.case is not None and r.when == E.TRUE for r in self.rejects):
            return ()
        names = [n for n, _ in self.choices]
        memo: dict = {"budget": [L.BIND_NODES_PER_CASE * L.max_cases()]}
        out = []
        for combo in itertools.product(*(vals for _, vals in self.choices)):
            values = dict(zip(names, combo))
            if _whole_case_rejected(_CaseBinder(self, values, memo), self):
                bound = bind_case(self, values, memo, excluded=True)
                if bound is not None and bound.rejects:
                    out.append(bound)
        return tuple(out)


def size_names(contract: Contract) -> list[str]:
    """The names of every data-dependent output size the contract's paths declare."""
    out: list[str] = []
    for p in contract.paths:
        for o in p.outputs:
            alts = [v for _, v in o.alternatives] if isinstance(o, Select) else [o]
            out += [s.name for v in alts if isinstance(v, OutputSpec) for s in v.sizes if s.name not in out]
    return out


@dataclass(frozen=True)
class BoundArg:
    name: str
    kind: str
    present: bool
    shape: E.TupleE | None = None
    dtype: str | None = None
    value: BoundValue | None = None
    keyword: bool = False
    default: Default | None = None
    has_default: bool = False
    # an int (or ints) argument given by dims, e.g. a SymInt size: the expression, traced as SymInts
    expr: E.Node | None = None
    low: E.Node | None = None  # integer tensors: the values drawn lie in [low, high)
    high: E.Node | None = None
    shapes: tuple[E.TupleE, ...] | None = None  # a tensors argument: one shape per element
    layout: BoundLayout | None = None  # a tensor's strides and storage offset over dims; None: contiguous
    total: E.Node | None = None  # an integer tensor whose values sum to this (``values = { sum = ... }``)

    def elements(self) -> tuple[BoundArg, ...]:
        """A tensors argument's elements, each a present tensor argument named ``name[i]``."""
        return tuple(BoundArg(f"{self.name}[{i}]", "tensor", True, shape=s, dtype=self.dtype)
                     for i, s in enumerate(self.shapes or ()))


@dataclass(frozen=True)
class BoundReject:
    """A ``[[rejects]]`` region in one case: ``when`` over dims (with the dims' ranges)."""

    id: str
    kind: str
    when: E.Node
    message: str
    source: str
    text: str = ""  # the region as the contract writes it: its case and its when
    line: int = 0  # of its table in the contract file (0: not known)

    @property
    def pid(self) -> PathId:
        """The region as findings name it (``rejects.<id>``), at its table's line."""
        return PathId(f"rejects.{self.id}", line=self.line)

@dataclass(frozen=True)
class BoundPath:
    id: str
    era: str
    when: E.Node
    outputs: tuple[E.Node | None, ...]  # TupleE or scalar node, None = unspecified
    runtime_outputs: tuple[tuple[E.Node | None, str], ...]
    source: str
    specs: tuple[BoundOutput | None, ...] = ()  # per output: what a table (or "none") states beyond the shape
    line: int = 0  # of its table in the contract file (0: not known)

    @property
    def pid(self) -> PathId:
        return PathId(self.id, self.era, self.line)


@dataclass(frozen=True)
class BoundCase:
    """One case: the contract with every choice fixed. Expressions mention dims only."""

    contract: Contract
    values: Mapping[str, ChoiceValue]
    args: tuple[BoundArg, ...]
    domain: E.Node  # the requires, bound; dim ranges are separate
    paths: tuple[BoundPath, ...]
    dims: tuple[Dim, ...] = field(default=())  # the dims that appear in the case's arguments
    rejects: tuple[BoundReject, ...] = ()  # the [[rejects]] regions in this case (outside its domain)
    excluded: bool = False  # a case the domain excludes, bound for its rejects only

    @property
    def id(self) -> str:
        return case_id(self.values)

    @property
    def point_dims(self) -> list[str]:
        """The dims a point of the case assigns: its arguments' dims, then those only its domain names
        (``Ci == C * r * r``'s C): an output formula may name them, and a counterexample without them is no
        assignment of the contract's dims (hunt 57: pixel_shuffle's SC001 at ``{B, Ci, H, W}``)."""
        own = [d.name for d in self.dims]
        return own + sorted((E.free_names(self.domain) & set(self.contract.dim_names)) - set(own))

    def arg(self, name: str) -> BoundArg:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(name)


def case_id(values: Mapping[str, ChoiceValue]) -> str:
    def fmt(v: ChoiceValue) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v)

    return ",".join(f"{k}={fmt(v)}" for k, v in values.items())


# ---------------------------------------------------------------------------------------------------------
# Binding a case


class _CaseBinder:
    """Binds one case. ``memo`` is shared by the cases of a contract: an expression that reads the same
    values (choices, lets, argument shapes) binds to the same tree, so most expressions bind once, not once
    per case (108 cases of the SDPA-MPS contract: 0.15 s -> 0.03 s). Bound values are keyed by identity (the
    memo keeps them alive), so a key costs the same however large the trees it names.

    Every bound expression is measured (``measure``) against the limits on its size, depth and numbers."""

    def __init__(self, contract: Contract, values: Mapping[str, ChoiceValue], memo: dict | None = None):
        self.c = contract
        self.case = case_id(values)
        self.values: dict[str, E.Node] = {k: E.Const(v) for k, v in values.items()}
        self.memo = {} if memo is None else memo
        self.names = self.memo.setdefault("free names", {})
        self.sizes = self.memo.setdefault("sizes", {})
        self.dim_bits = {d.name: d.max.bit_length() for d in contract.dims}

    def err(self, key: str, err: ExprError | str) -> ContractError:
        message = err.message if isinstance(err, ExprError) else err
        return ContractError(f"{self.c.file}: [{key}]", message + (f" (case {self.case})" if self.case else ""))

    def value_of(self, name: str) -> ChoiceValue | E.Node:
        """The Python value of a choice (a let bound to an expression stays that expression)."""
        node = self.values[name]
        return node.value if isinstance(node, E.Const) else node

    # a field that may depend on the case: its value in this case (two signatures: a union of values stays one)
    @overload
    def pick(self, value: Select[T], key: str) -> T: ...

    @overload
    def pick(self, value: T, key: str) -> T: ...

    def pick(self, value: Selectable[T], key: str) -> T:
        if not isinstance(value, Select):
            return value
        for i, (when, val) in enumerate(value.alternatives):
            cond = self.condition(when, f"{key}[{i}].when")
            if cond == E.TRUE:
                return val
            if cond != E.FALSE:
                raise ContractError(f"{self.c.file}: [{key}[{i}].when]",
                                    f"a selector may only use choices, found {E.to_text(cond)}")
        raise ContractError(f"{self.c.file}: [{key}]", f"no alternative applies to case {self.case}")

    def scalar(self, node: E.Node, key: str, shapes: Mapping[str, E.TupleE] | None = None) -> E.Node:
        # keyed by id(node): the memo keeps each node alive, so an id cannot be reused for another node
        entry = self.names.get(id(node))
        if entry is None or entry[0] is not node:
            entry = self.names[id(node)] = (node, tuple(sorted(E.free_names(node))), _size(node))
        shapes = shapes or {}
        inputs = tuple(x for n in entry[1] for x in (self.values.get(n), shapes.get(n)))
        memo_key = (id(node), tuple(x if x is None or isinstance(x, E.Const) else id(x) for x in inputs))
        hit = self.memo.get(memo_key)
        if hit is not None and hit[0] is node:
            return hit[1]
        budget = self.memo.get("budget")
        if budget is not None:
            budget[0] -= entry[2]
            if budget[0] < 0:
                raise self.err(key, f"binding the cases takes more than {L.BIND_NODES_PER_CASE} expression nodes "
                                    f"per case of the limit ({L.max_cases()} cases, --max-cases): the expressions "
                                    "depend on the choices in too many ways; use fewer choices, or raise --max-cases")
        try:
            out = E.bind(node, self.values, shapes)
        except ExprError as err:
            raise self.err(key, err) from None
        over = _over_limits(*self.measure(out)[:3])
        if over:
            raise self.err(key, f"with its lets and argument shapes substituted, this expression has {over}")
        self.memo[memo_key] = (node, out, inputs)
        return out

    def condition(self, node: E.Node, key: str, shapes: Mapping[str, E.TupleE] | None = None) -> E.Node:
        """``scalar`` for a field that must be a condition (``when``, ``requires``, ``exclude``, ``present``)."""
        out = self.scalar(node, key, shapes)
        if E.kind_of(out) != "bool":
            raise self.err(key, f"expected a condition, found {E.to_text(out)}")
        return out

    def measure(self, node: E.Node) -> tuple[int, int, int, frozenset[str]]:
        """(nodes with every shared subtree counted again, depth, bits of the largest number the expression
        can reach over the dims' ranges, dims used) of a bound expression, memoised by identity."""
        hit = self.sizes.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        kids = [self.measure(k) for k in E.children(node)]
        names = frozenset([node.name]) if isinstance(node, E.Var) else frozenset()
        out = (1 + sum(k[0] for k in kids), 1 + max((k[1] for k in kids), default=0), _bits(node, kids, self.dim_bits),
               names.union(*(k[3] for k in kids)))
        self.sizes[id(node)] = (node, out)
        return out


def _over_limits(nodes: int, depth: int, bits: int) -> str | None:
    """What of a bound expression's measure is over its limit, if anything."""
    for what, value, limit in ((f"{nodes} nodes", nodes, L.BOUND_NODES),
                               (f"{depth} levels of nesting", depth, L.BOUND_DEPTH),
                               (f"numbers of {bits} bits over the dims' ranges", bits, L.CONST_BITS)):
        if value > limit:
            return f"{what} (the limit is {limit})"
    return None


def _size(node: E.Node) -> int:
    """Nodes of an expression as written (before binding)."""
    return 1 + sum(_size(k) for k in E.children(node))


def _bits(node: E.Node, kids: list[tuple[int, int, int, frozenset[str]]], dim_bits: Mapping[str, int]) -> int:
    """Bits of the largest number ``node`` can reach, from its children's (``kids``, as ``measure`` gives them)
    and the bits of each dim's maximum."""
    b = [k[2] for k in kids]
    if isinstance(node, E.Const):
        return node.value.bit_length() if type(node.value) is int else 1
    if isinstance(node, E.Var):
        return dim_bits.get(node.name, 64)
    if isinstance(node, E.Arith):
        return {"+": max(b) + 1, "-": max(b) + 1, "*": b[0] + b[1], "//": b[0], "%": b[1]}[node.op]
    if isinstance(node, (E.Cmp, E.And, E.Or, E.Not)):
        return 1
    return max(b[1:] if isinstance(node, E.Ite) else b, default=0)  # Neg, min/max, shapes, indexing


def _scalar_value(contract: Contract, spec: ArgSpec, value: E.Node, key: str) -> tuple[BoundValue | None, E.Node | None]:
    """A bound non-tensor value -> (the Python value, None) when it is fixed by the choices, or
    (None, the expression) for an int or ints argument given by dims (passed to the kernel as SymInts)."""
    where = f"{contract.file}: [{key}.value]"
    if spec.kind == "bools":
        bools = [i.value for i in value.items if isinstance(i, E.Const) and type(i.value) is bool] \
            if isinstance(value, E.TupleE) else None
        if bools is None or not isinstance(value, E.TupleE) or len(bools) != len(value.items):
            raise ContractError(where, f"a bools argument needs a list of true/false, found {E.to_text(value)}")
        return tuple(bools), None
    if spec.kind == "ints":
        if not isinstance(value, E.TupleE):
            raise ContractError(where, f"an ints argument needs a tuple or a list, found {E.to_text(value)}")
        ints = [i.value for i in value.items if isinstance(i, E.Const) and type(i.value) is int]
        if len(ints) == len(value.items):
            return tuple(ints), None
        return None, value
    if isinstance(value, E.Const):
        return value.value, None
    if spec.kind == "int" and E.kind_of(value) == "int":
        return None, value
    raise ContractError(where, "only an int or ints argument may use dims; other values may only use choices")


class _Common(TypedDict):
    """The fields of a ``BoundArg`` that every kind takes from its ``ArgSpec`` as they are."""

    keyword: bool
    default: Default | None
    has_default: bool


def _bind_arg(b: _CaseBinder, spec: ArgSpec, shapes: dict[str, E.TupleE]) -> BoundArg:
    """One argument of the case; a tensor's shape is added to ``shapes`` (later fields may use it)."""
    key, file = f"args.{spec.name}", b.c.file
    common: _Common = {"keyword": spec.keyword, "default": spec.default, "has_default": spec.has_default}
    present = b.condition(b.pick(spec.present, f"{key}.present"), f"{key}.present")
    if present not in (E.TRUE, E.FALSE):
        raise ContractError(f"{file}: [{key}.present]", "'present' may only use choices")
    if present == E.FALSE:
        return BoundArg(spec.name, spec.kind, False, **common)
    if spec.kind in ("tensor", "tensors"):
        dtype: ChoiceValue | E.Node | None = b.pick(spec.dtype, f"{key}.dtype")
        if isinstance(dtype, E.Var):
            dtype = b.value_of(dtype.name)
        if not isinstance(dtype, str) or not dtypes.known(dtype):
            raise ContractError(f"{file}: [{key}.dtype]", dtypes.unknown_message(dtype))
        if dtypes.quantized(dtype):
            raise ContractError(f"{file}: [{key}.dtype]", f"{dtype} is a quantized dtype: torch makes its tensors at "
                                "concrete sizes only (its empty kernel refuses symbolic ones), so no kernel can be traced "
                                "on one; not supported as an input")
        if spec.kind == "tensors":
            return BoundArg(spec.name, "tensors", True, dtype=dtype, shapes=_bind_list(b, spec, shapes), **common)
        shape = _input_shape(b, spec.shape, f"{key}.shape", shapes)
        shapes[spec.name] = shape
        low, high = (_int_bound(b, x, f"{key}.{n}", shapes) for n, x in (("low", spec.low), ("high", spec.high)))
        if isinstance(low, E.Const) and isinstance(high, E.Const) and isinstance(low.value, int) and \
                isinstance(high.value, int) and low.value >= high.value:
            raise ContractError(f"{file}: [{key}.low]", f"low {low.value} is not below high {high.value}: no value "
                                "lies in [low, high)")
        if spec.values and not dtypes.integral(dtype):
            raise ContractError(f"{file}: [{key}.values]", f"values decide a size only of an integer tensor; "
                                f"{spec.name} is {dtype}")
        layout = bind_layout(b, spec.layout, shape, key, shapes)
        total = _int_bound(b, spec.values["sum"], f"{key}.values.sum", shapes) if spec.values else None
        return BoundArg(spec.name, "tensor", True, shape=shape, dtype=dtype, low=low, high=high, layout=layout,
                        total=total, **common)
    value: ArgValue | BoundValue | None = b.pick(spec.value, f"{key}.value")
    expr = None
    if spec.kind == "dtype":
        value = b.value_of(value.name) if isinstance(value, E.Var) else value
        if not isinstance(value, str) or not dtypes.known(value):
            raise ContractError(f"{file}: [{key}.value]", dtypes.unknown_message(value))
    elif isinstance(value, E.Node) and spec.kind == "bools":  # literals only: nothing to evaluate
        value, expr = _scalar_value(b.c, spec, value, key)
    elif isinstance(value, E.Node):
        value = b.scalar(value, f"{key}.value", shapes)
        value, expr = _scalar_value(b.c, spec, value, key)
    want = _VALUE_TYPES.get(spec.kind)
    if want is not None and value is not None and (not isinstance(value, want[0]) or
                                                   (spec.kind != "bool" and isinstance(value, bool))):
        raise ContractError(f"{file}: [{key}.value]", f"{'an' if spec.kind[0] in 'aeiou' else 'a'} {spec.kind} argument needs {want[1]}, "
                                                        f"found {value!r}")
    return BoundArg(spec.name, spec.kind, True, value=value, expr=expr, **common)


#: the Python type a fixed value of each scalar kind must have (the schema's type: an int is no float's bool)
_VALUE_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {
    "int": (int, "an integer"), "float": ((int, float), "a number"), "bool": (bool, "true or false"),
    "str": (str, "a string")}


def _bind_list(b: _CaseBinder, spec: ArgSpec, shapes: Mapping[str, E.TupleE]) -> tuple[E.TupleE, ...]:
    """The element shapes of a tensors argument: ``length`` (choices only) of them."""
    key = f"args.{spec.name}"
    assert spec.length is not None  # a tensors argument has one (contract.load)
    length = b.scalar(b.pick(spec.length, f"{key}.length"), f"{key}.length")
    if not (isinstance(length, E.Const) and type(length.value) is int and length.value >= 0):
        raise b.err(f"{key}.length", f"expected a non-negative integer fixed by the choices, found "
                                     f"{E.to_text(length)}")
    if length.value > L.TENSOR_LIST:
        raise b.err(f"{key}.length", f"a list of {length.value} tensors, over the limit of {L.TENSOR_LIST}")
    if spec.shapes is None:
        return (_input_shape(b, spec.shape, f"{key}.shape", shapes),) * length.value
    if len(spec.shapes) < length.value:
        raise b.err(f"{key}.shapes", f"{len(spec.shapes)} shapes for a list of length {length.value}: give one "
                                     "shape per element (or 'shape' for all of them)")
    return tuple(_input_shape(b, s, f"{key}.shapes[{j}]", shapes) for j, s in enumerate(spec.shapes[:length.value]))


def _input_shape(b: _CaseBinder, value: Selectable[E.Node] | None, key: str, shapes: Mapping[str, E.TupleE]) -> E.TupleE:
    """An input tensor's shape: a tuple of integer expressions over dims and choices (``C * r * r``); a size
    that can be negative on the domain is refused before any trace (``contract.schema.check_sizes``)."""
    assert value is not None  # a tensor has a shape (contract.load)
    shape = b.scalar(b.pick(value, key), key, shapes)
    if not isinstance(shape, E.TupleE):
        raise b.err(key, f"expected a shape, found {E.to_text(shape)}")
    for item in shape.items:  # each an integer expression (binding checked it)
        if isinstance(item, E.Const) and isinstance(item.value, int) and item.value < 0:
            raise b.err(key, f"a size cannot be negative, found {E.to_text(item)} in {E.to_text(shape)}")
    return shape


def bind_case(contract: Contract, values: Mapping[str, ChoiceValue], memo: dict | None = None, *,
              excluded: bool = False) -> BoundCase | None:
    """Fix the choices; None when the case is excluded (by ``[domain] exclude``, or wholly rejected by a
    ``[[rejects]]``). ``memo``: see ``_CaseBinder``. ``excluded``: bind a wholly rejected case, for the
    ``[[rejects]]`` that name it with their ``case`` (its domain is false)."""
    b = _CaseBinder(contract, values, memo)
    for key, node in contract.exclude:
        if b.condition(node, key) == E.TRUE:
            return None
    if not excluded and _whole_case_rejected(b, contract):
        return None
    for name, val in contract.lets:
        key = f"let.{name}"
        b.values[name] = b.scalar(b.pick(val, key), key)
    shapes: dict[str, E.TupleE] = {}
    args = [_bind_arg(b, spec, shapes) for spec in contract.args]
    requires = [b.condition(node, key, shapes) for key, node in contract.requires]
    layouts = {a.name: a.layout for a in args if a.kind == "tensor" and a.present}
    rejects = _bind_rejects(b, contract, shapes, excluded)
    # a reject region is not part of the domain: taken out (unless a requires already says so)
    outside = [E.negate(r.when) for r in rejects]
    domain = E.FALSE if excluded else E.conj(requires + [n for n in outside if n not in requires])
    paths = []
    for p in contract.paths:
        key = f"paths.{p.id}"
        when = b.condition(p.when, f"{key}.when", shapes)
        outs: list[E.Node | None] = []
        specs: list[BoundOutput | None] = []
        for j, entry in enumerate(p.outputs):
            o = b.pick(entry, f"{key}.outputs[{j}]")
            if isinstance(o, OutputSpec):
                spec = bind_output(b, o, f"{key}.outputs[{j}]", shapes, layouts)
                specs.append(spec)
                outs.append(None if spec.sizes else spec.shape)  # data-dependent sizes: output_checks alone
            else:
                specs.append(None)
                outs.append(None if o is None else b.scalar(o, f"{key}.outputs[{j}]", shapes))
        docs = []
        for j, d in enumerate(p.runtime_outputs):
            shape = b.pick(d.shape, f"{key}.runtime_outputs[{j}].shape") if d.shape is not None else None
            docs.append((None if shape is None else b.scalar(shape, f"{key}.runtime_outputs[{j}]", shapes), d.what))
        paths.append(BoundPath(p.id, p.era, when, tuple(outs), tuple(docs), p.source, tuple(specs), p.line))
    inputs = [*shapes.values(), *(s for a in args if a.shapes for s in a.shapes),
              *(a.expr for a in args if a.expr is not None), *(n for a in args for n in layout_nodes(a.layout)),
              *(a.total for a in args if a.total is not None)]
    used = set().union(*(b.measure(x)[3] for x in inputs))
    used |= set().union(*(b.measure(r.when)[3] for r in rejects))
    dims = tuple(d for d in contract.dims if d.name in used)
    return BoundCase(contract, dict(values), tuple(args), domain, tuple(paths), dims, rejects, excluded)


def _int_bound(b: _CaseBinder, value: Selectable[E.Node] | None, key: str, shapes: Mapping[str, E.TupleE]) -> E.Node | None:
    """An integer tensor's ``low`` or ``high``: an integer expression over dims (None when not given)."""
    if value is None:
        return None
    node = b.scalar(b.pick(value, key), key, shapes)
    if E.kind_of(node) != "int":
        raise b.err(key, f"expected an integer expression, found {E.to_text(node)}")
    return node


def _whole_case_rejected(b: _CaseBinder, contract: Contract) -> bool:
    """Whether a ``[[rejects]]`` with a ``case`` and no ``when`` takes the whole case out of the domain."""
    return any(r.case is not None and r.when == E.TRUE and b.condition(r.case, f"rejects.{r.id}.case") == E.TRUE
               for r in contract.rejects)


def _bind_rejects(b: _CaseBinder, contract: Contract, shapes: Mapping[str, E.TupleE],
                  excluded: bool) -> tuple[BoundReject, ...]:
    """The ``[[rejects]]`` regions of the case: those whose ``case`` holds (every case of the domain for one
    without ``case``; only the named ones in an excluded case) and whose ``when`` is not false."""
    out = []
    for r in contract.rejects:
        key = f"rejects.{r.id}"
        if r.case is None and excluded:
            continue
        if r.case is not None and b.condition(r.case, f"{key}.case") != E.TRUE:
            continue
        when = b.condition(r.when, f"{key}.when", shapes)
        if when != E.FALSE:
            text = " and ".join(E.to_text(x) for x in (r.case, r.when) if x is not None and x != E.TRUE)
            out.append(BoundReject(r.id, r.kind, when, r.message, r.source, text or "true", r.line))
    return tuple(out)
