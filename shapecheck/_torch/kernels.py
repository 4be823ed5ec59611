"""Which kernel torch runs for an op on FakeTensors, decided in one place: ``resolve_kernel(op, mode)``.

A call on FakeTensors (CPU fake device) goes through three layers; the first that produces a result wins
(torch 2.13; the line numbers are those of torch 2.13.0):

A. the AutogradCPU key, above FakeTensorMode. Plain: a C++ CompositeImplicitAutograd kernel runs here (the op
   then never reaches FakeTensorMode, only its sub-ops do). Under the Python dispatcher,
   ``torch._ops.resolve_key(op, AutogradCPU)`` and ``op.py_kernels`` decide, so a Python Autograd or
   CompositeImplicit kernel runs here (upsample_nearest2d's decomposition, ``_decomp/decompositions.py:3688``).
B. ``FakeTensorMode._dispatch_impl`` (``_subclasses/fake_tensor.py:2579``): its direct handlers, the fast
   binary rules (symbolic sizes), the decomposition table (ops not in the meta table), ``func.decompose()``,
   prims' meta, a custom op's fake (torch.library), FakeTensor's own rules (``fake_impls``: masked_select,
   nonzero, repeat_interleave.Tensor, ...), and no kernel at all.
C. the Meta key: ``py_kernels[resolve_key(op, Meta)]`` under the Python dispatcher, else the C++ Meta entry
   (a Python meta registration registered through torch.library, a C++ structured meta or a composite kernel).

Two modes are told apart (``Mode``): EXPORT, as torch.export, dynamo and torch.compile run an op (the Python
dispatcher on, autograd active, symbolic sizes), and FAKE, plain FakeTensorMode (meta-device model
initialisation, FakeTensorProp, shape propagation). For a few ops they reach different kernels
(``kernels_for``). Nothing here runs the op: the registries are read.

A candidate kernel (``--meta``, ``--meta-source``) is installed in a slot for the duration of a call
(``installed``), so that the OpOverload is called and torch's own dispatch reaches it.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import inspect
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import torch
import torch._decomp
import torch._meta_registrations  # noqa: F401 - activates the Python meta registrations
import torch._ops
import torch._subclasses.fake_impls as fake_impls
import torch._subclasses.fake_tensor as fake_tensor
from torch._C import DispatchKey

from ..findings import SourceLoc
from .core import TORCH_DIR, cpp_meta_words, meta_line
from .core import relative as relative
from .dispatch_state import dispatch_state_kept
from .library_impls import library_meta_file as library_meta_file
from .library_impls import library_meta_words as library_meta_words
from .library_impls import meta_function
from .library_impls import python_at_meta as python_at_meta
from .library_impls import python_registered as python_registered
from .schema import arity_checked

SITE_DIR = os.path.dirname(TORCH_DIR)


class Mode(enum.Enum):
    """How an op is run on FakeTensors."""

    EXPORT = "export"  # torch.export, dynamo, torch.compile: the Python dispatcher on, autograd active
    FAKE = "fake"  # plain FakeTensorMode: meta-device init, FakeTensorProp, shape propagation

    @property
    def words(self) -> str:
        return {"export": "torch.export and torch.compile (FakeTensorMode under the Python dispatcher)",
                "fake": "plain FakeTensorMode without the Python dispatcher (meta-device model init, "
                        "FakeTensorProp, shape propagation)"}[self.value]


# kinds of kernel, by where torch finds it
ABOVE_PY = "python-above-fake"  # a Python Autograd/CompositeImplicit kernel above FakeTensorMode
ABOVE_CIA_CPP = "cia-cpp-above-fake"  # a C++ CompositeImplicitAutograd kernel above FakeTensorMode
HANDLER = "fake-handler"  # FakeTensorMode's direct handlers (size, stride, ...)
FAST = "fake-fast-rule"  # fake_impls' fast binary rules (symbolic sizes only)
DECOMP = "decomposition"  # the decomposition table, run by FakeTensorMode
CIA_DECOMPOSE = "cia-decompose"  # func.decompose() inside FakeTensorMode
PRIM = "prim-meta"  # a prim's prim_meta_impl
CUSTOM_FAKE = "custom-fake"  # a torch.library fake (register_fake, impl_abstract, custom_op)
RULE = "fake-rule"  # FakeTensor's own rules (fake_impls)
NO_FAKE = "no-fake-kernel"  # FakeTensorMode has no kernel (UnsupportedOperator at symbolic sizes)
PY_META = "python-meta"  # a Python function at the Meta key (meta registration or decomposition)
CPP_META = "cpp-meta"  # a C++ Meta kernel (structured meta)
CPP_COMPOSITE = "cpp-composite-at-meta"  # a C++ composite kernel serving the Meta key

#: kinds whose kernel is a Python function a candidate can stand in for, in that mode
_PYTHON_SLOTS = {ABOVE_PY, DECOMP, CIA_DECOMPOSE, PRIM, CUSTOM_FAKE, RULE, PY_META}


@dataclass(frozen=True)
class Resolved:
    """The kernel torch runs for an op in one mode."""

    kind: str
    fn: Any  # the registered Python function, or None (C++)
    layer: str  # "above" (A), "fake" (B), "meta" (C)
    label: str  # what ran, in words a user understands
    definition: SourceLoc | None = None  # where the Python function is defined
    key: Any = field(default=None, repr=False)  # the dispatch key of a py_kernels slot
    file: str | None = None  # a Python kernel torch keeps no handle on: the file that registered it

    @property
    def codes(self) -> frozenset[Any]:
        """The code objects that are the kernel's own: its function's body and the code nested in it."""
        return own_codes(self.fn)

    def same(self, other: Resolved) -> bool:
        """The same function at the same layer (a C++ kernel: the same kind at the same layer)."""
        if self.layer != other.layer:
            return False
        if self.fn is None or other.fn is None:
            return self.fn is None and other.fn is None and self.kind == other.kind
        return code_of(self.fn) is code_of(other.fn)


# ---------------------------------------------------------------------------------------------------------
# Functions, their code and where they are


def code_of(fn: Any) -> Any:
    """The code object of the innermost function of ``fn``'s ``__wrapped__`` chain whose body is the kernel
    (torch's decorator wrappers, ``out_wrapper``/``elementwise_type_promotion_wrapper``, share one code object
    among every function they wrap: they are skipped)."""
    chain, seen = [], set()
    while fn is not None and id(fn) not in seen:
        seen.add(id(fn))
        c = getattr(fn, "__code__", None)
        if c is not None:
            chain.append(c)
        fn = _unwrapped(fn)
    body = [c for c in chain if not _is_wrapper(c)]
    return body[-1] if body else (chain[-1] if chain else None)


def _unwrapped(fn: Any) -> Any:
    """The function ``fn`` wraps: a partial's (torch's prims register ``partial(_prim_meta, ...)``), a decorator's."""
    if isinstance(fn, functools.partial):
        return fn.func
    return getattr(fn, "__wrapped__", None)


