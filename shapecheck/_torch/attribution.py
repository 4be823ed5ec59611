"""Who asked for a guard: the kernel's own code (``Own``: its files, or its code objects) or torch's (a helper,
a sub-op's C++ kernel), read from a stack (``origin``). Part of the door into torch: it knows torch's files."""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from typing import Any

import torch

from ..findings import SourceLoc

TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
SHAPECHECK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Own:
    """The kernel's own code: whole files (a kernel file of the user's) and code objects (a torch kernel
    function's body and the code nested in it: ``_torch.kernels.own_codes``). Everything else on a stack is
    torch's (its helpers, sub-ops, machinery) or the caller's."""

    def __init__(self, files: Any = (), codes: Any = ()) -> None:
        self.files = frozenset(os.path.abspath(f) for f in files)
        self.codes = frozenset(codes)
        self._lines = {(c.co_filename, c.co_name, line) for c in self.codes for _, _, line in c.co_lines()
                       if line is not None}
        self._by_file: dict[str, bool] = {}

    @classmethod
    def of(cls, own: Any) -> Own:
        return own if isinstance(own, Own) else cls(files=own or ())

    def __bool__(self) -> bool:
        return bool(self.files or self.codes)

    def _file(self, filename: str) -> bool:
        hit = self._by_file.get(filename)
        if hit is None:
            hit = self._by_file[filename] = os.path.abspath(filename) in self.files
        return hit

    def code(self, code: Any) -> bool:
        return code in self.codes or self._file(code.co_filename)

    def at(self, filename: str, name: str, lineno: int | None) -> bool:
        """A frame given as text (a ``traceback.FrameSummary``)."""
        return self._file(filename) or (filename, name, lineno) in self._lines


# the frames between a guard and the code that asked for it: the symbolic-shape machinery, the dispatcher,
# FakeTensorMode, torch.library and the wrappers that only pass a call on
_MACHINERY = tuple(os.path.join(TORCH_DIR, *p) for p in (
    ("fx", "experimental", ""), ("__init__.py",), ("_ops.py",), ("utils", ""), ("_subclasses", "fake_tensor.py"),
    ("_subclasses", "meta_utils.py"), ("_prims_common", "wrappers.py"), ("_library", ""), ("_logging", ""),
    ("_dynamo", ""), ("_guards.py",), ("_export", ""), ("export", ""), ("_functorch", ""), ("_higher_order_ops", ""),
    ("_compile.py",), ("_tensor.py",), ("overrides.py",), ("_decomp", "__init__.py"), ("_dispatch", ""),
    ("_prims", "context.py"), ("_jit_internal.py",)))
_STDLIB = os.path.dirname(os.__file__) + os.sep
_FAKE_FILE = os.path.join(TORCH_DIR, "_subclasses", "fake_tensor.py")
# ``answers`` wraps torch's guard functions for a trace, ``continued`` its ShapeEnv's questions: their frames pass
# a guard on, like torch's machinery
_ANSWERS = tuple(os.path.join(os.path.dirname(os.path.abspath(__file__)), f) for f in ("answers.py", "continued.py"))


# typing_extensions' ``deprecated`` wraps torch's ``guard_size_oblivious`` (torch 2.13): a frame that passes the
# call on
_PASS_ON = tuple(os.path.abspath(f) for f in (getattr(sys.modules.get("typing_extensions"), "__file__", None),) if f)


def _machinery(filename: str) -> bool:
    return filename.startswith(_MACHINERY) or filename.startswith(_STDLIB) or filename.startswith(SHAPECHECK_DIR) \
        or filename.startswith("<") or filename in _PASS_ON


# a SymNode method is called from Python through torch's own wrappers (SymBool.__bool__, symbolic_shapes' functions)
_SYM_NODE = os.path.join(TORCH_DIR, "fx", "experimental", "sym_node.py")


def from_cpp(frames: list[tuple[Any, int, Any]]) -> bool:
    """Whether a guard was asked by C++ code that a Python line called: the outermost of the symbolic-shape frames
    is a SymNode method, which Python code reaches only through torch's wrappers (``SymBool.__bool__``,
    ``guard_or_false``), and C++ (a ``torch._C`` function, a tensor method) calls directly."""
    last = None
    for code, _, _ in frames:
        if not _machinery(code.co_filename):
            break
        last = code
    return last is not None and last.co_filename == _SYM_NODE


