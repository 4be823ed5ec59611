"""The compatibility layer: the constants an op's Python kernels compare their arguments with, read from their
code (``kernel_strings``, ``kernel_ints``): the values the audit's input search tries for a ``str`` or an ``int``
argument, so that the kernels' own branches are reached (``if mode == "both":``, ``if num_bits == 8:``)."""

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
