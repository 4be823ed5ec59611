"""A contract's arguments against what they feed: the op's schema (each argument's kind, optionality, default,
and whether an int may be a SymInt) and the sizes of its input tensors (an expression such as ``C * r * r``
must be a valid size wherever the domain holds). Every mismatch is a ``ContractError`` naming the file and
the key (``[args.upscale_factor.kind]``), found before any trace: a call the op would refuse reads as a
kernel failure otherwise."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .. import limits as L
from ..edges import TorchObject
from ..errors import ContractError, ExprError
from ..logic import expr as E

if TYPE_CHECKING:
    from ..logic.solver import Solver
    from .model import BoundArg, BoundCase, Contract

#: the schema types (``?`` and list elements aside) that each contract kind can give
KIND_TYPES = {
    "tensor": {"Tensor"},
    "tensors": {"Tensor[]", "Tensor?[]"},
    "int": {"int", "SymInt", "Scalar"},
    "ints": {"int[]", "SymInt[]"},
    "float": {"float", "Scalar"},
    "floats": {"float[]"},
    "bool": {"bool", "Scalar"},
    "bools": {"bool[]"},
    "str": {"str"},
    "dtype": {"ScalarType"},
}
_CONTRACT_KIND = {"Tensor": "tensor", "Tensor[]": "tensors", "Tensor?[]": "tensors", "int": "int", "SymInt": "int",
                  "int[]": "ints", "SymInt[]": "ints", "float": "float", "float[]": "floats", "bool": "bool",
                  "bool[]": "bools", "str": "str",
                  "ScalarType": "dtype", "Scalar": "int, float or bool"}


def check_schema(contract: Contract, schema: tuple[tuple[str, str, TorchObject, int | None], ...],
                 no_default: object) -> None:
    """Each ``[[args]]`` entry the schema names against its schema type: ``(name, type, default, N)`` per
    schema argument (``_compat.op_argument_types``; ``no_default`` marks an argument without a default, N the
    size of a fixed-size list). Arguments the schema lacks are ``kernel.load.check_arguments``'s."""
    types = {name: (t, d, n) for name, t, d, n in schema}
    cases = list(contract.cases())
    for spec in contract.args:
        if spec.name not in types:
            continue
        where = f"{contract.file}: [args.{spec.name}"
        typ, default, size = types[spec.name]
        base, optional = typ.removesuffix("?"), typ.endswith("?")
        if spec.kind == "none":
            if not optional and default is not None:
                raise ContractError(f"{where}.kind]", f"the schema says {typ}, which cannot be None; give its "
                                                      f"kind ({_CONTRACT_KIND.get(base, base)})")
        elif base not in KIND_TYPES.get(spec.kind, ()):
            want = _CONTRACT_KIND.get(base)
            fix = f"use kind = \"{want}\"" if want else \
                "the contract language has no kind for it" + ("; kind = \"none\" passes None" if optional else "")
            raise ContractError(f"{where}.kind]", f"the schema says {typ}, not a {spec.kind} argument: {fix}")
        bound = [c.arg(spec.name) for c in cases]
        absent = next((c for c, a in zip(cases, bound) if not a.present), None)
        if absent is not None and not optional:
            raise ContractError(f"{where}.present]", f"the schema says {typ} (not {typ}?): the argument cannot be "
                                                     f"absent, but it is in case {absent.id}")
        dims = next((a.expr for a in bound if a.expr is not None), None)
        if dims is not None and base in ("int", "int[]"):
            raise ContractError(f"{where}.kind]", _not_symint(contract, typ, dims))
        if size is not None and size > 1 and spec.kind == "ints":  # int[1]: one int broadcast, any length else
            _check_list_size(contract, spec.name, typ, size, default, zip(cases, bound))
        if spec.has_default and default is not no_default and _simple(default) \
                and _norm(default) != _norm(spec.default):
            raise ContractError(f"{where}.default]", f"the schema's default is {_text(default)}, not "
                                                     f"{_text(spec.default)}")


def _check_list_size(contract: Contract, name: str, typ: str, size: int, default: TorchObject,
                     bound: Iterable[tuple[BoundCase, BoundArg]]) -> None:
    """An ``int[N]`` argument (N >= 2) takes N values, or 1 (repeated), or its default. ``int[1]`` is no length:
    torch reads it as a list of any length that a single int may stand for (``amax``'s ``int[1] dim = [0, 2]``)."""
    for case, a in bound:
        value = a.value if a.expr is None else a.expr.items if isinstance(a.expr, E.TupleE) else None
        assert value is None or isinstance(value, tuple)  # an ints argument's values
        if not a.present or value is None or len(value) in (1, size) or \
                (isinstance(default, list) and list(value) == default):
            continue
        raise ContractError(f"{contract.file}: [args.{name}.value]",
                            f"the schema says {typ.replace('[]', f'[{size}]', 1)}: {size} values (or 1, repeated), "
                            f"found {len(value)}{_in(case)}")


