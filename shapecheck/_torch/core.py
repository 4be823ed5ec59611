"""The only door to torch internals: ShapeEnv, FakeTensorMode, unbacked sizes, guard and assert records,
torch's sympy classes, op lookup and the meta-registration namespace.

Written against torch 2.13 (checked on 2.13.0); the APIs used here have been stable since 2.4 except where
a comment says otherwise. Nothing outside this module and its parts (``_torch.static``: what torch decides
on its own; ``_torch.audit``: what the audit needs; ``_torch.schema``: op schemas and fake-kernel calls)
imports from ``torch._*`` or ``torch.fx.experimental``.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
import traceback
from collections.abc import Iterator
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from ..errors import NotDispatchedOpError, UnknownOpError, UnsupportedTorchError
from ..findings import SourceLoc
from ..logic import expr as E
from ..logic import simplify as S
from .attribution import Own as Own
from .attribution import asserted_by as asserted_by
from .attribution import broadcasting as broadcasting
from .attribution import origin as origin
from .attribution import stack_frames as stack_frames
from .attribution import traceback_frames as traceback_frames
from .dtypes import DTYPES as DTYPES  # every dtype of this torch by name
from .quiet import export_backends
from .quiet import numpy_absence_known as numpy_absence_known
from .quiet import quiet_torch_logging as quiet_torch_logging
from .symbols import constant_of as constant_of
from .symbols import eval_sym, unbacked_size
from .symbols import sym_value as sym_value
from .symbols import symbol_of as symbol_of

try:
    from torch._dispatch.python import enable_python_dispatcher
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, ShapeEnv, constrain_range
    from torch.utils._sympy.numbers import int_oo
except ImportError as err:  # pragma: no cover - depends on the torch release
    raise UnsupportedTorchError(f"this torch ({torch.__version__}) lacks {err.name}: shapecheck needs torch >= 2.12") from err

import sympy  # noqa: E402

TORCH_VERSION = str(torch.__version__)  # a plain str: a TorchVersion in a report makes its unpickling import torch
INT_OO = int_oo  # torch's integer infinity in sympy value ranges
TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
# the frames of a guard_or_false(...) call, from the kernel's call down to the ShapeEnv
_GUARD_MACHINERY = {os.path.join(TORCH_DIR, *p) for p in (("__init__.py",), ("fx", "experimental", "symbolic_shapes.py"),
                                                          ("fx", "experimental", "sym_node.py"),
                                                          ("fx", "experimental", "recording.py"))}
# typing_extensions' ``deprecated`` wraps torch's ``guard_size_oblivious`` (torch 2.13), ``continued`` a trace's questions
_GUARD_MACHINERY |= {os.path.abspath(f) for f in (getattr(sys.modules.get("typing_extensions"), "__file__", None),
                                                  os.path.join(os.path.dirname(__file__), "continued.py")) if f}
# torch's layout logic (is_contiguous_or_false, strides of empty_like, ...) and the prims' argument checks
# (_broadcast_in_dim_meta validates a shape it is given): their guard_or_* answers pick a layout or skip a
# check, never a size
_LAYOUT_HELPERS = (os.path.join(TORCH_DIR, "_prims_common") + os.sep, os.path.join(TORCH_DIR, "_prims") + os.sep)
SHAPECHECK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------------------------------------------------
# Tracing environment


class _FallbackRecorder:
    """Replaces ShapeEnv._log_suppressed_dde (torch 2.13: the one place every guard_or_* fallback passes,
    where torch only logs). Kept when the frames between it and the nearest frame of the kernel's own code are
    all torch's guard machinery: the kernel asked. A fallback that torch's own helpers asked for
    (``_broadcast_shapes``, ``should_expand``, ...) is kept too, flagged as not the kernel's own, at the kernel
    line that called the helper: the trace's outputs hold only where torch's answer does. torch's layout logic
    (contiguity, strides, memory format: ``_prims_common``, ``_prims``) is left out: its answer decides a
    layout, never a size (whether torch.export installs such a guard is the backed run's question,
    ``_torch.backed``)."""

    def __init__(self, own: Own) -> None:
        self.own = own
        self.found: list[tuple[sympy.Basic, bool, SourceLoc | None, bool]] = []
        # the layout logic's answers, kept apart at the kernel line that reached them: an output's strides hold
        # only where they do (verify runs their other side where a contract states a layout, ``other_side``)
        self.layout: list[tuple[sympy.Basic, bool, SourceLoc | None, bool]] = []

    def __call__(self, expr: Any, assumed: bool) -> None:
        self.record(sys._getframe(1), expr, assumed)

    def record(self, frame: Any, expr: Any, assumed: bool) -> None:
        """The answer ``assumed`` torch gave for ``expr``, asked from ``frame``."""
        import linecache

        own, into = True, self.found
        while frame is not None:
            code = frame.f_code
            if self.own.code(code):
                text = linecache.getline(code.co_filename, frame.f_lineno).strip()
                into.append((expr, bool(assumed), SourceLoc(code.co_filename, frame.f_lineno, code.co_name, text),
                             own and into is self.found))
                return
            path = os.path.abspath(code.co_filename)
            if path not in _GUARD_MACHINERY:
                if own and path.startswith(_LAYOUT_HELPERS):
                    into = self.layout  # contiguity, strides, memory format: decides the layout, never a size
                own = False  # torch's own helper asked (broadcasting...): not the kernel's branch, but the
                # trace's sizes hold only where torch's answer does
            frame = frame.f_back
        if into is self.found:
            into.append((expr, bool(assumed), None, False))


class TraceEnv:
    """One ShapeEnv + FakeTensorMode with the Python dispatcher on, as torch.export traces.

    Sizes are unbacked SymInts bounded with ``torch._check``: a kernel that finishes under them holds for
    every size in the bounds, 0 and 1 included (shared/docs/verification-design.md section 1).
    """

    def __init__(self, files: Own | set[str] | frozenset[str] = frozenset(), *, static_answers: bool = False) -> None:
        """``static_answers``: the kernel's own undecided ``statically_known_true``/``_false`` recorded as fallbacks
        (verify checks their other side; the audit compares its formulas with the eager kernel instead, SC043)."""
        self.shape_env = ShapeEnv()
        own = Own.of(files)
        # guard_or_false / guard_or_true called by the kernel itself on an undecidable size expression:
        # unbacked, torch answers with the fallback and goes on; with example values (torch.export) the
        # same call installs a guard. Recorded as (expr, value assumed, kernel SourceLoc).
        recorder = _FallbackRecorder(own)
        self.fallbacks: list[tuple[sympy.Basic, bool, SourceLoc | None, bool]] = recorder.found
        self.layout_fallbacks = recorder.layout  # the layout logic's answers (``_FallbackRecorder``)
        if hasattr(self.shape_env, "_log_suppressed_dde"):  # no own code (C++, unknown): torch's helpers' answers
            self.shape_env._log_suppressed_dde = recorder
        self._recorder = recorder if own and static_answers else None
        self._fallback_recorder = recorder
        self.mode = FakeTensorMode(shape_env=self.shape_env, allow_non_fake_inputs=False)
        # Every trace has a fresh ShapeEnv, so FakeTensor's dispatch cache never hits; building its entries
        # cost about 40% of a trace (torch 2.13). The mode reads the config flag once, when it is built.
        if hasattr(self.mode, "cache_enabled"):
            self.mode.cache_enabled = False
        self._stack = contextlib.ExitStack()
        self._baseline: set[int] = set()
        self._ranges0: dict[Any, tuple[int | None, int | None]] = {}

    def __enter__(self) -> TraceEnv:
        # torch logs each data-dependent guard as an error with a traceback (here the expected signal, reported by
        # shapecheck itself); the backends are as torch.export leaves them while it traces
        for context in (quiet_torch_logging(), numpy_absence_known(), export_backends()):
            self._stack.enter_context(context)
        self._stack.enter_context(self.mode)
        # on, as torch.export traces; a kernel run in plain FakeTensorMode switches it off for its call
        self._stack.enter_context(enable_python_dispatcher())
        from .answers import kernel_answers_recorded, oblivious_answers

        self._stack.enter_context(oblivious_answers(self._fallback_recorder, self.shape_env))
        if self._recorder is not None:
            self._stack.enter_context(kernel_answers_recorded(self._recorder))
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stack.close()

    def size(self, lo: int, hi: int) -> torch.SymInt:
        # constrain_range sets the symbol's value range like torch._check(lo <= s <= hi) would, without
        # recording runtime asserts (half the cost of a trace otherwise).
        s = unbacked_size(self.shape_env, positive=lo >= 1)
        constrain_range(s, min=lo, max=hi)
        return s

    def tensor(self, shape: list[Any], dtype: str, strides: list[Any] | None = None, offset: Any = 0) -> torch.Tensor:
        """A fake input: contiguous, or with the given (symbolic) strides and storage offset."""
        from .layout import strided_empty

        return strided_empty(shape, DTYPES[dtype], strides, offset, mode=self.mode)

    def mark_baseline(self, made: set[int] | None = None) -> None:
        """Everything recorded so far is ours (bounds, assumptions), not the kernel's; ``made``: only these asserts
        (the region's sides stated mid-trace, ``continued``)."""
        if made is not None:
            self._baseline |= made
            return
        self._baseline = {id(ra) for ra in self._all_asserts()}
        self._ranges0 = self.ranges()

    def _all_asserts(self) -> list[Any]:
        return [ra for ras in self.shape_env.deferred_runtime_asserts.values() for ra in ras]

    def kernel_asserts(self) -> list[tuple[sympy.Basic, list[traceback.FrameSummary]]]:
        out = []
        for ra in self._all_asserts():
            if id(ra) in self._baseline:
                continue
            frames = list(ra.stack.summary()) if ra.stack is not None else []
            out.append((ra.expr, frames))
        return out

    def created_at(self, sym: Any) -> list[traceback.FrameSummary]:
        """The stack where an unbacked size was created (a fake's ``new_dynamic_size()``); [] if unknown."""
        stack = getattr(self.shape_env, "var_to_stack", {}).get(sym)
        return list(stack.summary()) if stack is not None else []

    def bound_sites(self, sym: Any) -> tuple[list[traceback.FrameSummary], list[traceback.FrameSummary]]:
        """Where torch last raised the lower bound and lowered the upper bound of ``sym`` (the first frame
        outside torch's symbolic machinery: a ``constrain_range``, a ``torch._check``, a ``min=``); [] unknown."""
        sloc = getattr(self.shape_env, "var_to_range_sloc", {}).get(sym)

        def frames(side: Any) -> list[traceback.FrameSummary]:
            loc = getattr(side, "framework_loc", None)
            return [loc] if isinstance(loc, traceback.FrameSummary) else []

        return frames(getattr(sloc, "lower", None)), frames(getattr(sloc, "upper", None))

    def ranges(self) -> dict[Any, tuple[int | None, int | None]]:
        out = {}
        for sym, vr in self.shape_env.var_to_range.items():
            lo = None if vr.lower is -int_oo or vr.lower == -sympy.oo else int(vr.lower)
            hi = None if vr.upper is int_oo or vr.upper == sympy.oo else int(vr.upper)
            out[sym] = (lo, hi)
        return out

    def refined_ranges(self, now: dict[Any, tuple[int | None, int | None]] | None = None,
                       ) -> dict[Any, tuple[int | None, int | None]]:
        """The ranges torch narrowed since the baseline; ``now``: ``ranges()`` if the caller has it."""
        now = self.ranges() if now is None else now
        return {s: r for s, r in now.items() if s in self._ranges0 and r != self._ranges0[s]}

    def replacements(self) -> dict[Any, sympy.Basic]:
        return dict(self.shape_env.replacements)


def assume(cond: E.Node, values: dict[str, Any]) -> None:
    """Record a fact over dims as a ``torch._check`` so that later guards can use it. ``dim == constant`` is
    recorded as two bounds: torch would otherwise replace the symbol by the constant everywhere, and output
    shapes would show ``64`` where the kernel computed ``E``."""
    from torch.utils._sympy.value_ranges import ValueRangeError

    try:
        if (isinstance(cond, E.Cmp) and cond.op == "==" and isinstance(cond.left, E.Var)
                and isinstance(cond.right, E.Const)):
            sym = values[cond.left.name]
            _fact(sym >= cond.right.value, cond)
            _fact(sym <= cond.right.value, cond)
            return
        for part in S.conjuncts(cond):  # one left out: the trace knows less of its region, never more (sound)
            if S.relations(part) <= CNF_ATOMS:
                _fact(eval_sym(part, values), part)
    except ValueRangeError as err:  # torch's range refinement finds the assumptions contradictory
        raise AssumptionRejected(str(err)) from err


def _fact(cond: Any, node: E.Node) -> None:
    """``torch._check(cond)``; one torch knows false (the region's other facts decide it) refuses the region."""
    try:
        torch._check(cond)
    except RuntimeError as err:  # torch's "Expected cond to be True" (a ValueRangeError is one too)
        raise AssumptionRejected(f"{E.to_text(node)} is false in the region ({str(err)[:120]})") from err


CNF_ATOMS = 8  # comparisons per torch._check: torch's to_cnf is exponential (12: 12 s); a larger fact is left out


class AssumptionRejected(Exception):
    """torch refused an assumption of a region: with the others, it leaves a size no value (its range
    refinement gave lower > upper). The region may be empty, or one torch cannot represent."""


def assume_form(expr: Any, values: dict[str, Any]) -> None:
    """Record a fact in torch's own form: ``expr`` is a guard torch raised, over symbols named after the dims
    (``translate.with_dim_names``), re-instantiated on this trace's sizes. torch decides a later guard of the
    same form from it (``TruncToInt(1.5*ToFloat(W)) == 1``), which the contract language's form of the same
    fact (``3 * W // 2 == 1``) does not let it do."""
    if not isinstance(expr, sympy.Basic) or not values:
        return
    sizes = [v for v in values.values() if isinstance(v, torch.SymInt)]
    if not sizes:
        return
    env = sizes[0].node.shape_env
    # a dim the region fixes is a plain int (trace.run.range_bounds)
    subs = {sympy.Symbol(n, integer=True): v.node.expr if isinstance(v, torch.SymInt) else sympy.Integer(v)
            for n, v in values.items() if isinstance(v, (torch.SymInt, int))}
    form = expr.xreplace(subs)
    if form.free_symbols - {v.node.expr for v in sizes} or form is sympy.true:
        return
    if len(form.atoms(sympy.core.relational.Relational)) > CNF_ATOMS:  # CNF_ATOMS: the contract's form stands alone
        return
    try:
        torch._check(env.create_symboolnode(form))
    except Exception:  # noqa: BLE001 - torch cannot state it: the contract's form of the fact stands alone
        return


def static_fake_mode(shape_env: bool = False) -> FakeTensorMode:
    """A FakeTensorMode for static shapes. Shapes differ from call to call, so its dispatch cache is off.
    ``shape_env``: with one, as torch.export's mode has, so that an output whose size depends on the data
    (``nonzero``, ``new_dynamic_size()``) is an unbacked size instead of DynamicOutputShapeException; the
    inputs' sizes stay plain ints."""
    mode = FakeTensorMode(shape_env=ShapeEnv()) if shape_env else FakeTensorMode()
    mode.cache_enabled = False
    return mode


GuardError = GuardOnDataDependentSymNode


def _data_errors() -> tuple[type[BaseException], ...]:
    from torch._subclasses import fake_tensor as ft

    return (GuardOnDataDependentSymNode,) + tuple(getattr(ft, n) for n in ("DataDependentOutputException",
                                                                           "DynamicOutputShapeException") if hasattr(ft, n))


#: what a kernel raises when its result depends on tensor data, not on sizes (an audit's data-dependent class)
DATA_ERRORS = _data_errors()


def guard_condition(exc: BaseException) -> sympy.Basic | None:
    return getattr(exc, "cond", None)


def is_tensor(x: Any) -> bool:
    return isinstance(x, torch.Tensor)


def is_symint(x: Any) -> bool:
    return isinstance(x, torch.SymInt)


# ---------------------------------------------------------------------------------------------------------
# Source locations


def kernel_frame(frames: list[Any], files: Own | set[str]) -> SourceLoc | None:
    """The innermost frame of the kernel's own code; else the innermost outside torch and shapecheck among the
    frames below shapecheck's own call (the command line, pytest and click above it are never the kernel's)."""
    own = Own.of(files)
    chosen = None
    for fr in reversed(frames):
        if own.at(fr.filename, fr.name, fr.lineno):
            chosen = fr
            break
    if chosen is None:
        for fr in reversed(frames):
            path = os.path.abspath(fr.filename)
            if path.startswith(SHAPECHECK_DIR + os.sep):
                break  # shapecheck called the kernel from here: what lies above is its caller
            if not path.startswith(TORCH_DIR) and "<" not in fr.filename:
                chosen = fr
                break
    if chosen is None:
        return None
    return SourceLoc(chosen.filename, chosen.lineno or 0, chosen.name, (chosen.line or "").strip())


@contextlib.contextmanager
def return_sites(files: Own | set[str], sink: list[SourceLoc]) -> Iterator[None]:
    """Record the return statements of frames of the kernel's own code; the last one is the outermost kernel
    frame's."""
    import sys

    own = Own.of(files)
    previous = sys.getprofile()

    def hook(frame, event, arg):
        if event != "return":
            return
        if own.code(frame.f_code):
            sink.append(SourceLoc(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))

    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(previous)


def exception_frames(exc: BaseException) -> list[traceback.FrameSummary]:
    """The frames of ``exc``'s traceback, then those of the errors it was raised from or while handling, innermost
    last: FakeTensorMode raises UnsupportedOperatorException while handling the kernel's own error (hunt 39)."""
    frames = list(traceback.extract_tb(exc.__traceback__))
    inner, seen = exc, {id(exc)}
    for _ in range(4):
        inner = inner.__cause__ or (None if inner.__suppress_context__ else inner.__context__)
        if inner is None or id(inner) in seen:
            break
        seen.add(id(inner))
        frames += traceback.extract_tb(inner.__traceback__)
    return frames


# ---------------------------------------------------------------------------------------------------------
# Ops and meta kernels


def resolve_op(name: str) -> Any:
    """``ns::name[.overload]`` (as ``contract.find.normalize_op`` gives it) -> the OpOverload (``.default`` unless an
    overload is named). Looked up, never walked: the namespace must be an op namespace, the name an
    ``OpOverloadPacket`` and the overload one of its overloads; anything else is UnknownOpError."""
    ns, _, rest = name.partition("::")
    packet_name, _, overload = rest.partition(".")
    overload = overload or "default"
    unknown = f"unknown op {name!r}: torch {TORCH_VERSION} has no operator {ns}::{packet_name}"
    namespace = _attribute(torch.ops, ns)
    if not isinstance(namespace, torch._ops._OpNamespace):
        raise UnknownOpError(unknown)
    packet = _attribute(namespace, packet_name)
    if not isinstance(packet, torch._ops.OpOverloadPacket):
        raise UnknownOpError(unknown)
    overloads = packet.overloads()
    op = _attribute(packet, overload) if overload in overloads else None
    if not isinstance(op, torch._ops.OpOverload):
        raise UnknownOpError(f"unknown op {name!r}: {ns}::{packet_name} has no overload {overload!r} (overloads: "
                          f"{', '.join(overloads) or 'none'})")
    try:  # a TorchScript-only operator (prim::abs) has an OpOverload but no dispatcher entry: nothing runs it
        torch._C._dispatch_find_schema_or_throw(op._schema.name, op._schema.overload_name)
    except RuntimeError:
        raise NotDispatchedOpError(f"unknown op {name!r}: a TorchScript operator, not one of torch's dispatcher, "
                                   "so FakeTensorMode and torch.export never run it") from None
    return op


def _attribute(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name)
    except (AttributeError, RuntimeError):
        return None


def op_arguments(op: Any) -> tuple[tuple[str, bool, bool], ...]:
    """The op's schema arguments: (name, keyword-only, has a default), in order."""
    return tuple((a.name, bool(a.kwarg_only), bool(a.has_default_value())) for a in op._schema.arguments)


def installed_meta(op: Any) -> Any | None:
    """The Python meta function registered for an op, if any."""
    from torch._C import DispatchKey

    fn = op.py_kernels.get(DispatchKey.Meta)
    if fn is None:
        try:
            import torch._decomp

            fn = torch._decomp.meta_table.get(op)
        except ImportError:  # pragma: no cover - a torch without the decomposition table
            fn = None
    return fn


def fake_kernel(op: Any) -> Any | None:
    """The user's own fake function registered for ``op`` through torch.library (``register_fake``, ``impl_abstract``,
    a ``custom_op``'s ``.register_fake``), or None: torch's wrappers (their shape changes between releases), their
    closures, the objects and bound methods they hold, followed to the first function defined outside torch."""
    try:
        from torch._library.simple_registry import singleton
    except ImportError:  # pragma: no cover - a torch without torch.library's registry
        return None
    holder = getattr(singleton.find(op.name()), "fake_impl", None)
    kernel = getattr(holder, "kernel", None)
    todo, seen = [getattr(kernel, "func", None)], set()
    for _ in range(64):  # a bounded walk: wrappers are a handful of closures deep
        if not todo:
            return None
        obj = todo.pop(0)
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        if inspect.ismethod(obj):  # a bound method registered as the fake (vllm.ir's ``self._fake_call``)
            todo += [obj.__func__, obj.__self__]
        elif inspect.isfunction(obj):
            file = os.path.abspath(obj.__code__.co_filename)
            if not file.startswith(TORCH_DIR + os.sep):
                return obj
            todo += [c.cell_contents for c in obj.__closure__ or () if _cell_full(c)]
        elif not isinstance(obj, (str, bytes, int, float, bool, type)) and hasattr(obj, "__dict__"):
            # an object holding functions (a custom op's real and fake ones): those named fake or abstract first
            held = [(k, v) for k, v in vars(obj).items() if inspect.isfunction(v)]
            todo += [v for k, v in sorted(held, key=lambda kv: not any(w in kv[0] for w in ("fake", "abstract")))]
    return None


def _cell_full(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
        return True
    except ValueError:
        return False


def function_file(fn: Any) -> str | None:
    try:
        return inspect.getsourcefile(inspect.unwrap(fn))
    except (TypeError, OSError):
        return None


def reset_dynamo() -> None:
    """Forget compiled frames and guards between exports."""
    import torch._dynamo

    torch._dynamo.reset()


@contextlib.contextmanager
def meta_kernel_installed(op: Any, fn: Any) -> Iterator[None]:
    """Install ``fn`` as the op's Python Meta kernel for the duration, then restore the original."""
    from torch._C import DispatchKey

    had = DispatchKey.Meta in op.py_kernels
    old = op.py_kernels.get(DispatchKey.Meta)
    op.py_kernels[DispatchKey.Meta] = fn
    op._dispatch_cache.clear()
    try:
        yield
    finally:
        if had:
            op.py_kernels[DispatchKey.Meta] = old
        else:
            op.py_kernels.pop(DispatchKey.Meta, None)
        op._dispatch_cache.clear()


# ---------------------------------------------------------------------------------------------------------
# Eager kernels (the runtime reference of any op with one)

def device_available(device: str) -> str | None:
    """None when tensors can be made on ``device`` here, else why not."""
    if device == "cpu":
        return None
    if device == "cuda":
        return None if torch.cuda.is_available() else "no CUDA device is available (torch.cuda.is_available() is False)"
    return f"unknown device {device!r} (cpu or cuda)"


def call_op(op: Any, args: dict[str, Any]) -> tuple[Any, ...]:
    """Call ``op`` with its arguments by schema name (arguments the schema lacks are left out when None);
    its outputs as a tuple."""
    names = {a.name for a in op._schema.arguments}
    kwargs = {k: v for k, v in args.items() if k in names}
    out = op(**kwargs)
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def significant_strides(x: Any) -> tuple[int | None, ...] | None:
    """A tensor's strides where they matter, as torch's fake-tensor cross-check compares them: the stride of
    every dim of size > 1 (None for the others); None for an empty tensor, whose strides never matter."""
    if x.numel() == 0:
        return None
    return tuple(int(st) if int(sz) > 1 else None for sz, st in zip(x.shape, x.stride()))
@contextlib.contextmanager
def candidate_installed(op: Any, fn: Any) -> Iterator[None]:
    """``fn`` as the op's shape function for the duration: a custom op's fake implementation (torch.library,
    which FakeTensor consults before the meta table) when it has one, else the Python Meta kernel."""
    from torch._library.simple_registry import singleton
    from torch._library.utils import Kernel as LibKernel

    holder = getattr(singleton.find(op.name()), "fake_impl", None)
    if holder is None or getattr(holder, "kernel", None) is None or not hasattr(holder, "kernels"):
        with meta_kernel_installed(op, fn):
            yield
        return
    entry = LibKernel(fn, "shapecheck: the candidate kernel")
    holder.kernels.append(entry)
    try:
        with meta_kernel_installed(op, fn):
            yield
    finally:
        holder.kernels.remove(entry)


def exception_functions(exc: BaseException) -> set[str]:
    """The names of the functions an exception passed through (its traceback, and its causes')."""
    names: set[str] = set()
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        tb = exc.__traceback__
        while tb is not None:
            names.add(tb.tb_frame.f_code.co_name)
            tb = tb.tb_next
        exc = exc.__cause__ or exc.__context__
    return names


def relative(file: str) -> str:
    """A torch file relative to site-packages (``torch/_decomp/decompositions.py``), anything else as it is."""
    path = os.path.abspath(file)
    return os.path.relpath(path, os.path.dirname(TORCH_DIR)) if path.startswith(TORCH_DIR + os.sep) else file


def meta_line(op: Any) -> str:
    """The op's entry at the Meta key of its dispatch table ("" where it has none)."""
    return next((x for x in torch._C._dispatch_dump_table(op.name()).splitlines() if x.startswith("Meta:")), "")


def cpp_meta_words(line: str) -> str:
    """What a C++ entry at the Meta key (``meta_line``) is, in words."""
    if "[backend fallback]" in line:  # torch's Meta fallback: no meta kernel of the op's own
        return "C++ eager kernel (no meta kernel: FakeTensorMode runs it only through its fallback, at static sizes)"
    return "C++ Meta kernel" if "[kernel]" in line else "C++ composite kernel at the Meta key"
