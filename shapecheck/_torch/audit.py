"""The compatibility layer, part 3: what the audit needs of torch (every op, schema-derived or OpInfo inputs,
static runs). Torch internals here as in ``_torch.core``, which this module builds on."""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from ..errors import said
from ..findings import SourceLoc
from .core import DTYPES, TORCH_DIR, enable_python_dispatcher, quiet_torch_logging, static_fake_mode

# The audit: every op, schema-derived or OpInfo inputs, static runs


def all_op_names() -> list[str]:
    """Every registered operator as ``ns::name[.overload]`` (the default overload unsuffixed)."""
    return sorted(torch._C._dispatch_get_all_op_names())


@contextlib.contextmanager
def registering_modules() -> Iterator[dict[str, str]]:
    """While an import runs: each op defined then, mapped to the module the import system was executing when
    it was defined (the innermost one). A torch module that a library imports on the way owns the ops it
    defines; the library owns those its own modules define, through ``torch.library`` or by loading a
    compiled extension (``import lib._C``, ``torch.ops.load_library``). An op defined outside any module's
    import has no entry. The loaders' ``exec_module``, ``Library.define`` and ``load_library`` are wrapped
    for the duration."""
    from importlib import _bootstrap_external as B

    owner: dict[str, str] = {}
    running: list[str] = []  # the modules being executed, innermost last

    def names() -> set[str]:
        return set(torch._C._dispatch_get_all_op_names())

    def loaded_by(original: Any, snapshot: bool) -> Any:
        def exec_module(self: Any, module: Any) -> Any:
            running.append(str(getattr(module, "__name__", "")))
            before = names() if snapshot else set()
            try:
                return original(self, module)
            finally:
                name = running.pop()
                if snapshot:  # a compiled extension registers its ops as it loads
                    for op in names() - before:
                        owner.setdefault(op, name)
        return exec_module

    def defining(original: Any) -> Any:
        def define(self: Any, schema: str, *args: Any, **kwargs: Any) -> Any:
            result = original(self, schema, *args, **kwargs)
            if running:
                owner.setdefault(f"{self.ns}::{schema.split('(')[0].strip()}", running[-1])
            return result
        return define

    def loading(original: Any) -> Any:
        def load_library(self: Any, path: Any) -> Any:
            before = names()
            try:
                return original(self, path)
            finally:
                if running:
                    for op in names() - before:
                        owner.setdefault(op, running[-1])
        return load_library

    patches = [(B._LoaderBasics, "exec_module", lambda f: loaded_by(f, False)),
               (B.ExtensionFileLoader, "exec_module", lambda f: loaded_by(f, True)),
               (torch.library.Library, "define", defining), (type(torch.ops), "load_library", loading)]
    saved = [(c, attr, vars(c)[attr]) for c, attr, _ in patches if attr in vars(c)]
    for c, attr, wrap in patches:
        if attr in vars(c):
            setattr(c, attr, wrap(vars(c)[attr]))
    try:
        yield owner
    finally:
        for c, attr, f in saved:
            setattr(c, attr, f)


def torch_module(module: str) -> bool:
    """Whether ``module`` is part of torch itself."""
    return module == "torch" or module.startswith("torch.")


def is_functional(op: Any) -> bool:
    """No argument written in place or as ``out=``: the overloads an audit calls with fresh inputs."""
    schema = op._schema
    return not schema.is_mutable and not any(a.alias_info is not None and a.alias_info.is_write
                                             for a in schema.arguments)


