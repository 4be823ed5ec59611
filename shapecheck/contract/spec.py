"""The declarations of a contract as loaded (``contract.load`` builds them; ``contract`` binds them per case):
dims, case-dependent fields (``Select``), arguments, layouts, paths and suppressions, the constants of the
format, and what the binder of a case offers the modules that bind a field (``Binding``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, Protocol, TypeAlias, TypeVar, Union, overload

from .. import limits as L
from ..findings import PathId
from ..logic import expr as E

INT32_MAX = 2**31 - 1
SCHEMA = 1
OP_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)::([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?")
ARG_KINDS = ("tensor", "tensors", "int", "ints", "float", "floats", "bool", "bools", "str", "dtype", "none")
UNSPECIFIED = "unspecified"
T = TypeVar("T")
#: a choice's value, as the contract lists it
ChoiceValue = int | str | bool


@dataclass(frozen=True)
class Dim:
    name: str
    min: int
    max: int
    dynamic: bool = True
    doc: str = ""


@dataclass(frozen=True)
class Select(Generic[T]):
    """A field that depends on the case: the first alternative whose ``when`` holds gives the value."""

    alternatives: tuple[tuple[E.Node, T], ...]  # (when, value)


#: a field that may depend on the case: its value, or a ``Select`` of values (``contract.model`` picks the case's)
Selectable: TypeAlias = Union[T, Select[T]]  # noqa: UP007 - a TypeVar in | is not an alias to mypy
#: a scalar argument's value as loaded: a literal, a dtype name, a list of numbers (floats) or an expression
ArgValue = E.Node | str | bool | int | float | tuple[float, ...]
#: an argument's default as the contract writes it (a list as a tuple)
Default = bool | int | float | str | tuple[int | float, ...]
#: an input's layout as loaded: a name (``channels_last``), a dim order, or the choice that names it
InputLayout = str | tuple[int, ...] | E.Var


@dataclass(frozen=True)
class LayoutSpec:
    """An input's layout keys as loaded (each None when not given; ``contract.layouts`` reads and binds them)."""

    layout: Selectable[InputLayout] | None = None
    strides: Selectable[E.Node] | None = None
    expand: Selectable[tuple[int, ...]] | None = None
    offset: Selectable[E.Node] | None = None


@dataclass(frozen=True)
class BoundLayout:
    """An input's layout in one case: its strides and storage offset over dims."""

    strides: tuple[E.Node, ...]
    offset: E.Node
    order: tuple[int, ...] | None  # the dim order (``like ARG`` of an output); None for explicit strides
    text: str  # as a report names it: "channels_last", "dim order (1, 0)", "strides (1, M), expand (0,)"
    name: str = ""  # the layout alone, without expand and offset: "channels_last", "dim order (1, 0)"


@dataclass(frozen=True)
class ArgSpec:
    name: str
    kind: str
    shape: Selectable[E.Node] | None = None  # a tensor; every element of a tensors argument
    shapes: tuple[Selectable[E.Node], ...] | None = None  # element i of a tensors argument
    length: Selectable[E.Node] | None = None  # the number of elements of a tensors argument
    dtype: Selectable[str | E.Var] | None = None  # a dtype name, or the choice that gives it
    value: Selectable[ArgValue] | None = None  # scalars
    present: Selectable[E.Node] = E.TRUE
    keyword: bool = False
    default: Default | None = None
    has_default: bool = False
    low: Selectable[E.Node] | None = None  # integer tensors: the least value drawn (None: -8)
    high: Selectable[E.Node] | None = None  # integer tensors: values drawn below this (None: 9)
    layout: LayoutSpec | None = None  # the input's memory layout (None: contiguous)
    values: dict[str, Selectable[E.Node]] | None = None  # integer tensors: what their values satisfy, {"sum": ...}


@dataclass(frozen=True)
class OutputDoc:
    shape: Selectable[E.Node | None] | None
    what: str


@dataclass(frozen=True)
class PathSpec:
    id: str
    era: str
    when: E.Node
    outputs: tuple[Selectable[OutputEntry], ...]
    runtime_outputs: tuple[OutputDoc, ...]
    source: str = ""
    doc: str = ""
    line: int = 0  # of its table in the contract file (contract.lines; 0: not known)

    @property
    def pid(self) -> PathId:
        return PathId(self.id, self.era, self.line)


REJECT_KINDS = ("runtime-check", "dispatcher-limit")


