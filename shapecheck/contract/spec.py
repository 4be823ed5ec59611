"""The declarations of a contract as loaded (``contract.load`` builds them; ``contract`` binds them per case):
dims, case-dependent fields (``Select``), arguments, paths and suppressions, and the constants of the format."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .. import limits as L
from ..findings import PathId
from ..logic import expr as E

INT32_MAX = 2**31 - 1
SCHEMA = 1
OP_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)::([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?")
ARG_KINDS = ("tensor", "tensors", "int", "ints", "float", "floats", "bool", "bools", "str", "dtype", "none")
UNSPECIFIED = "unspecified"


@dataclass(frozen=True)
class Dim:
    name: str
    min: int
    max: int
    dynamic: bool = True
    doc: str = ""


@dataclass(frozen=True)
class Select:
    """A field that depends on the case: the first alternative whose ``when`` holds gives the value."""

    alternatives: tuple[tuple[E.Node, Any], ...]  # (when, value)


@dataclass(frozen=True)
class ArgSpec:
    name: str
    kind: str
    shape: Any = None  # Node | Select (a tensor; every element of a tensors argument)
    shapes: Any = None  # tuple of Node | Select: element i of a tensors argument
    length: Any = None  # Node | Select: the number of elements of a tensors argument
    dtype: Any = None  # str | Node(choice ref) | Select
    value: Any = None  # literal | Node | Select (scalars)
    present: Any = E.TRUE  # Node | Select
    keyword: bool = False
    default: Any = None
    has_default: bool = False
    low: Any = None  # integer tensors: the least value drawn (Node | Select; None: -8)
    high: Any = None  # integer tensors: values drawn below this (Node | Select; None: 9)
    layout: Any = None  # contract.layouts.LayoutSpec: the input's memory layout (None: contiguous)
    values: Any = None  # integer tensors: what their values must satisfy, {"sum": Node | Select}


@dataclass(frozen=True)
class OutputDoc:
    shape: Any  # Node | Select | None
    what: str


@dataclass(frozen=True)
class PathSpec:
    id: str
    era: str
    when: E.Node
    outputs: tuple[Any, ...]  # Node | Select | None (unspecified)
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


@dataclass(frozen=True)
class ContractInfo:
    """What a report needs of its contract once the run is over: the file, the op and the suppressions (the
    result cache stores this, not the whole contract)."""

    file: str
    op: str
    suppressions: tuple[Suppression, ...] = ()


def short(value: Any) -> str:
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

    shape: Any = None  # Node (None: unspecified)
    dtype: Any = None  # str | Node | Select; None: not stated
    layout: Any = None  # "contiguous" | ("like", arg) | E.TupleE (a dim order) | None: not stated
    strides: Any = None  # Node | Select (explicit strides over dims)
    strides_match: str = "significant"  # STRIDE_MATCHES
    sizes: tuple[DynamicSize, ...] = ()
    absent: bool = False  # the runtime returns None
