"""The compatibility layer: the constants an op's Python kernels compare their arguments with, read from their
code (``kernel_strings``, ``kernel_ints``): the values the audit's input search tries for a ``str`` or an ``int``
argument, so that the kernels' own branches are reached (``if mode == "both":``, ``if num_bits == 8:``); and the
names they use as sizes (``kernel_size_names``), read from their source."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


def _kernel_codes(op: Any) -> Iterator[Any]:
    """The code of the op's Python kernels (its torch.library fake, a ``custom_op``'s own eager function, the
    Python functions a recorded import registered for it at CPU or a composite key), the code nested in them, then
    that of the functions of their own module they call (tico's ``_conv2d_with_string_padding``; two calls deep)."""
    import types

    from .core import fake_kernel
    from .library_impls import function_at

    fns: list[Any] = [fake_kernel(op)]
    with contextlib.suppress(ImportError, AttributeError):
        from torch._library.custom_ops import OPDEFS

        fns.append(getattr(OPDEFS.get(op.name().partition(".")[0]), "_init_fn", None))
    with contextlib.suppress(AttributeError):  # modelopt's ``torch.library.impl("tensorrt::quantize_op", "cpu")``
        fns += [function_at(op, key) for key in ("CPU", "CompositeExplicitAutograd", "CompositeImplicitAutograd")]
    # (code, the globals its names resolve in, the module a called function must be of, calls deep)
    todo = [(fn.__code__, fn.__globals__, fn.__module__, 0) for fn in fns if isinstance(fn, types.FunctionType)]
    seen = {code for code, _, _, _ in todo}
    while todo:
        code, names, module, depth = todo.pop(0)
        yield code
        todo += [(c, names, module, depth) for c in code.co_consts if isinstance(c, types.CodeType)]
        for name in code.co_names if depth < 2 else ():
            called = names.get(name)
            if isinstance(called, types.FunctionType) and called.__module__ == module and called.__code__ not in seen:
                seen.add(called.__code__)
                todo.append((called.__code__, called.__globals__, module, depth + 1))


def kernel_strings(op: Any, limit: int = 8) -> list[str]:
    """The word-like string constants of the op's Python kernels (``_kernel_codes``), in the order they appear:
    the values a ``str`` argument's branches compare with (``if mode == "both":``), tried by the audit beside its
    guesses."""
    import re

    out: list[str] = []
    for code in _kernel_codes(op):
        for c in code.co_consts:
            for v in c if isinstance(c, (tuple, frozenset)) else (c,):  # ``mode in ("left", "right")``
                if isinstance(v, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]{0,23}", v) and v not in out:
                    out.append(v)
        if len(out) >= limit:
            break
    return out[:limit]


def kernel_ints(op: Any, limit: int = 4) -> dict[str, list[int]]:
    """The int constants the op's Python kernels (``_kernel_codes``) compare a variable with, by the variable's
    name (modelopt's ``if num_bits == 8 and exponent_bits == 4:``, ``bits in (2, 4)``, ``(a, b) == (4, 3)``): the
    values an int argument of that name takes on the kernels' own branches, tried by the audit first after its
    default."""
    return _compared(op, lambda v: type(v) is int and -(2 ** 16) < v < 2 ** 16, limit)


def kernel_named_strings(op: Any, limit: int = 4) -> dict[str, list[str]]:
    """The string constants the op's Python kernels compare a variable with, by the variable's name (amd-quark's
    ``assert quant_dtype == "mx"`` in a callee, hunt 41: past ``kernel_strings``' first 8 words of the kernel):
    the values a ``str`` argument of that name takes on the kernels' own branches."""
    import re

    return _compared(op, lambda v: isinstance(v, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]{0,23}", v) is not None,
                     limit)


def _compared(op: Any, keep: Any, limit: int) -> dict[str, list[Any]]:
    """variable name -> the constants ``keep`` takes that the kernels compare it with (``==``, ``in``, a tuple's
    ``==``), at most ``limit`` each, in the order they appear."""
    import dis

    out: dict[str, list[Any]] = {}

    def note(name: str, value: Any) -> None:
        values = [v for v in (value if isinstance(value, (tuple, frozenset)) else (value,)) if keep(v)]
        kept = out.setdefault(name, [])
        kept += [v for v in values if v not in kept][:limit - len(kept)]

    def local(x: Any) -> bool:  # a local variable's load (``LOAD_FAST_CHECK`` in later Pythons)
        return (x.opname.startswith("LOAD_FAST") or x.opname == "LOAD_DEREF") and isinstance(x.argval, str)

    for code in _kernel_codes(op):
        ins = list(dis.get_instructions(code))
        for i, x in enumerate(ins):
            if x.opname not in ("COMPARE_OP", "CONTAINS_OP") or i < 2:
                continue
            a, b = ins[i - 2], ins[i - 1]
            if local(a) and b.opname == "LOAD_CONST":
                note(a.argval, b.argval)
            elif a.opname == "LOAD_CONST" and local(b):
                note(b.argval, a.argval)
            elif a.opname == "BUILD_TUPLE" and b.opname == "LOAD_CONST" and isinstance(b.argval, tuple) \
                    and len(b.argval) == a.argval and i >= 2 + a.argval:
                names = ins[i - 2 - a.argval:i - 2]  # ``(num_bits, exponent_bits) == (4, 3)``
                if all(local(n) for n in names):
                    for n, v in zip(names, b.argval, strict=True):
                        note(n.argval, v)
    return {k: v for k, v in out.items() if v}


#: calls whose arguments are sizes (``t.new_empty([dim0, n])``, ``x.view(b, -1)``)
_SHAPE_CALLS = frozenset({"new_empty", "new_zeros", "new_ones", "new_full", "empty", "zeros", "ones", "full", "randn",
                          "rand", "empty_strided", "new_empty_strided", "reshape", "view", "expand", "arange"})
#: calls whose int arguments at these places are axes, as methods (``x.sum(dim)``, ``x.split(sizes, dim)``; "*": every
#: one, ``x.permute(0, 2, 1)``); as functions of torch (``torch.sum(x, dim)``) one place later
_AXIS_CALLS: dict[str, tuple[int, ...] | str] = {
    **dict.fromkeys(("size", "stride", "sum", "mean", "amax", "amin", "max", "min", "unsqueeze", "squeeze", "unflatten",
                     "narrow", "select", "index_select", "gather", "scatter", "softmax", "log_softmax", "cumsum",
                     "cumprod", "argmax", "argmin", "var", "std", "prod", "sort", "unbind", "all", "any",
                     "logsumexp"), (0,)),
    **dict.fromkeys(("transpose", "flatten", "swapaxes"), (0, 1)),
    **dict.fromkeys(("split", "chunk", "roll", "norm", "topk", "diff", "tensor_split"), (1,)),
    **dict.fromkeys(("permute", "flip", "movedim"), "*"),
    **dict.fromkeys(("cat", "stack", "concat"), (0,)),  # torch.cat(tensors, dim): place 1 as a function
}


def kernel_size_names(op: Any) -> frozenset[str]:
    """The names the op's Python kernels (``_kernel_codes``) use as sizes and never as axes: in the sizes of a tensor
    they make or view (``t.new_empty([dim0, sum(dim1s)])``), never as a ``dim=`` or in an axis call (``x.sum(dim)``,
    ``x.shape[dim]``), the kernels' calls of their own helpers followed (``_fake(t, dim0)``'s ``n``). An int argument
    named like an axis (torchrec's ``dim0``) is a size where the kernels say so (hunt 60: held constant by its name,
    a branch on it was never explored)."""
    import ast

    sizes: set[str] = set()
    axes: set[str] = set()
    params: dict[str, list[str]] = {}  # a parsed function's name -> its positional parameters
    calls: list[tuple[str, list[str | None]]] = []  # (called function's name, the names passed by position)
    for tree in _sources(op):
        fdef = tree.body[0] if tree.body and isinstance(tree.body[0], ast.FunctionDef) else None
        if fdef is not None:
            params.setdefault(fdef.name, [a.arg for a in fdef.args.args])
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                _call_uses(node, sizes, axes)
                if isinstance(node.func, ast.Name):
                    calls.append((node.func.id, [a.id if isinstance(a, ast.Name) else None for a in node.args]))
            elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr in ("shape", "stride"):
                axes |= _names(node.slice)
    for _ in range(2):  # a helper's parameter is the name passed for it (two calls deep, as ``_kernel_codes``)
        for callee, passed in calls:
            for name, param in zip(passed, params.get(callee, [])):
                if name is not None:
                    sizes |= {name} if param in sizes else set()
                    axes |= {name} if param in axes else set()
    return frozenset(sizes - axes)


def _sources(op: Any) -> Iterator[Any]:
    """The parsed source of each of the op's kernel functions (``_kernel_codes``) that has one, once each."""
    import ast
    import inspect
    import textwrap

    seen: set[tuple[str, int]] = set()
    for code in _kernel_codes(op):
        try:
            lines, first = inspect.getsourcelines(code)
            if (code.co_filename, first) in seen:
                continue
            seen.add((code.co_filename, first))
            yield ast.parse(textwrap.dedent("".join(lines)))
        except (OSError, TypeError, SyntaxError, ValueError):
            continue


def _names(node: Any) -> set[str]:
    import ast

    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _value_names(node: Any) -> set[str]:
    """The names whose values make up ``node``'s value: not those only tested (``n // 2 if mode == 0 else n``
    reads ``mode`` as a switch, not a size)."""
    import ast

    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.IfExp):
        return _value_names(node.body) | _value_names(node.orelse)
    if isinstance(node, (ast.Compare, ast.BoolOp, ast.Attribute)):  # a test; ``t.shape``: a tensor's, no int's
        return set()
    if isinstance(node, ast.Call):  # arithmetic on sizes (``sum(dim1s)``), not what a helper is passed
        called = node.func.attr if isinstance(node.func, ast.Attribute) else \
            node.func.id if isinstance(node.func, ast.Name) else ""
        return set().union(*(_value_names(a) for a in node.args)) if called in _SIZE_ARITHMETIC else set()
    return set().union(*(_value_names(c) for c in ast.iter_child_nodes(node)))