@dataclass(frozen=True)
class RejectSpec:
    """A region of the input space where the runtime raises (``[[rejects]]``; ``contract.rejects`` loads it).

    ``case``: a choice-only condition naming the cases the region lies in (also cases the domain excludes);
    None: every case of the domain. ``when``: the region within those cases, over dims and choices.
    ``kind``: ``runtime-check`` (the op itself raises: the meta kernel must raise too, SC021) or
    ``dispatcher-limit`` (the dispatcher never routes there; the op itself may run: no obligation)."""

    id: str
    when: E.Node
    case: E.Node | None = None
    kind: str = "runtime-check"
    message: str = ""
    source: str = ""
    doc: str = ""
    line: int = 0  # of its table in the contract file (contract.lines; 0: not known)


@dataclass(frozen=True)
class Suppression:
    rule: str
    reason: str
    case: str | None = None
    path: str | None = None
    dims: tuple[str, ...] = ()
    expires: str | None = None
    index: int = 0
    line: int = 0  # of its [[suppress]] header in the contract file (contract.lines; 0: not known)
    message: str | None = None  # text the finding's message must contain (which of a rule's findings)


@dataclass(frozen=True)
class ContractInfo:
    """What a report needs of its contract once the run is over: the file, the op and the suppressions (the
    result cache stores this, not the whole contract)."""

    file: str
    op: str
    suppressions: tuple[Suppression, ...] = ()


def short(value: object) -> str:
    """A value for a message: as TOML writes it for a boolean, else its repr, cut to 80 characters."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = L.int_text(value) if isinstance(value, int) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# what an output entry of a path may state besides its shape (``contract.outputs`` reads it)
ABSENT = "none"  # the runtime returns None for this output
STRIDE_MATCHES = ("significant", "exact", "dense")
"""How an output's strides are compared: ``significant`` (the default) as Inductor's ``assert_size_stride`` and
torch's ``check_significant_strides`` do (a size-1 dim's stride is free, an empty tensor matches); ``exact``
every stride; ``dense``, the older name of ``significant`` (it is ``is_contiguous``'s rule too)."""


@dataclass(frozen=True)
class DynamicSize:
    """A data-dependent output size (``nonzero``'s count): a name used in the output's shape, with the range
    of values the runtime can give it, as expressions over dims."""

    name: str
    min: E.Node
    max: E.Node


@dataclass(frozen=True)
class OutputSpec:
    """An output entry written as a table (or ``"none"``): its shape and what else the runtime guarantees."""

    shape: Selectable[E.Node | None] | None = None  # None: unspecified
    dtype: Selectable[str | E.Node] | None = None  # a dtype name or an expression over choices; None: not stated
    layout: Selectable[OutputLayout] | None = None  # None: not stated
    strides: Selectable[E.Node] | None = None  # explicit strides over dims
    strides_match: str = "significant"  # STRIDE_MATCHES
    sizes: tuple[DynamicSize, ...] = ()
    absent: bool = False  # the runtime returns None


#: an output's ``layout`` as loaded: ``"contiguous"``, ``("like", ARG)``, or a dim order
OutputLayout = str | tuple[str, str] | tuple[int, ...]
#: an output entry of a path as loaded: its shape (or int) expression, a table (or ``"none"``), None: unspecified
OutputEntry = E.Node | OutputSpec | None


# ---------------------------------------------------------------------------------------------------------
# Binding: what contract.layouts and contract.outputs need of the binder of one case (contract.model's
# _CaseBinder, which imports them, so they name it by this protocol)


class ContractFacts(Protocol):
    """The contract a case is bound from, as a bound field's message needs it."""

    @property
    def file(self) -> str: ...

    @property
    def dims(self) -> tuple[Dim, ...]: ...


class Binding(Protocol):
    """The binder of one case (``contract.model._CaseBinder``)."""

    case: str  # the case's id

    @property
    def c(self) -> ContractFacts: ...

    # the case's value of a field that may depend on the case (two signatures: a union of values stays one)
    @overload
    def pick(self, value: Select[T], key: str) -> T: ...

    @overload
    def pick(self, value: T, key: str) -> T: ...

    def scalar(self, node: E.Node, key: str, shapes: Mapping[str, E.TupleE] | None = None) -> E.Node:
        """An expression bound to the case (choices, lets and argument shapes substituted)."""

    def value_of(self, name: str) -> ChoiceValue | E.Node:
        """The Python value of a choice (a let bound to an expression stays that expression)."""