def origin(frames: list[tuple[Any, int, Any]], own: Own) -> tuple[str, SourceLoc | None, SourceLoc | None]:
    """Who asked for a guard, from its stack (innermost first: (code, line, the op a FakeTensorMode dispatch
    frame handles, else None)): ("", the kernel's line, None) when the kernel's own code asked; else (words
    naming torch's helper or the sub-op whose C++ kernel asked, the kernel line that reached it, the helper's
    own line). Words are empty only for the kernel's own line."""
    site, subop, kernel = None, None, None
    for code, line, func in frames:
        if own.code(code):
            kernel = _loc(code, line)
            break
        if code.co_filename.startswith(SHAPECHECK_DIR) and code.co_filename not in _ANSWERS:
            break  # shapecheck's call of the op (a C++ kernel, or one whose Python code is not on the stack): the
            # frames beyond are shapecheck's caller's (click's ``invoke`` was named as the guard's site)
        if site is None and subop is None and code.co_filename == _FAKE_FILE and code.co_name == "_dispatch_impl":
            subop = func
        if site is None and not _machinery(code.co_filename):
            site = _loc(code, line)
    if site is None and subop is None and (kernel is not None or not own):
        return "", kernel, None  # the kernel's own code asked (a C++ kernel's: no Python frame between)
    if site is not None and subop is None and ((own.files and _users(site.file)) or _same_library(site.file, own)):
        # a user's kernel file calls a helper of the user's own in another module (not torch's, not an installed
        # library's but the kernel's own: amd-quark's fake and its quantization/utils.py): the kernel's code asked,
        # at the helper's line, as where the helper is in the kernel's file
        return "", site, None
    if subop is not None and site is None:
        return f"the C++ kernel of {subop} (a sub-op the kernel calls)", kernel, None
    if site is None:
        return "torch's dispatch machinery", kernel, None
    where = f"{site.function} at {_short(site.file)}:{site.line}"
    if subop is not None:
        where = f"the C++ kernel of {subop}, called from {where}"
    if subop is None:  # a helper of the kernel's file (a --meta-source copy of torch's) is not torch's own
        where = f"torch's helper {where}" if site.file.startswith(TORCH_DIR + os.sep) else f"the helper {where}"
    return where, kernel, site


_INSTALLED = tuple(os.path.realpath(p) + os.sep for p in {sysconfig.get_paths()["purelib"],
                                                            sysconfig.get_paths()["platlib"]})


@functools.lru_cache(maxsize=4096)
def _real(file: str) -> str:
    """``os.path.realpath``, once per file name of a run (a kernel's frames ask it of the same few files thousands
    of times per op: 2% of an audit's CPU)."""
    return os.path.realpath(file)


def _users(file: str) -> bool:
    """A file of the user's project: neither torch's nor an installed package's (site-packages)."""
    path = _real(file)
    return not path.startswith(TORCH_DIR + os.sep) and not path.startswith(_INSTALLED)


def _same_library(file: str, own: Own) -> bool:
    return same_library(file, {*own.files, *(c.co_filename for c in own.codes)})


def same_library(file: str, files: Any) -> bool:
    """Whether ``file`` is in the installed package (site-packages' top-level folder) of one of ``files`` (a
    kernel's): a helper of the library's own, not torch's."""
    path = _real(file)
    top = next((d for d in _INSTALLED if path.startswith(d)), None)
    if top is None or path.startswith(TORCH_DIR + os.sep):
        return False
    package = path[len(top):].split(os.sep, 1)[0]
    return any(_real(f).startswith(top + package + os.sep) for f in files)


#: torch's broadcasting helpers whose names do not say so (fake_impls' ``infer_size``, the fast path of the
#: elementwise ops; ``_maybe_broadcast``'s ``should_expand``); the others' names hold "broadcast"
_BROADCASTERS = {(os.path.join(TORCH_DIR, "_subclasses", "fake_impls.py"), "infer_size"),
                 (os.path.join(TORCH_DIR, "_refs", "__init__.py"), "should_expand")}


