"""The compatibility layer: Python kernels registered through a ``torch.library.Library`` (``Library.impl``, and
``torch.library.impl`` / ``define``'s decorators, which make a Library inside torch). torch keeps no Python
handle on such a function: its dispatch table names only the file where the Library was made (torch's own
``library.py`` for the decorators). While shapecheck imports a library (``--import``), ``recording`` notes each
function registered so, by op and dispatch key, so that the kernel of an op is named and located at its own
``def`` (optimum-quanto's CompositeExplicitAutograd kernels, torchao's CompositeImplicitAutograd ones)."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator
from typing import Any

import torch

from .core import TORCH_DIR, function_file, meta_line, relative

#: (namespace, op name with its overload where one is named, dispatch key) -> the function registered there
_IMPLS: dict[tuple[str, str, str], Any] = {}

#: what the Meta entry of a dispatch table (``meta_line``) holds, by its tag: a kernel registered at Meta, or a
#: composite one torch runs there (torchao's quantization ops are CompositeImplicitAutograd Python functions,
#: optimum-quanto's CompositeExplicitAutograd ones), with the dispatch key it was registered at
_META_TAGS = (("[math kernel]", "CompositeImplicitAutograd kernel", "CompositeImplicitAutograd"),
              ("[default backend kernel]", "CompositeExplicitAutograd kernel", "CompositeExplicitAutograd"))


@contextlib.contextmanager
def recording() -> Iterator[None]:
    """While an import runs: every Python function registered with ``Library.impl`` is noted (``function_at``)."""
    original = vars(torch.library.Library).get("impl")
    if original is None:  # another torch: nothing noted, every kernel named as before
        yield
        return

    def impl(self: Any, op_name: Any, fn: Any, dispatch_key: str = "", *args: Any, **kwargs: Any) -> Any:
        result = original(self, op_name, fn, dispatch_key, *args, **kwargs)
        try:
            name = op_name if isinstance(op_name, str) else f"{op_name._schema.name}.{op_name._schema.overload_name}"
            ns, _, bare = name.rpartition("::")
            body = _kernel_body(fn)
            if callable(body) and (ns or getattr(self, "ns", "")):
                _IMPLS[(ns or self.ns, bare.removesuffix("."), dispatch_key or "CompositeImplicitAutograd")] = body
        except Exception:  # noqa: BLE001 - a registration torch accepted: never failed by the note of it
            pass
        return result

    torch.library.Library.impl = impl  # type: ignore[method-assign]
    try:
        yield
    finally:
        torch.library.Library.impl = original  # type: ignore[method-assign]


def _kernel_body(fn: Any) -> Any:
    """The function whose code is the kernel's: through a partial to the function it calls, and through torch's own
    wrappers (``torch.library.register_kernel`` registers ``torch._disable_dynamo(fn)``, whose code is torch's, hunt
    43: bitsandbytes' optimizer kernels) to the function they wrap. A wrapper of the library's own stays: its
    code runs too."""
    body = fn
    for _ in range(16):
        if isinstance(body, functools.partial):
            body = body.func
            continue
        code = getattr(body, "__code__", None)
        if code is None or not os.path.abspath(code.co_filename).startswith(TORCH_DIR + os.sep):
            break
        inner = getattr(body, "__wrapped__", None)
        if inner is None:  # torch's closure that calls the function it was made for (``func_no_dynamo``)
            cells = [c.cell_contents for c in getattr(body, "__closure__", None) or () if _filled(c)]
            inner = next((f for f in cells if callable(f) and hasattr(f, "__code__")), None)
        if inner is None or not callable(inner):
            break
        body = inner
    return body


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def function_at(op: Any, key: str) -> Any:
    """The Python function registered for ``op`` (an OpOverload) at dispatch ``key`` during a recorded import,
    or None."""
    ns, _, name = op._schema.name.partition("::")
    overload = op._schema.overload_name
    return _IMPLS.get((ns, f"{name}.{overload}" if overload else name, key))


def meta_function(op: Any) -> Any:
    """The Python function torch runs at the op's Meta key when a torch.library.Library registered it there (or
    a composite kernel there), if a recorded import registered it; else None."""
    line = meta_line(op)
    if not python_registered(line):
        return None
    key = next((k for tag, _, k in _META_TAGS if tag in line), "Meta")
    return function_at(op, key)


def python_registered(line: str) -> bool:  # a dispatch-table line of a kernel registered from a Python file
    return ".py:" in line.split("registered at ", 1)[-1]


def python_at_meta(op: Any) -> bool:
    """Whether the op's Meta kernel is a Python function (registered through a ``torch.library.Library``)."""
    return python_registered(meta_line(op))


def library_meta_file(op: Any) -> str | None:
    """The file of the Python function torch runs at the op's Meta key (``meta_function``), else the file whose
    ``torch.library.Library`` registered it (torch.ao's ``quantized_decomposed`` ops), or None: torch keeps only
    where the Library was made, mostly the kernel's file."""
    line = meta_line(op)
    if not python_registered(line):
        return None
    fn = meta_function(op)
    if fn is not None:
        return function_file(fn)
    file = os.path.abspath(line.split("registered at ", 1)[-1].split(".py:", 1)[0] + ".py")
    machinery = (os.path.join(TORCH_DIR, "library.py"), os.path.join(TORCH_DIR, "_library") + os.sep)
    if file == machinery[0] or file.startswith(machinery[1]):
        return None  # torch.library.impl("ns::op", "Meta") makes its Library inside torch: no file of the kernel's
    return file if os.path.isfile(file) else None


def library_meta_words(file: str | None, line: str = "") -> str:
    kind = next((words for tag, words, _ in _META_TAGS if tag in line), "Meta kernel")
    return f"Python {kind} registered through torch.library" + (f" (its Library in {relative(file)})" if file else "")


#: what runs a custom op that returns nothing (or its out= or mutated arguments) and has no fake of its own
TRIVIAL_FAKE = ("torch's generated trivial fake (the op has no fake of its own: FakeTensorMode and torch.export "
                "return its out= or mutated arguments, or None, at any size, and check nothing)")


def trivial_fake(op: Any) -> bool:
    """Whether FakeTensorMode runs torch's generated trivial fake for ``op`` where it has no kernel of its own
    (``torch._library.utils.can_generate_trivial_fake_impl``: a custom op that returns nothing, an out= or an
    in-place one); False where this torch has no such rule."""
    try:
        from torch._library.utils import can_generate_trivial_fake_impl

        return bool(can_generate_trivial_fake_impl(op))
    except (ImportError, AttributeError, AssertionError):
        return False