def _not_symint(contract: Contract, typ: str, value: E.Node) -> str:
    """Why dims cannot give an int that is not a SymInt, and what to do instead."""
    names = sorted(E.free_names(value))
    uses = f"{names[0]} is a dim" if isinstance(value, E.Var) else f"{E.to_text(value)} uses {', '.join(names)}"
    text = f"the schema says {typ} (not {typ.replace('int', 'SymInt', 1)}): use a choice, not a dim ({uses})"
    for n in names:
        d = contract.dim(n)
        if not d.dynamic:
            vals = [str(v) for v in range(d.min, min(d.max, d.min + 3) + 1)] + (["..."] if d.max > d.min + 4 else [])
            vals += [str(d.max)] if d.max > d.min + 3 else []
            text += f"; {n} has dynamic = false, which keeps it a symbolic size: declare it under [choices] " \
                    f"({n} = [{', '.join(vals)}]) to enumerate its values"
            break
    return text


def _simple(value: object) -> bool:
    return value is None or isinstance(value, (bool, int, float, str)) or \
        (isinstance(value, (list, tuple)) and all(type(x) is int for x in value))


def _norm(value: object) -> tuple[bool, object]:
    return (type(value) is bool, tuple(value) if isinstance(value, (list, tuple)) else value)


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(str, value)) + "]"
    return repr(value) if isinstance(value, str) else str(value)


def composite_sizes(contract: Contract) -> list[tuple[BoundCase, str, E.Node]]:
    """(case, key, size) for each input size that is an expression, not a dim or an integer."""
    out: list[tuple[BoundCase, str, E.Node]] = []
    for case in contract.cases():
        for a in case.args:
            shapes = [(f"args.{a.name}.shape", a.shape)] if a.kind == "tensor" and a.shape is not None else \
                [(f"args.{a.name}.shapes[{i}]", s) for i, s in enumerate(a.shapes or ())]
            if a.layout is not None:  # explicit strides and a storage offset must be >= 0 too (a layout's
                # strides are products of sizes: they are)
                shapes = shapes + [(f"args.{a.name}.storage_offset", E.TupleE((a.layout.offset,)))]
                if a.layout.order is None:
                    shapes.append((f"args.{a.name}.strides", E.TupleE(a.layout.strides)))
            for key, shape in shapes:
                out.extend((case, key, i) for i in shape.items if not isinstance(i, E.Var) and not _in_range(i, 0))
    return out


def _in_range(node: E.Node, least: int) -> bool:
    """An integer constant within [least, int64 max]: a size written ``9223372036854775807 + 1`` is folded to one
    beyond it, which the loader's check of TOML integers never saw (hunt 54: verify exited 4)."""
    return isinstance(node, E.Const) and type(node.value) is int and least <= node.value <= L.INT64_MAX


def int_arguments(contract: Contract) -> list[tuple[BoundCase, str, E.Node]]:
    """(case, key, value) for each int an int or ints argument gives by an expression (a constant past int64
    too): torch reads it as an int64."""
    out: list[tuple[BoundCase, str, E.Node]] = []
    for case in contract.cases():
        for a in case.args:
            if a.expr is not None:
                items = a.expr.items if isinstance(a.expr, E.TupleE) else (a.expr,)
            elif a.kind in ("int", "ints") and isinstance(a.value, (int, list, tuple)) and type(a.value) is not bool:
                # a choice's value folded in (``9223372036854775807 + pad`` with pad a choice)
                values = a.value if isinstance(a.value, (list, tuple)) else (a.value,)
                items = tuple(E.Const(v) for v in values if type(v) is int)
            else:
                continue
            out.extend((case, f"args.{a.name}.value", i) for i in items
                       if not isinstance(i, E.Var) and not _in_range(i, L.INT64_MIN))
    return out