def _is_wrapper(code: Any) -> bool:
    return code.co_filename.endswith(os.path.join("_prims_common", "wrappers.py")) \
        or (code.co_name in ("inner", "wrapper", "_wrapper") and code.co_filename.startswith(TORCH_DIR + os.sep))


def innermost(fn: Any) -> Any:
    """The function whose code is ``code_of(fn)``."""
    target, seen = code_of(fn), set()
    if target is None:
        return None
    while fn is not None and id(fn) not in seen:
        seen.add(id(fn))
        if getattr(fn, "__code__", None) is target:
            return fn
        fn = _unwrapped(fn)
    return None


def own_codes(fn: Any) -> frozenset[Any]:
    """``code_of(fn)`` and every code object nested in it (inner functions, lambdas, comprehensions)."""
    top = code_of(fn)
    if top is None:
        return frozenset()
    out, todo = set(), [top]
    while todo:
        c = todo.pop()
        if c in out:
            continue
        out.add(c)
        todo += [k for k in c.co_consts if inspect.iscode(k)]
    return frozenset(out)


def definition(fn: Any) -> SourceLoc | None:
    """Where a kernel function is defined: its ``def`` line (decorators skipped)."""
    f = innermost(fn)
    if f is None:
        return None
    try:
        lines, start = inspect.getsourcelines(f)
        offset = next((i for i, line in enumerate(lines) if line.lstrip().startswith(("def ", "async def "))), 0)
        file = inspect.getsourcefile(f) or f.__code__.co_filename
        line = start + offset
    except (OSError, TypeError):
        file, line = f.__code__.co_filename, f.__code__.co_firstlineno
    return SourceLoc(file, line, f.__name__, f"def {f.__name__}(...)")