def broadcasting(frames: list[Any]) -> str | None:
    """``function at file:line`` of torch's broadcasting helper that made an assert (``_broadcast_shapes``,
    ``broadcast_shapes``, fake_impls' ``infer_size``), read from the assert's stack (``traceback.FrameSummary``s,
    outermost first): the innermost frame past the symbolic-shape machinery, when it is torch's own and
    broadcasts. Under unbacked sizes such a helper takes ``guard_or_false(size == 1)`` as False and asserts
    ``a == b``: the op demands only ``a == b or a == 1 or b == 1``. None for any other assert (reshape's
    ``infer_size`` in ``_prims_common``, the kernel's own ``torch._check``)."""
    for fr in reversed(frames):
        path = os.path.abspath(fr.filename)
        if _machinery(path):
            continue
        if not path.startswith(TORCH_DIR + os.sep):
            return None
        name = fr.name
        if ("broadcast" in name and "inplace" not in name) or (path, name) in _BROADCASTERS:
            return f"{name} at {_short(path)}:{fr.lineno}"
        return None
    return None


def asserted_by(frames: list[Any]) -> str:
    """Who made an assert, from its stack (``traceback.FrameSummary``s, outermost first), in words; "" for the
    kernel's own ``torch._check``. torch's helper that called ``torch._check``, or a check torch made without it
    (an index out of range, a C++ kernel's ``TORCH_SYM_CHECK``) at the kernel's line, is named as such."""
    checked = False
    for fr in reversed(frames):
        path = os.path.abspath(fr.filename)
        if _machinery(path):
            checked = checked or (path == os.path.join(TORCH_DIR, "__init__.py") and fr.name.startswith("_check"))
            continue
        if path.startswith(TORCH_DIR + os.sep):
            return f"torch's {fr.name} asserts it ({_short(path)}:{fr.lineno})"
        return "" if checked else "torch asserts it inside an op this line calls (no torch._check of the kernel's)"
    return ""


def _loc(code: Any, line: int | None) -> SourceLoc:
    import linecache

    return SourceLoc(code.co_filename, line or 0, code.co_name, linecache.getline(code.co_filename, line or 0).strip())


def _short(file: str) -> str:
    path = os.path.abspath(file)
    return os.path.relpath(path, os.path.dirname(TORCH_DIR)) if path.startswith(TORCH_DIR + os.sep) else file


def stack_frames(frame: Any) -> list[tuple[Any, int, Any]]:
    """A live stack, innermost first, as ``origin`` reads it."""
    out = []
    while frame is not None:
        func = frame.f_locals.get("func") if (frame.f_code.co_filename == _FAKE_FILE
                                               and frame.f_code.co_name == "_dispatch_impl") else None
        out.append((frame.f_code, frame.f_lineno, func))
        frame = frame.f_back
    return out


def traceback_frames(exc: BaseException) -> list[tuple[Any, int, Any]]:
    """An exception's traceback, innermost first, as ``origin`` reads it."""
    out, tb = [], exc.__traceback__
    kept = getattr(exc, "_shapecheck_dispatched", {})
    while tb is not None:
        frame = tb.tb_frame
        func = frame.f_locals.get("func", kept.get(id(frame))) if (frame.f_code.co_filename == _FAKE_FILE
                                                                   and frame.f_code.co_name == "_dispatch_impl") else None
        out.append((frame.f_code, tb.tb_lineno, func))
        tb = tb.tb_next
    return out[::-1]


def keep_dispatched(exc: BaseException) -> None:
    """The op each of FakeTensor's dispatch frames in ``exc``'s traceback ran, kept on the exception for
    ``traceback_frames``: the frames' locals are about to be freed (``dispatch_state.dispatch_state_kept``)."""
    kept = dict(getattr(exc, "_shapecheck_dispatched", {}))
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename == _FAKE_FILE and frame.f_code.co_name == "_dispatch_impl":
            func = frame.f_locals.get("func")  # named in words only (``origin``): kept as text, which pickles
            kept.setdefault(id(frame), None if func is None else str(func))
        tb = tb.tb_next
    try:
        exc._shapecheck_dispatched = kept  # type: ignore[attr-defined]
    except AttributeError:  # an exception type without attributes: its guard is then the kernel's own
        pass
