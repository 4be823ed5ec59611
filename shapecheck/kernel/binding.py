"""Bind a case's argument values to a kernel function by the op's schema -> (positional, keyword) arguments.

The dispatcher calls a kernel with the schema's positional arguments by position and its keyword-only ones by
keyword, whatever the function calls its parameters. Binding the same way makes any function written against
the op's signature work: torch's own ``meta_avg_pool2d(input, kernel_size, ...)`` under a contract that says
``self``, and a third-party fake that names ``dilation_h`` ``dil_h``. A schema argument the contract leaves
out keeps the kernel's own default (the schema's default where the kernel has none and a later argument must
be passed by position). Torch-free: the schema comes in as ``SchemaArg``s.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SchemaArg:
    """One argument of an op's schema."""

    name: str
    type: str  # in schema notation: Tensor, Tensor?, Tensor[], int, SymInt, int[2], SymInt[], float, bool, ...
    keyword_only: bool
    has_default: bool
    default: Any = None  # the schema's default, as Python gives it ([] for ``int[2] stride=[]``)


class Unbindable(Exception):
    """The kernel function has no parameter for a value the case must pass (the message says which)."""


def bind(schema: tuple[SchemaArg, ...], signature: inspect.Signature, given: Mapping[str, Any],
         may_omit: Callable[[str], bool]) -> tuple[list[Any], dict[str, Any]]:
    """``given`` (schema argument name -> value, for the arguments the contract gives) as the dispatcher would
    pass them to a function with ``signature``. ``may_omit(name)``: whether leaving that value out is the
    same call (it is None, or the contract's ``default``), for a kernel without a parameter for it."""
    params = list(signature.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var_positional = any(p.kind == p.VAR_POSITIONAL for p in params)
    var_keyword = any(p.kind == p.VAR_KEYWORD for p in params)
    by_name = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    in_order = [s for s in schema if not s.keyword_only]
    capacity = len(in_order) if var_positional else min(len(in_order), len(positional))
    kwargs: dict[str, Any] = {}
    for s in in_order[capacity:]:
        if s.name in given and (s.name in by_name or var_keyword):
            kwargs[s.name] = given[s.name]  # the kernel takes it by keyword only
        elif s.name in given and not may_omit(s.name):
            raise Unbindable(_missing(s.name, given[s.name], f"it takes {len(positional)} positional arguments and "
                                                             f"the schema's {s.name!r} is argument "
                                                             f"{in_order.index(s)}"))
    last = max((i for i, s in enumerate(in_order[:capacity]) if s.name in given), default=-1)
    args = []
    for i, s in enumerate(in_order[:last + 1]):
        if s.name in given:
            args.append(given[s.name])
        elif i < len(positional) and positional[i].default is not inspect.Parameter.empty:
            args.append(positional[i].default)  # left out by the contract: the kernel's own default
        else:
            args.append(s.default)
    keyword_schema = [s for s in schema if s.keyword_only]
    keyword_params = [p.name for p in params if p.kind == p.KEYWORD_ONLY]
    for j, s in enumerate(keyword_schema):
        if s.name not in given:
            continue
        if s.name in by_name or var_keyword:
            kwargs[s.name] = given[s.name]
        elif len(keyword_params) == len(keyword_schema):  # the same keyword-only arguments, renamed
            kwargs[keyword_params[j]] = given[s.name]
        elif not may_omit(s.name):
            raise Unbindable(_missing(s.name, given[s.name]))
    known = {s.name for s in schema}
    for name, value in given.items():  # contract arguments the schema lacks (allowed with a default)
        if name in known:
            continue
        if name in by_name or var_keyword:
            kwargs[name] = value
        elif not may_omit(name):
            raise Unbindable(_missing(name, value))
    return args, kwargs


def schema_signature(schema: tuple[SchemaArg, ...]) -> inspect.Signature:
    """The op's own calling convention as a signature: what ``bind`` gives for it is a valid call of the op
    (``torch.export`` calls the op, and the dispatcher then calls the kernel under test)."""
    P = inspect.Parameter
    return inspect.Signature([P(s.name, P.KEYWORD_ONLY if s.keyword_only else P.POSITIONAL_OR_KEYWORD)
                              for s in schema])


def rebind(schema: tuple[SchemaArg, ...], signature: inspect.Signature, args: tuple, kwargs: dict[str, Any]
           ) -> tuple[list[Any], dict[str, Any]]:
    """A call of the op (as the dispatcher passes it on) as a call of a kernel with ``signature``."""
    in_order = [s.name for s in schema if not s.keyword_only]
    given = {**dict(zip(in_order, args)), **kwargs}
    defaults = {s.name: s.default for s in schema if s.has_default}

    def may_omit(name: str) -> bool:
        value = given[name]
        plain = value is None or isinstance(value, (bool, int, float, str, list, tuple))
        return value is None or (plain and name in defaults and value == defaults[name])

    return bind(schema, signature, given, may_omit)


def _missing(name: str, value: Any, why: str = "") -> str:
    text = "a tensor" if hasattr(value, "shape") else repr(value)  # never a fake tensor's symbol names
    return f"the kernel takes no argument {name!r}" + (f" ({why})" if why else "") + f" (case needs {name}={text})"