def _where(fn: Any) -> tuple[str, SourceLoc | None]:
    """(``name at file:line``, the definition) of a registered function."""
    if isinstance(fn, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return f"the op {fn}", None
    loc = definition(fn)
    if loc is None:
        return getattr(fn, "__name__", repr(fn)), None
    return f"{loc.function} at {relative(loc.file)}:{loc.line}", loc


# -- Resolution -------------------------------------------------------------------------------------------


class _CppOnly:
    """``resolve_key``'s view of an op with its C++ registrations only (what the C++ dispatcher computes)."""

    def __init__(self, op: Any) -> None:
        self.name = op.name()

    def has_kernel_for_dispatch_key(self, k: Any) -> bool:
        return torch._C._dispatch_has_kernel_for_dispatch_key(self.name, k)

    def has_kernel_for_any_dispatch_key(self, ks: Any) -> bool:
        return torch._C._dispatch_has_kernel_for_any_dispatch_key(self.name, ks)


def _key(op: Any, key: Any) -> Any:
    try:
        return torch._ops.resolve_key(op, key)
    except (NotImplementedError, RuntimeError):
        return None


def custom_fake(op: Any) -> Any:
    """A custom op's torch.library fake kernel (as FakeTensorMode calls it), or None."""
    try:
        from torch._library.simple_registry import singleton
    except ImportError:  # pragma: no cover - a torch without torch.library's registry
        return None
    kernel = getattr(getattr(singleton.find(op.name()), "fake_impl", None), "kernel", None)
    return None if kernel is None else getattr(kernel, "func", kernel)


def _made(kind: str, fn: Any, layer: str, what: str, key: Any = None) -> Resolved:
    """``what`` names the function: ``decomposition upsample_nearest2d at torch/_decomp/...:3688``."""
    where, loc = _where(fn)
    return Resolved(kind, fn, layer, f"{what}{where}" if what.endswith(".") else f"{what} {where}", loc, key)


def resolve_kernel(op: Any, mode: Mode) -> Resolved:
    """The kernel FakeTensorMode runs for ``op`` on FakeTensors with symbolic sizes in ``mode``."""
    found = _above(op, mode)
    if found is not None:
        return found
    found = _in_fake_mode(op)
    if found is not None:
        return found
    return _at_meta(op, mode)


def _above(op: Any, mode: Mode) -> Resolved | None:
    """Layer A: the AutogradCPU key of a FakeTensor."""
    if mode is Mode.EXPORT:
        k = _key(op, DispatchKey.AutogradCPU)
        fn = op.py_kernels.get(k) if k is not None else None
        if fn is not None:
            what = "decomposition" if k != DispatchKey.Autograd else "decomposition (Python Autograd kernel)"
            return _made(ABOVE_PY, fn, "above", what, k)
    else:
        k = _key(_CppOnly(op), DispatchKey.AutogradCPU)
    if k == DispatchKey.CompositeImplicitAutograd:
        return _cia_resolved(ABOVE_CIA_CPP, "above", op)
    return None


def _in_fake_mode(op: Any) -> Resolved | None:
    """Layer B: FakeTensorMode's own dispatch (symbolic sizes)."""
    if op in fake_tensor._DISPATCH_META_HANDLERS or op in fake_tensor._DISPATCH_HANDLE_DIRECTLY:
        return Resolved(HANDLER, fake_tensor._DISPATCH_META_HANDLERS.get(op), "fake", "FakeTensorMode's own handler")
    fast = fake_impls.get_fast_op_impls().get(op)
    if fast is not None:
        # named by its own function: the binary ops' closure (fast_binary_impl), detach's, and the rules a later
        # torch adds (2.14's fast_alias for aten.alias)
        return _made(FAST, fast, "fake", "FakeTensor fast rule fake_impls.")
    mode_cls = fake_tensor.FakeTensorMode
    cpp_symint = torch.Tag.view_copy in op.tags or op in mode_cls._cpp_meta_supports_symint
    if op not in torch._decomp.meta_table and not cpp_symint and op not in mode_cls._unbacked_special_fake_handling_ops:
        if op in torch._decomp.decomposition_table:
            return _made(DECOMP, torch._decomp.decomposition_table[op], "fake", "decomposition")
        if DispatchKey.CompositeImplicitAutograd in op.py_kernels:
            return _made(CIA_DECOMPOSE, op.py_kernels[DispatchKey.CompositeImplicitAutograd], "fake",
                         "CompositeImplicit decomposition", DispatchKey.CompositeImplicitAutograd)
        if torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd"):
            return _cia_resolved(CIA_DECOMPOSE, "fake", op)
    if "prims::" in op._schema.name and hasattr(op, "prim_meta_impl"):
        return _made(PRIM, op.prim_meta_impl, "fake", "prim meta")
    cf = custom_fake(op)
    if cf is not None:
        return _made(CUSTOM_FAKE, cf, "fake", "fake kernel")
    for check, impl in fake_impls.op_implementations_checks:
        if check(op):
            rule = fake_impls.op_implementations_dict[op] if impl is fake_impls.dispatch_to_op_implementations_dict \
                else impl
            return _made(RULE, rule, "fake", "FakeTensor rule fake_impls.")
    if not fake_impls.has_meta(op):
        return Resolved(NO_FAKE, None, "fake", "no fake kernel (FakeTensorMode cannot run the op at symbolic sizes)")
    return None


def _at_meta(op: Any, mode: Mode) -> Resolved:
    """Layer C: the Meta key."""
    if mode is Mode.EXPORT:
        k = _key(op, DispatchKey.Meta)
        fn = op.py_kernels.get(k) if k is not None else None
        if fn is not None:
            return _made(PY_META, fn, "meta", _meta_words(op, fn), k)
    line = meta_line(op)
    if python_registered(line):
        # torch._meta_registrations.activate_meta registers the same function in py_kernels[Meta] and, through
        # a torch.library.Library, as the C++ Meta kernel
        fn = op.py_kernels.get(DispatchKey.Meta)
        if fn is not None:
            return _made(PY_META, fn, "meta", _meta_words(op, fn), DispatchKey.Meta)
        library = library_meta_file(op)
        fn = meta_function(op)  # a library's function whose registration shapecheck saw (--import)
        if fn is not None:
            return replace(_made(PY_META, fn, "meta", library_meta_words(None, line) + ":"), file=library)
        return Resolved(PY_META, None, "meta", library_meta_words(library, line), file=library)
    from .library_impls import TRIVIAL_FAKE, trivial_fake

    words = TRIVIAL_FAKE if "[backend fallback]" in line and trivial_fake(op) else cpp_meta_words(line)
    return Resolved(CPP_META if "[kernel]" in line else CPP_COMPOSITE, None, "meta", words)


def _cia_resolved(kind: str, layer: str, op: Any) -> Resolved:
    """A CompositeImplicitAutograd kernel torch keeps no Python handle on: a Python function registered through a
    torch.library.Library (torchao's quantization ops), named so and with that Library's file (where findings are
    located), else C++."""
    line = meta_line(op)
    if python_registered(line) and "[math kernel]" in line:
        file, fn = library_meta_file(op), meta_function(op)
        words = "CompositeImplicit decomposition, a Python function registered through torch.library"
        if fn is not None:  # a library's function whose registration shapecheck saw (--import)
            return replace(_made(kind, fn, layer, f"{words}, which calls other ops:"), file=file)
        return Resolved(kind, None, layer, words + (f" (its Library in {relative(file)})" if file else "") +
                        ", which calls other ops", file=file)
    return Resolved(kind, None, layer, "CompositeImplicit decomposition (C++), which calls other ops")


def _meta_words(op: Any, fn: Any) -> str:
    return "Python meta registration" if torch._decomp.meta_table.get(op) is fn else "decomposition (as the Meta kernel)"


def kernels_for(op: Any) -> list[tuple[tuple[Mode, ...], Resolved]]:
    """The op's kernels with the modes that run each: one entry when both modes run the same function at the
    same layer, else export's first."""
    export, fake = resolve_kernel(op, Mode.EXPORT), resolve_kernel(op, Mode.FAKE)
    if export.same(fake):
        return [((Mode.EXPORT, Mode.FAKE), export)]
    return [((Mode.EXPORT,), export), ((Mode.FAKE,), fake)]


def has_fake_kernel(op: Any) -> bool:
    """FakeTensorMode can run the op at symbolic sizes in some mode."""
    return any(r.kind != NO_FAKE for _, r in kernels_for(op))


# ---------------------------------------------------------------------------------------------------------
# Running an op in a mode, with a candidate kernel in torch's slot


def dispatcher(mode: Mode) -> Any:
    """The Python dispatcher as ``mode`` has it (on: EXPORT), torch's dispatch state kept (``dispatch_state_kept``)."""
    from torch._dispatch.python import enable_python_dispatcher, no_python_dispatcher

    return _kept(enable_python_dispatcher if mode is Mode.EXPORT else no_python_dispatcher)


@contextlib.contextmanager
def _kept(guard: Any) -> Iterator[None]:
    with dispatch_state_kept(), guard():  # torch's guard acts when it is made: made inside, after the snapshot
        yield


class CannotInstall(Exception):
    """The slot torch runs cannot hold a Python function in this process (the message says why)."""


def can_install(resolved: Resolved, mode: Mode) -> str | None:
    """None when a candidate can stand in for ``resolved`` in ``mode``, else why not, in words."""
    if resolved.kind in _PYTHON_SLOTS or resolved.kind in (CPP_META, CPP_COMPOSITE, NO_FAKE):
        return None
    if resolved.kind == ABOVE_CIA_CPP and mode is Mode.EXPORT:
        return None
    return f"torch runs {resolved.label} for this op in {mode.words}, which a Python function cannot replace"


def calling(mode: Mode, resolved: Resolved, candidate: bool = False) -> Any:
    """The context of one call of the op in ``mode``: the Python dispatcher on or off. A candidate at the Meta
    key in plain FakeTensorMode is reached through the Python dispatcher below autograd: torch's C++ Meta slot
    holds the same function as py_kernels[Meta] there (``torch._meta_registrations.activate_meta``), and a C++
    slot cannot be refilled in this process."""
    if candidate and mode is Mode.FAKE and resolved.layer == "meta":
        return _below_autograd_with_python_dispatcher()
    return dispatcher(mode)


@contextlib.contextmanager
def installed(op: Any, mode: Mode, resolved: Resolved, candidate: Any) -> Iterator[None]:
    """``candidate`` (a function with the op's calling convention) in the slot of ``resolved`` for the
    duration. Raises CannotInstall. While the candidate runs, torch's own kernel is back in the slot: a
    candidate that calls its own op (a meta kernel of new_empty that calls ``new_empty``) reaches torch's."""
    why = can_install(resolved, mode)
    if why is not None:
        raise CannotInstall(why)
    slots = _Slots()
    kind = resolved.kind
    if kind == ABOVE_PY:
        slots.py_kernel(op, resolved.key)
    elif kind == ABOVE_CIA_CPP or kind == CIA_DECOMPOSE:
        slots.py_kernel(op, DispatchKey.CompositeImplicitAutograd)
    elif kind == DECOMP:
        slots.table(torch._decomp.decomposition_table, op)
        slots.static_decomposition(op)
    elif kind == PRIM:
        slots.attribute(op, "prim_meta_impl")
    elif kind == CUSTOM_FAKE or kind == NO_FAKE:
        slots.custom_fake(op)
    elif kind == RULE:
        slots.table(fake_impls.op_implementations_dict, op, _as_rule)
    else:  # at the Meta key
        slots.py_kernel(op, DispatchKey.Meta)
    with slots.holding(arity_checked(candidate, op)):
        yield


def registered_as(op: Any, kind: str, fn: Any) -> contextlib.AbstractContextManager:
    """What registering ``fn`` for ``op`` does: ``register_meta`` puts it in the meta table and at the Meta key;
    ``register_decomposition`` in torch._decomp's decomposition table and at the Meta key; ``register_fake``/``impl_abstract``
    make it the op's torch.library fake. Re-resolving under it tells
    whether torch then reaches ``fn``. While ``fn`` runs it stays registered, as with the file installed: its
    own calls of the op reach it again."""
    slots = _Slots()
    # "register_decomposition, py_impl(CompositeImplicitAutograd)"; "py_impl(...), ...": py_impl alone registers it
    kind, *py_impls = ("", *kind.split(", ")) if kind.startswith("py_impl(") else kind.split(", ")
    for spec in py_impls:  # the Python kernels the function's py_impl decorators make it
        key = getattr(DispatchKey, spec.removeprefix("py_impl(").removesuffix(")"), None)
        if key is not None:
            slots.py_kernel(op, key)
    if kind == "register_decomposition":
        slots.table(torch._decomp.decomposition_table, op)
        slots.static_decomposition(op)
        # torch's meta registrations take a decomposition as the op's meta kernel only where no register_meta
        # of the op exists (activate_meta: the "meta" table first): flash_attention_for_cpu's stays the meta's
        if op in torch._decomp.global_decomposition_table.get("meta", {}):
            return slots.holding(arity_checked(fn, op), reentrant=True)
        # activate_meta makes it the Meta key's Python kernel; the meta table (register_meta's) stays without it,
        # so FakeTensorMode still runs it as a decomposition, with its sub-ops fake (im2col's)
        slots.py_kernel(op, DispatchKey.Meta)
    elif kind == "register_meta":
        slots.table(torch._decomp.meta_table, op)
        slots.py_kernel(op, DispatchKey.Meta)
    elif kind == "register_op_impl":  # FakeTensor's own rule, by op (a rule of a predicate is not named by op)
        slots.table(fake_impls.op_implementations_dict, op, _as_registered_rule)
    elif kind:
        slots.custom_fake(op)
    return slots.holding(arity_checked(fn, op), reentrant=True)


@contextlib.contextmanager
def _below_autograd_with_python_dispatcher() -> Iterator[None]:
    from torch._dispatch.python import enable_python_dispatcher

    with dispatch_state_kept(), torch._C._AutoDispatchBelowAutograd(), enable_python_dispatcher():
        yield


def _as_rule(candidate: Any) -> Any:
    def rule(fake_mode: Any, func: Any, *args: Any, **kwargs: Any) -> Any:
        with fake_mode:
            return candidate(*args, **kwargs)

    return rule


def _as_registered_rule(candidate: Any) -> Any:
    """``_as_rule`` for a file's ``register_op_impl``: named as the candidate, so that resolving the op under the
    registration sees that torch reaches it (``shapecheck_candidate``)."""
    rule = _as_rule(candidate)
    rule.shapecheck_candidate = getattr(candidate, "shapecheck_candidate", None)
    return rule


_MISSING = object()


class _Slots:
    """Places in torch's registries that hold a kernel, filled with a candidate (``put``) and given back to what
    torch had (``back``), as often as needed."""

    def __init__(self) -> None:
        self._places: list[tuple[Any, Any]] = []  # (put(fn), back())

    def py_kernel(self, op: Any, key: Any) -> None:
        old = op.py_kernels.get(key, _MISSING)

        def put(fn: Any) -> None:
            op.py_kernels[key] = fn
            op._dispatch_cache.clear()

        def back() -> None:
            if old is _MISSING:
                op.py_kernels.pop(key, None)
            else:
                op.py_kernels[key] = old
            op._dispatch_cache.clear()

        self._places.append((put, back))

    def table(self, table: dict, op: Any, adapt: Any = None) -> None:
        old = table.get(op, _MISSING)

        def put(fn: Any) -> None:
            table[op] = adapt(fn) if adapt is not None else fn

        def back() -> None:
            if old is _MISSING:
                table.pop(op, None)
            else:
                table[op] = old

        self._places.append((put, back))

    def attribute(self, obj: Any, name: str) -> None:
        old = getattr(obj, name, _MISSING)

        def back() -> None:
            if old is _MISSING:
                with contextlib.suppress(AttributeError):
                    delattr(obj, name)
            else:
                setattr(obj, name, old)

        self._places.append((lambda fn: setattr(obj, name, fn), back))

    def static_decomposition(self, op: Any) -> None:
        """At static sizes FakeTensorMode takes a decomposition only from ``torch._decomp.decompositions``
        (``fake_tensor.torch_decomp_decompositions``): a candidate standing in for one is taken at every size."""
        original = fake_tensor.torch_decomp_decompositions

        def taken(func: Any) -> bool:
            return True if func is op else original(func)

        def put(fn: Any) -> None:
            fake_tensor.torch_decomp_decompositions = taken

        def back() -> None:
            fake_tensor.torch_decomp_decompositions = original

        self._places.append((put, back))

    def custom_fake(self, op: Any) -> None:
        from torch._library.simple_registry import singleton
        from torch._library.utils import Kernel as LibKernel

        holder = singleton.find(op.name()).fake_impl
        entry: list[Any] = []

        def put(fn: Any) -> None:
            entry.append(LibKernel(fn, "shapecheck: the candidate kernel"))
            holder.kernels.append(entry[-1])

        def back() -> None:
            while entry:
                item = entry.pop()
                if item in holder.kernels:
                    holder.kernels.remove(item)

        self._places.append((put, back))

    @contextlib.contextmanager
    def holding(self, candidate: Any, reentrant: bool = False) -> Iterator[None]:
        """``candidate`` in every place for the duration; torch's kernels back while it runs, unless
        ``reentrant`` (a file's registration: with the file installed, the function's own calls of its op reach
        it again, as _refs' roll calls roll on the flattened tensor)."""
        def guarded(*args: Any, **kwargs: Any) -> Any:
            if reentrant:
                return candidate(*args, **kwargs)
            self._back()
            try:
                return candidate(*args, **kwargs)
            finally:
                self._put(guarded)

        guarded.__wrapped__ = candidate  # resolve_kernel names the candidate (code_of follows __wrapped__)
        guarded.shapecheck_candidate = getattr(candidate, "shapecheck_candidate", candidate)
        self._put(guarded)
        try:
            yield
        finally:
            self._back()

    def _put(self, fn: Any) -> None:
        for put, _ in self._places:
            put(fn)

    def _back(self) -> None:
        for _, back in reversed(self._places):
            back()