def check_sizes(contract: Contract) -> None:
    """Every input size that is an expression (``C * r * r``) lies in [0, int64 max] wherever the domain
    holds: the domain constrains the free dims only, so a size outside would be a tensor that cannot exist
    (torch would guard on it inside the kernel). z3 decides; an undecided size is refused too (the trace
    would rest on it)."""
    sizes = composite_sizes(contract)
    ints = int_arguments(contract)
    totals = [(case, a) for case in contract.cases() for a in case.args if a.total is not None]
    offsets = [(case, a) for case in contract.cases() for a in case.args
               if a.layout is not None and a.layout.offset != E.Const(0)]
    if not sizes and not totals and not ints and not offsets:
        return
    from ..logic.solver import Bounds, Solver

    solver = Solver([Bounds(d.name, d.min, d.max) for d in contract.dims], timeout_ms=5000)
    seen: set[tuple[E.Node, E.Node]] = set()
    for case, key, size in sizes:
        if (case.domain, size) in seen:
            continue
        seen.add((case.domain, size))
        where = f"{contract.file}: [{key}]"
        for divisor in _divisors(size):
            point = _point(solver, [case.domain, E.Cmp("==", divisor, E.Const(0))], where, size, case)
            if point is not None:
                raise ContractError(where, f"the size {E.to_text(size)} divides by zero at {_at(point, size)}"
                                           f"{_in(case)}: add a [domain] requires or narrow the dims' ranges")
        bad = E.Or((E.Cmp("<", size, E.Const(0)), E.Cmp(">", size, E.Const(L.INT64_MAX))))
        point = _point(solver, [case.domain, bad], where, size, case)
        if point is not None:
            at = f" at {_at(point, size)}" if _at(point, size) else ""
            shown = "" if isinstance(size, E.Const) else f" is {E.evaluate(size, point)}"
            raise ContractError(where, f"the size {E.to_text(size)}{shown}"
                                       f"{at}{_in(case)}: a size must stay within [0, 2**63-1] "
                                       "wherever the domain holds; add a [domain] requires or narrow the dims' ranges")
    for case, key, value in ints:
        where = f"{contract.file}: [{key}]"
        bad = E.Or((E.Cmp("<", value, E.Const(L.INT64_MIN)), E.Cmp(">", value, E.Const(L.INT64_MAX))))
        point = _point(solver, [case.domain, bad], where, value, case)
        if point is not None:
            at = f" at {_at(point, value)}" if _at(point, value) else ""
            shown = "" if isinstance(value, E.Const) else f" is {E.evaluate(value, point)}"
            raise ContractError(where, f"the int {E.to_text(value)}{shown}{at}{_in(case)}: an int argument must stay "
                                       "within int64 wherever the domain holds")
    for case, a in offsets:
        _check_extent(contract, solver, case, a)
    for case, a in totals:
        _check_total(contract, solver, case, a)


def _check_extent(contract: Contract, solver: Solver, case: BoundCase, a: BoundArg) -> None:
    """A tensor with a storage offset exists at the domain's least point: its last element's index, the offset
    plus each size less one times its stride, below int64's largest (hunt 54: an offset of 2**63-1 passed the
    loader and verify exited 4 making the tensor)."""
    model = solver.small_model([case.domain])
    layout = a.layout
    if model is None or a.shape is None or layout is None:
        return
    try:
        values = [E.evaluate(n, model) for n in (*a.shape.items, *layout.strides, layout.offset)]
    except ExprError:
        return  # a name the least point leaves free: the trace's own checks see it
    ints = [v for v in values if type(v) is int]
    if len(ints) != len(values) or any(x == 0 for x in ints[:len(a.shape.items)]):
        return
    rank = len(a.shape.items)
    sizes, strides, offset = ints[:rank], ints[rank:2 * rank], ints[-1]
    last = offset + sum((x - 1) * st for x, st in zip(sizes, strides))
    width = _itemsize(a.dtype)
    if (last + 1) * width > L.INT64_MAX:
        raise ContractError(f"{contract.file}: [args.{a.name}.storage_offset]",
                            f"the tensor's last element lies at {last} at {_at(model, layout.offset) or 'every point'}"
                            f"{_in(case)}: its storage, {width} bytes an element, would pass int64's largest byte "
                            "count, which torch cannot allocate; a storage offset plus the extent of its strides must "
                            "stay within it")