#: the calls whose value is arithmetic on their arguments' values (a size made of sizes)
_SIZE_ARITHMETIC = frozenset({"sum", "max", "min", "abs", "int", "prod", "sym_max", "sym_min", "sym_int"})


def _call_uses(node: Any, sizes: set[str], axes: set[str]) -> None:
    """The names a call uses as sizes (a tensor's sizes it makes) and as axes (``dim=``, an axis call's args)."""
    import ast

    called = node.func.attr if isinstance(node.func, ast.Attribute) else \
        node.func.id if isinstance(node.func, ast.Name) else ""
    for kw in node.keywords:
        if kw.arg in ("dim", "dims", "axis", "axes"):
            axes |= _names(kw.value)
        elif kw.arg in ("size", "shape") and called in _SHAPE_CALLS:
            sizes |= _value_names(kw.value)
    if called in _SHAPE_CALLS:
        for a in node.args:
            sizes |= _value_names(a)
    elif called in _AXIS_CALLS:
        places = _AXIS_CALLS[called]
        # torch.sum(x, dim) and sum(x, dim): one place later than x.sum(dim)
        shift = int(isinstance(node.func, ast.Name) or (isinstance(node.func, ast.Attribute)
                                                         and isinstance(node.func.value, ast.Name)
                                                         and node.func.value.id == "torch"))
        for k, a in enumerate(node.args):
            if places == "*" and k >= shift or places != "*" and k - shift in places:
                axes |= _names(a)