@functools.cache
def opinfo_db() -> list[Any] | None:
    """torch's OpInfo database (``torch.testing._internal.common_methods_invocations.op_db``), or None when the
    installed torch's testing package cannot load it (it needs numpy and expecttest)."""
    try:
        with quiet_torch_logging(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from torch.testing._internal.common_methods_invocations import op_db
    except Exception:  # noqa: BLE001 - any failure of torch's test utilities means: no OpInfo samples here
        return None
    return list(op_db)


def opinfo_samples(info: Any, limit: int = 4) -> list[tuple[Any, tuple, dict]]:
    """Up to ``limit`` float32 CPU samples of an OpInfo as (input, args, kwargs); [] when it has none."""
    out = []
    try:
        for s in info.sample_inputs("cpu", torch.float32, requires_grad=False):
            out.append((s.input, tuple(s.args), dict(s.kwargs)))
            if len(out) >= limit:
                break
    except Exception:  # noqa: BLE001 - a sample generator that fails here: no samples
        return []
    return out


def tensor_facts(x: Any) -> tuple[tuple[int, ...], str] | None:
    """(shape, dtype name) of a real tensor, for an OpInfo sample; None for anything else, a tensor with no data
    too (on the meta device, or a fake tensor: a samples hook's call made under a fake mode)."""
    if not isinstance(x, torch.Tensor) or no_data(x):
        return None
    name = str(x.dtype).replace("torch.", "")
    return (tuple(int(d) for d in x.shape), name) if name in AUDIT_DTYPES else None


@contextlib.contextmanager
def static_mode() -> Iterator[None]:
    """Static shapes under FakeTensorMode and the Python dispatcher: the kernel at concrete sizes."""
    with quiet_torch_logging(), static_fake_mode(), enable_python_dispatcher():
        yield


def audit_frame(frames: list[Any], files: set[str] | frozenset[str]) -> SourceLoc | None:
    """Where a torch kernel guarded: the innermost frame in ``files``, else the innermost frame of torch's
    own Python kernels (meta registrations, refs, decompositions), skipping the dispatch, fake-tensor and
    symbolic-shape machinery. None when only machinery is on the stack (a C++ meta kernel)."""
    from .attribution import same_library

    norm = {os.path.abspath(f) for f in files}
    for fr in reversed(frames):  # a helper of an installed library's own (amd-quark's quantization/utils.py beside
        # its fake) is where the library's code branched
        if os.path.abspath(fr.filename) in norm or same_library(fr.filename, norm):
            return SourceLoc(fr.filename, fr.lineno or 0, fr.name, (fr.line or "").strip())
    for fr in reversed(frames):
        path = os.path.abspath(fr.filename)
        if not path.startswith(TORCH_DIR + os.sep):
            continue
        rel = os.path.relpath(path, TORCH_DIR)
        if rel.startswith(_MACHINERY) or rel in _MACHINERY_FILES:
            continue
        return SourceLoc(fr.filename, fr.lineno or 0, fr.name, (fr.line or "").strip())
    return None


_MACHINERY = tuple(os.path.join(*p) + os.sep for p in (("fx",), ("_subclasses",), ("_dispatch",), ("_library",), ("_dynamo",),
                                                         ("_higher_order_ops",), ("utils",), ("_logging",)))
_MACHINERY_FILES = {"__init__.py", "_ops.py", "overrides.py", "_tensor.py", "_compile.py", "_jit_internal.py",
                    os.path.join("_prims_common", "wrappers.py"), os.path.join("_prims", "context.py")}


# ---------------------------------------------------------------------------------------------------------
# Audit v2: which ops FakeTensorMode reaches, what runs them, concrete fake runs and the eager kernel

#: every dtype an audit input may take (the contract's DTYPES and the ones quantization libraries use)
AUDIT_DTYPES = {**DTYPES, **{n: getattr(torch, n) for n in ("complex64", "float8_e4m3fn", "float8_e5m2", "uint16",
                                                            "uint32", "uint64") if hasattr(torch, n)}}


def dtype_of(name: str) -> Any:
    return AUDIT_DTYPES[name]


def dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def is_dtype(x: Any) -> bool:
    return isinstance(x, torch.dtype)


def fake_rule(op: Any) -> Any | None:
    """FakeTensor's own rule for ``op`` (``fake_impls``: masked_select, nonzero, index_put, ...), or None."""
    try:
        from torch._subclasses import fake_impls
    except ImportError:  # pragma: no cover - a torch without FakeTensor's rules
        return None
    for check, rule in getattr(fake_impls, "op_implementations_checks", ()):
        try:
            if check(op):
                return fake_impls.op_implementations_dict.get(op, rule)
        except Exception:  # noqa: BLE001, S112 - a check that cannot judge this op: not its rule
            continue
    return None


def fake_reachable(op: Any) -> bool:
    """Whether FakeTensorMode (and so torch.export) can run ``op`` in some mode: a Python meta registration or
    decomposition, a torch.library fake kernel, FakeTensor's own rule, a CompositeImplicitAutograd
    decomposition, or a computed Meta kernel. Decided where verify decides it (``kernels.kernels_for``)."""
    from .kernels import has_fake_kernel

    return has_fake_kernel(op)


def kernel_origin(op: Any) -> tuple[str, Any]:
    """(what runs the op under FakeTensorMode, in words; the Python function, or None for a C++ kernel). A
    stand-in until ``_torch`` resolves kernels as FakeTensorMode does (issue 22): the torch.library fake, the
    Python meta registration or decomposition, FakeTensor's rule, else C++."""
    from .core import fake_kernel, installed_meta

    fake = fake_kernel(op)
    if fake is not None:
        return "Python fake kernel", fake
    meta = installed_meta(op)
    if meta is not None:
        return "Python meta kernel", meta
    rule = fake_rule(op)
    if rule is not None:
        return f"FakeTensor rule fake_impls.{getattr(rule, '__name__', 'rule')}", rule
    name = op.name()
    from .core import cpp_meta_words, meta_line
    from .kernels import library_meta_file, library_meta_words, python_at_meta

    if python_at_meta(op):  # a Python function torch runs at the Meta key, registered through a torch.library.Library
        return library_meta_words(library_meta_file(op), meta_line(op)), None
    if torch._C._dispatch_has_kernel_for_dispatch_key(name, "CompositeImplicitAutograd") and not \
            torch._C._dispatch_has_kernel_for_dispatch_key(name, "Meta"):
        return "C++ CompositeImplicitAutograd decomposition", None
    from .library_impls import TRIVIAL_FAKE, trivial_fake

    line = meta_line(op)
    return (TRIVIAL_FAKE if "[backend fallback]" in line and trivial_fake(op) else cpp_meta_words(line)), None


def record_build_locks(path: str) -> None:
    """In a worker that runs eager kernels: each build lock torch's C++-extension machinery takes (``FileBaton``,
    in whatever build directory: optimum-quanto builds in its own package) is noted in the file ``path``, so that
    the parent, which kills the worker when a call runs past its limit, can remove the lock it leaves (hunt 40)."""
    try:
        from torch.utils import file_baton

        original = file_baton.FileBaton.try_acquire
    except (ImportError, AttributeError):  # another torch: only the default build root is searched
        return

    def try_acquire(self: Any) -> Any:
        got = original(self)
        if got:
            with contextlib.suppress(OSError), open(path, "a", encoding="utf-8") as f:
                f.write(os.path.abspath(self.lock_file_path) + "\n")
        return got

    file_baton.FileBaton.try_acquire = try_acquire  # type: ignore[method-assign]


def remove_build_locks(since: float, recorded: str | None = None) -> list[str]:
    """Remove torch's C++-extension build locks made since ``since`` (a time.time()): those the worker noted in
    ``recorded`` (``record_build_locks``), and those under torch's default build root (``<root>/<name>/lock``):
    a build whose process was just killed leaves its lock, which would stall every later build of that
    extension. The paths removed."""
    import glob

    from torch.utils.cpp_extension import get_default_build_root

    # TORCH_EXTENSIONS_DIR/<name>, else the default root's <python>_<accelerator>/<name> (py311_cpu/quanto_cpp)
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or get_default_build_root()
    noted: set[str] = set()
    if recorded is not None:
        with contextlib.suppress(OSError), open(recorded, encoding="utf-8") as f:
            noted = {line.strip() for line in f if line.strip().endswith("lock")}
    out: list[str] = []
    for lock in sorted({*glob.glob(os.path.join(root, "*", "lock")), *glob.glob(os.path.join(root, "*", "*", "lock")),
                        *noted}):
        try:
            if os.path.getmtime(lock) >= since - 1:
                os.remove(lock)
                out.append(lock)
        except OSError:
            continue
    return out


def unbindable(op: Any) -> tuple[str, dict[str, str]]:
    """The schema arguments the op's Python fake (or meta function) cannot take, as torch calls it: (its signature
    in words, {argument: Python's binding error}). torch passes the positional arguments up to the last one that
    differs from its default, by position, and a keyword-only one by name where it differs: a fake written with
    fewer parameters than the schema (``def fake(q, k, v)`` for six) raises TypeError on every call that passes one
    of the others. ("", {}) where the fake is C++ or its signature cannot be read."""
    label, fn = kernel_origin(op)
    if fn is None or not label.startswith("Python"):
        return "", {}
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return "", {}
    args = op._schema.arguments
    positional = [a for a in args if not a.kwarg_only]
    required = next((i for i, a in enumerate(positional) if a.has_default_value()), len(positional))
    needed = {a.name: None for a in args if a.kwarg_only and not a.has_default_value()}
    gaps: dict[str, str] = {}
    try:
        sig.bind(*([None] * required), **needed)
    except TypeError:
        return "", {}  # not even the call of the required arguments binds: every call raises (the audit's SC036)
    for k in range(required + 1, len(positional) + 1):
        try:
            sig.bind(*([None] * k), **needed)
        except TypeError as err:
            gaps.update((a.name, str(err)) for a in positional[k - 1:])
            break
    for a in args:
        if a.kwarg_only and a.has_default_value():
            try:
                sig.bind(*([None] * required), **needed, **{a.name: None})
            except TypeError as err:
                gaps[a.name] = str(err)
    return f"{getattr(fn, '__name__', 'fake')}{sig}", gaps


@contextlib.contextmanager
def concrete_fake_mode() -> Iterator[Any]:
    """FakeTensorMode with a ShapeEnv at concrete sizes and the Python dispatcher on: the kernel torch.export
    runs, at the sizes given; an output whose size needs data gets an unbacked size (``new_dynamic_size``)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from .core import ShapeEnv

    mode = FakeTensorMode(shape_env=ShapeEnv(), allow_non_fake_inputs=False)
    mode.cache_enabled = False
    with quiet_torch_logging(), warnings.catch_warnings(), mode, enable_python_dispatcher():
        warnings.simplefilter("ignore")
        yield mode


def empty(shape: list[Any], dtype: str, device: str = "cpu") -> Any:
    return torch.empty(shape, dtype=AUDIT_DTYPES[dtype], device=device)


def real_tensor(shape: list[int], dtype: str, fill: str, device: str, seed: int) -> Any:
    """A real tensor for the eager kernel: floats drawn from N(0, 1) (seeded), integers and bools as ``fill``
    says (``zeros``: every index and offset valid; ``ones``; ``arange``: 0, 1, 2, ... modulo the last size)."""
    dt = AUDIT_DTYPES[dtype]
    gen = torch.Generator().manual_seed(seed % 2**63)  # any int seed (--seed 2**64): torch takes [0, 2**63)
    if dt.is_floating_point or dt.is_complex:
        base = torch.randn(shape, generator=gen, dtype=torch.float32 if not dt.is_complex else torch.complex64)
        return base.to(dt).to(device)
    if fill == "ones":
        return torch.ones(shape, dtype=dt, device=device)
    if fill == "arange" and shape:
        n = max(1, shape[-1])
        return (torch.arange(int(torch.tensor(shape).prod()), dtype=torch.int64) % n).reshape(shape).to(dt).to(device)
    return torch.zeros(shape, dtype=dt, device=device)


def no_data(x: Any) -> bool:
    """Whether a tensor holds no data to copy: on the meta device, or a FakeTensor."""
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(x, torch.Tensor) and (x.device.type == "meta" or isinstance(x, FakeTensor))


def tensor_bytes(x: Any) -> bytes:
    """A real tensor as bytes (``torch.save``: plain pickle cannot load float8 tensors back on torch 2.13)."""
    import io

    buf = io.BytesIO()
    torch.save(x.detach().cpu(), buf)
    return buf.getvalue()


def tensor_from_bytes(blob: bytes, device: str = "cpu") -> Any:
    import io

    return torch.load(io.BytesIO(blob), weights_only=False).to(device)


def describe(out: Any, named: Sequence[tuple[str, Any]] = ()) -> tuple:
    """An op's result as plain data: ("T", shape, dtype, significant strides, device, aliased) per tensor (a size
    the fake made from data is its text, ``u0``; ``aliased``: the names of the ``named`` inputs whose storage it
    shares, a view of them), ("N",) for None, ("L", items) for a tuple or list, ("V", value) for anything else."""
    if isinstance(out, torch.Tensor):
        shape = tuple(int(s) if isinstance(s, int) or not _symbolic(s) else _data_size(s) for s in out.shape)
        try:
            strides = tuple(int(st) if isinstance(st, int) or not _symbolic(st) else str(st) for st in out.stride())
            sig = tuple(st if isinstance(sz, int) and sz > 1 else None for sz, st in zip(shape, strides))
        except Exception:  # noqa: BLE001 - a sparse or opaque tensor has no strides
            sig = None
        device = "meta" if out.device.type == "meta" else str(out.device)
        return ("T", shape, dtype_name(out.dtype), sig, device, aliased(out, named))
    if out is None:
        return ("N",)
    if isinstance(out, (tuple, list)):
        return ("L", tuple(describe(v, named) for v in out))
    if isinstance(out, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return ("V", _data_size(out) if _symbolic(out) else out.node.maybe_as_int() if hasattr(out, "node") else str(out))
    if isinstance(out, (int, float, bool, str)):
        return ("V", out)
    return ("V", repr(out)[:80])


def aliased(out: Any, named: Sequence[tuple[str, Any]]) -> tuple[str, ...]:
    """The names of the ``named`` input tensors whose storage ``out`` shares (torch's storage object, the same for a
    view of a real or a fake tensor: what CrossRefFakeMode's aliasing check compares)."""
    try:
        mine = out.untyped_storage()._cdata
    except Exception:  # noqa: BLE001 - a sparse or opaque tensor has no storage of its own to share
        return ()
    out_names = []
    for name, x in named:
        try:
            if isinstance(x, torch.Tensor) and x.untyped_storage()._cdata == mine:
                out_names.append(name)
        except Exception:  # noqa: BLE001 - the same
            continue
    return tuple(out_names)


def named_tensors(names: Sequence[tuple[str, bool]], args: Sequence[Any], kwargs: dict[str, Any]
                  ) -> list[tuple[str, Any]]:
    """The call's input tensors by argument name (``names``: each argument's name and whether it is passed by
    keyword, in order), a list's items as ``name[i]``."""
    values = iter(args)
    out: list[tuple[str, Any]] = []
    for name, keyword in names:
        value = kwargs.get(name) if keyword else next(values, None)
        items = value if isinstance(value, (list, tuple)) else [value]
        for i, x in enumerate(items):
            if isinstance(x, torch.Tensor):
                out.append((f"{name}[{i}]" if isinstance(value, (list, tuple)) else name, x))
    return out


def _data_size(s: Any) -> str:
    """A size (or int) the fake made from data, as text with the range torch knows of it: ``u0 in [2, inf]``
    (``DATA_RANGE_RE`` reads it back). An exported program asserts that range at run time."""
    text = str(s)
    try:
        node = s.node
        vr = node.shape_env.bound_sympy(node.expr)
    except Exception:  # noqa: BLE001 - no range known (a float, an expression torch cannot bound): the text alone
        return text
    lo, hi = _int_or_none(vr.lower), _int_or_none(vr.upper)
    return f"{text} in [{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"


def _int_or_none(v: Any) -> int | None:
    try:
        return int(v)
    except Exception:  # noqa: BLE001 - torch's int_oo (its is_finite says True) and sympy's oo: no bound
        return None


def _symbolic(s: Any) -> bool:
    try:
        int(s)
        return False
    except Exception:  # noqa: BLE001 - an unbacked size has no value
        return True


def fake_device(x: Any) -> str:
    """The device a fake tensor stands for (``cpu`` for FakeTensorMode's default)."""
    return str(getattr(x, "fake_device", x.device))


def call_error(exc: BaseException) -> str:
    first = (said(exc).strip().splitlines() or [""])[0]
    if _in_check_message(exc):  # a torch._check failed and its message could not be built: a failed check
        return f"RuntimeError: a check failed (its message raised {type(exc).__name__}: {first[:200]})"
    if not first:  # a bare ``assert cond`` or ``raise ValueError()``: the line that raised says what failed
        return f"{type(exc).__name__} (no message) at {_raising_line(exc)}"
    return f"{type(exc).__name__}: {first[:240]}"


def _raising_line(exc: BaseException) -> str:
    """``file.py:12: assert w.shape[0] % 2 == 0``: the innermost frame of ``exc``'s traceback and its source."""
    import linecache

    tb = exc.__traceback__
    if tb is None:
        return "an unknown line"
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    text = linecache.getline(code.co_filename, tb.tb_lineno).strip()
    return f"{os.path.basename(code.co_filename)}:{tb.tb_lineno}" + (f": {text[:160]}" if text else "")


def _in_check_message(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while torch built a failed ``torch._check``'s message (istft's complex-dtype
    check formats ``window.device`` with no window: an AttributeError that means "input must be complex")."""
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        deeper = tb.tb_next
        if code.co_name == "_check_with" and code.co_filename == torch.__file__:
            # the failed check raises in _check_with itself; a frame below it is the message's own code (or
            # the symbolic condition's evaluation, which is torch.fx's)
            return deeper is not None and "/fx/experimental/" not in deeper.tb_frame.f_code.co_filename
        tb = deeper
    return False


def has_eager_kernel(op: Any, device: str) -> bool:
    from .eager_keys import eager_kernel_key

    return eager_kernel_key(op, device) is not None


def set_threads(n: int) -> None:
    torch.set_num_threads(n)


@contextlib.contextmanager
def threads(n: int) -> Iterator[None]:
    """torch's intra-op thread count at ``n`` for the block, then as it was: the fakes traced in this process see
    the count the forked eager worker runs with (1: OpenMP's pool does not survive a fork), since what a kernel
    returns may depend on it (an op that returns the thread count; the backend a convolution picks)."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def cuda_fork_unsafe() -> bool:
    """Whether a process forked from this one cannot use CUDA: CUDA is initialized here, or this process is
    itself a fork of one that had it (torch then refuses to initialize it again: "Cannot re-initialize CUDA in
    forked subprocess")."""
    return bool(torch.cuda.is_initialized() or torch.cuda._is_in_bad_fork())


#: torch functions that answer layout questions (contiguity, strides, memory format): their guards on sizes 0 and 1
#: pick a layout, never a shape
_LAYOUT_WORDS = ("contiguous", "stride", "channels_last", "memory_format", "non_overlapping", "dense")


def layout_helper(frames: list[Any], files: set[str] | frozenset[str]) -> str | None:
    """``file:line in function`` of torch's layout helper that raised a guard, when one did (the innermost
    frame of torch's own code, past the machinery, below the kernel's frames, named for a layout question);
    None when the guard is the kernel's own."""
    norm = {os.path.abspath(f) for f in files}
    for fr in reversed(frames):
        path = os.path.abspath(fr.filename)
        if path in norm:
            return None
        if not path.startswith(TORCH_DIR + os.sep):
            continue
        rel = os.path.relpath(path, TORCH_DIR)
        if rel.startswith(_MACHINERY) or rel in _MACHINERY_FILES:
            continue
        if any(w in fr.name for w in _LAYOUT_WORDS):
            return f"torch/{rel}:{fr.lineno} in {fr.name}"
        return None
    return None