def _itemsize(dtype: str | None) -> int:
    """Bytes per element of a dtype name (``float32``: 4, ``bool``: 1, ``float8_e4m3fn``: 1); 16, the widest,
    where the name has no width."""
    import re

    bits = re.search(r"\d+", dtype or "")
    return max(1, int(bits.group()) // 8) if bits else (1 if dtype == "bool" else 16)


def check_divisions(contract: Contract) -> None:
    """No expression of a case divides by zero where it is evaluated: an output (where its path's ``when`` holds),
    a ``when``, an int argument built from dims, each over the case's domain. ``W // (B - 1)`` with B = 1 in the
    domain is a contract error with its point; z3 leaves such a quotient unspecified, so a proof over it says
    nothing (and the runtime checks raised ZeroDivisionError: exit 4)."""
    todo: list[tuple[BoundCase, str, E.Node, list[E.Node]]] = []
    for case in contract.cases():
        for p in case.paths:
            todo.append((case, f"paths.{p.id}.when", p.when, [case.domain]))
            for j, out in enumerate(p.outputs):
                if out is not None:
                    todo.append((case, f"paths.{p.id}.outputs[{j}]", out, [case.domain, p.when]))
        for a in case.args:
            if a.expr is not None:
                todo.append((case, f"args.{a.name}.value", a.expr, [case.domain]))
    lows = {d.name: d.min for d in contract.dims}
    # the dims' ranges keep most divisors off 0 (``H // Hk``, Hk from 1): z3 is asked about the rest only
    asked = [(case, key, node, divisor, where_holds) for case, key, node, where_holds in todo
             for divisor in _divisors(node) if _low(divisor, lows) < 1]
    if not asked:
        return  # decided without z3: a warm cache hit imports neither torch nor z3
    from ..logic.solver import Bounds, Solver

    solver = Solver([Bounds(d.name, d.min, d.max) for d in contract.dims], timeout_ms=5000)
    seen: set[tuple] = set()
    for case, key, node, divisor, where_holds in asked:
        if (divisor, *where_holds) in seen:
            continue
        seen.add((divisor, *where_holds))
        where = f"{contract.file}: [{key}]"
        point = _point(solver, [*where_holds, E.Cmp("==", divisor, E.Const(0))], where, divisor, case)
        if point is not None:
            shown = ", ".join(f"{n}={v}" for n, v in point.items() if n in E.free_names(node)) or "every point"
            raise ContractError(where, f"{E.to_text(node)} divides by zero ({E.to_text(divisor)} == 0) at "
                                       f"{shown}{_in(case)}: add a [domain] requires or narrow the dims' ranges")


def _low(node: E.Node, lows: dict[str, int]) -> float:
    """A lower bound of ``node`` from the dims' least values (sums and products of non-negative terms, a floor
    division of such a term by a positive one); ``-inf`` where this simple reading says nothing."""
    if isinstance(node, E.Const) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, E.Var) and node.name in lows:
        return lows[node.name]
    if isinstance(node, E.Arith) and node.op in ("+", "*", "//"):
        a, b = _low(node.left, lows), _low(node.right, lows)
        if a >= 0 and b >= 0:
            if node.op == "+":
                return a + b
            if node.op == "*":
                return a * b
            return 0 if b >= 1 else float("-inf")
    return float("-inf")


def _check_total(contract: Contract, solver: Solver, case: BoundCase, a: BoundArg) -> None:
    """``values = { sum = S }``: S >= 0, and S == 0 where the tensor is empty, wherever the domain holds (else no
    values can be drawn)."""
    where = f"{contract.file}: [args.{a.name}.values.sum]"
    assert a.shape is not None and a.total is not None  # a tensor argument with values = { sum = ... }
    numel: E.Node = E.Const(1)
    for item in a.shape.items:
        numel = E.arith("*", numel, item)
    bad = E.Or((E.Cmp("<", a.total, E.Const(0)), E.And((E.Cmp("==", numel, E.Const(0)),
                                                         E.Cmp("!=", a.total, E.Const(0))))))
    point = _point(solver, [case.domain, bad], where, a.total, case)
    if point is not None:
        shown = ", ".join(f"{k}={v}" for k, v in point.items())
        raise ContractError(where, f"no values of {a.name} {E.to_text(a.shape)} sum to {E.to_text(a.total)} at "
                                   f"{shown}{_in(case)}: the sum must be >= 0, and 0 where the tensor is empty; add "
                                   "a [domain] requires")


def _in(case: BoundCase) -> str:
    """`` (case rank=4,...)`` for a message, nothing for a contract without choices."""
    return f" (case {case.id})" if case.id else ""


def _divisors(node: E.Node) -> list[E.Node]:
    """The right operands of the ``//`` and ``%`` in an expression."""
    out, todo = [], [node]
    while todo:
        n = todo.pop()
        if isinstance(n, E.Arith) and n.op in ("//", "%") and not isinstance(n.right, E.Const):
            out.append(n.right)
        todo.extend(E.children(n))
    return out


def _point(solver: Solver, conds: list[E.Node], where: str, size: E.Node, case: BoundCase) -> dict[str, int] | None:
    """The least point where ``conds`` hold, None where none does; z3 undecided is a contract error (the
    trace would rest on a size nobody checked)."""
    from ..logic.solver import Sat

    found = solver.satisfiable(conds)
    if found.sat is Sat.UNKNOWN:
        raise ContractError(where, f"cannot decide whether the size {E.to_text(size)} is a valid size on the domain "
                                   f"(z3: {found.reason}){_in(case)}")
    if found.sat is Sat.UNSAT:
        return None
    return solver.small_model(conds) or found.model


def _at(point: dict[str, int], size: E.Node) -> str:
    names = E.free_names(size)
    return ", ".join(f"{n}={v}" for n, v in point.items() if n in names)
