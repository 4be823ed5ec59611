"""A kernel run as torch.export runs it: every dynamic dim a backed size (its hint the example's value) of a
ShapeEnv made as export makes it (``specialize_zero_one``, duck shaping), constrained to its ``Dim`` range, the
guards recorded with who asked for each (the kernel's own code, torch's helper, a sub-op's C++ kernel), then
torch's own ``produce_guards_verbose`` over the inputs: the constraint check that makes torch.export reject a
``Dim`` range ("Not all values of H satisfy the generated guard ...").

Unbacked sizes (verify's trace) answer a ``guard_or_false`` with its fallback and go on; with backed sizes the
same call installs a guard at the hint. A guard torch's helper installs this way fails export as surely as one
of the kernel's own (issue 22: im2col's ``_broadcast_in_dim_meta``), and this run is how it is seen: it
reproduced strict export's verdict on 35 of 35 im2col and native_group_norm cases, at about a quarter of the
cost of an export (torch 2.13).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import torch

from ..errors import said
from ..findings import SourceLoc
from .attribution import Own, from_cpp, origin, stack_frames
from .core import DTYPES, FakeTensorMode, ShapeEnv, quiet_torch_logging
from .quiet import export_backends


@dataclass(frozen=True)
class BackedGuard:
    """A guard the run installed: torch's expression, who asked (words; empty for the kernel's own code), the
    kernel line that reached it, the line of torch's helper that asked."""

    expr: Any
    origin: str
    kernel_line: SourceLoc | None
    site: SourceLoc | None
    assertion: bool = False  # a torch._check (expect_true), not a branch
    fallback: bool = False  # asked through guard_or_false/guard_or_true (unbacked, it installs nothing)
    native: bool = False  # asked by torch's C++ code that a Python line called (``_select_conv_backend``, a contiguity
    # test): a SymNode method with no Python frame of torch's above it (Python's ``if`` goes through SymBool.__bool__)


class _GuardList(list):
    """Stands in for ``ShapeEnv.guards``: every guard appended is recorded with its stack's origin."""

    def __init__(self, base: Any, own: Own, sink: list[BackedGuard]) -> None:
        super().__init__(base)
        self.own, self.sink = own, sink

    #: set while torch.export's own steps after the kernel run (``BackedRun.run``'s ``record_outputs``): who asks
    phase = ""

    def append(self, guard: Any) -> None:
        frames = stack_frames(sys._getframe(1))
        who, kernel_line, site = origin(frames, self.own)
        if self.phase:
            who, kernel_line = self.phase + (f" ({who})" if who else ""), None
        names = {code.co_name for code, _, _ in frames[:16]}
        checked = bool(names & {"_check", "_check_with", "expect_true"})
        fallback = bool(names & {"guard_or_false", "guard_or_true", "_guard_or"})
        self.sink.append(BackedGuard(guard.expr, who, kernel_line, site, checked, fallback, from_cpp(frames)))
        super().append(guard)


#: who asks for the guards of torch.export's record of an output's metadata
OUTPUT_METADATA = ("torch.export's record of the op's output (torch.fx.passes.shape_prop._extract_tensor_metadata, "
                   "which asks whether each output is contiguous in each memory format)")


def _record_metadata(out: Any) -> bool:
    """What torch.export's tracer records of each output tensor of a node (``proxy_tensor.set_meta``); False
    where it is not recorded: an output size that depends on the sizes is 0 or 1 at the example. The record
    would then guard it equal to 1 (a specialisation to the example) and say nothing of the sizes from 2; the
    caller runs again at an example where it is at least 2 (``prove.helper_guards``). A size that is the
    constant 1 (a kept reduced dim) asks nothing of the sizes."""
    from torch.fx.passes.shape_prop import _extract_tensor_metadata

    tensors = [x for x in (out if isinstance(out, (tuple, list)) else (out,))
               if isinstance(x, torch.Tensor) and x.layout == torch.strided]
    if any(isinstance(s, torch.SymInt) and _hint(s) in (0, 1, None) for x in tensors for s in x.shape):
        return False
    for x in tensors:
        _extract_tensor_metadata(x)
    return True


def _hint(size: Any) -> int | None:
    """A size's value at the example, read without a guard (None when it has none)."""
    if isinstance(size, int):
        return size
    hint = getattr(size.node, "hint", None)
    return int(hint) if hint is not None else None


class BackedRun:
    """One run of a kernel with backed sizes, as torch.export makes its inputs."""

    def __init__(self, own: Own, *, specialize_zero_one: bool = True) -> None:
        """``specialize_zero_one``: as torch.export (sizes 0 and 1 become constants, backed sizes range from 2);
        False keeps a size of 1 symbolic, as verify's domain has it (0 stays a constant: a backed size is
        positive)."""
        from torch._dynamo.source import LocalSource  # noqa: F401 - fails early on a torch without it

        self.shape_env = ShapeEnv(specialize_zero_one=specialize_zero_one)
        self.mode = FakeTensorMode(shape_env=self.shape_env, allow_non_fake_inputs=False)
        if hasattr(self.mode, "cache_enabled"):
            self.mode.cache_enabled = False
        self.own = own
        self.placeholders: list[Any] = []
        self.sources: list[Any] = []
        self.contexts: list[Any] = []
        self.names: dict[Any, str] = {}  # backed symbol -> dim name
        # every dim with a backed size, also one that shares another dim's symbol (equal sizes at the example)
        self.backed_dims: set[str] = set()
        self.axes: dict[tuple[str, int], str] = {}  # (an input's source name, axis) -> its dim
        # a Dim's name -> what it stands for (the caller's: an input axis of several dims, ``S1 + S2``)
        self.stands_for: dict[str, Any] = {}
        self.guards: list[BackedGuard] = []
        self.outputs_recorded = True  # False: an output size was 0 or 1 at the example (``_record_metadata``)
        self._dims: dict[str, Any] = {}

    def tensor(self, name: str, shape: list[int], dtype: str, dynamic: dict[int, tuple[str, int, int]]) -> Any:
        """A fake input of ``shape`` whose axes in ``dynamic`` (axis -> (dim, least, greatest)) are backed sizes
        constrained to that range, as ``torch.export.Dim(dim, min=least, max=greatest)`` makes them."""
        from torch._dynamo.source import LocalSource
        from torch.fx.experimental.symbolic_shapes import (
            DimDynamic,
            StatelessSymbolicContext,
            StrictMinMaxConstraint,
        )
        from torch.utils._sympy.value_ranges import ValueRanges

        axes = range(len(shape))
        context = StatelessSymbolicContext(
            dynamic_sizes=[DimDynamic.DYNAMIC if ax in dynamic else DimDynamic.STATIC for ax in axes],
            constraint_sizes=[StrictMinMaxConstraint(vr=ValueRanges(dynamic[ax][1], dynamic[ax][2]), warn_only=False)
                              if ax in dynamic else None for ax in axes])
        label = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
        if any(s.local_name == label for s in self.sources):
            label = f"{label}_{len(self.sources)}"
        source = LocalSource(label)
        with quiet_torch_logging():
            fake = self.mode.from_tensor(torch.empty(shape, dtype=DTYPES[dtype]), source=source,
                                         symbolic_context=context)
        for ax, (dim, _, _) in dynamic.items():
            self.axes[(label, ax)] = dim
            size = fake.shape[ax]
            if isinstance(size, torch.SymInt) and getattr(size.node.expr, "is_Symbol", False):
                self.names.setdefault(size.node.expr, dim)
                self.backed_dims.add(dim)
        self.placeholders.append(fake)
        self.sources.append(source)
        self.contexts.append(context)
        return fake

    def dim(self, name: str, hint: int) -> Any:
        """A backed size for the dim ``name`` at ``hint``, one per name (an int for 0 and 1, which export
        specialises, as ``specialize_zero_one`` does)."""
        if name not in self._dims:
            if hint == 0:
                self._dims[name] = 0
                return 0
            self._dims[name] = self._backed(name, f"dim_{name}", hint, None, first=False)
        return self._dims[name]

    def ranged(self, name: str, hint: int, least: int, greatest: int) -> Any:
        """A backed size for the dim ``name`` at ``hint`` with the value range of ``Dim(name, min=least,
        max=greatest)``, one per (name, hint): what ``tensor`` gives an axis of that dim, without building an
        input from a real tensor (``from_tensor`` is most of this run's cost). A hint below 2 is the int itself,
        as ``tensor`` makes that axis static."""
        from torch.fx.experimental.symbolic_shapes import StrictMinMaxConstraint
        from torch.utils._sympy.value_ranges import ValueRanges

        if hint < 2:
            return hint
        key = f"{name}@{hint}"
        if key not in self._dims:
            constraint = StrictMinMaxConstraint(vr=ValueRanges(least, greatest), warn_only=False)
            self._dims[key] = self._backed(name, f"dim_{name}_{hint}", hint, constraint, first=True)
        return self._dims[key]

    def _backed(self, name: str, source_name: str, hint: int, constraint: Any, *, first: bool) -> Any:
        """A new backed size at ``hint`` (its range ``constraint``'s, where given), named ``name`` in ``names``
        (``first``: unless a size of the same symbol already has a name)."""
        from torch._dynamo.source import LocalSource
        from torch.fx.experimental.symbolic_shapes import DimDynamic

        source = LocalSource(source_name)
        sym = self.shape_env.create_symbol(hint, source, dynamic_dim=DimDynamic.DYNAMIC, constraint_dim=constraint)
        value = self.shape_env.create_symintnode(sym, hint=hint, source=source)
        if isinstance(value, torch.SymInt) and getattr(value.node.expr, "is_Symbol", False):
            self.backed_dims.add(name)
            if first:
                self.names.setdefault(value.node.expr, name)
            else:
                self.names[value.node.expr] = name
        return value

    def installed(self) -> int:
        """How many guards the ShapeEnv holds (a screen's inputs must install none)."""
        return len(self.shape_env.guards)

    def empty(self, sizes: list[Any], dtype: str, strides: list[Any] | None = None, offset: Any = 0) -> Any:
        """A fake tensor of ``sizes`` (ints and backed sizes), contiguous or with the given strides and storage
        offset (an input's layout)."""
        from .layout import strided_empty

        with quiet_torch_logging(), self.mode:
            return strided_empty(sizes, DTYPES[dtype], strides, offset, mode=self.mode)

    def run(self, fn: Any, args: list[Any], kwargs: dict[str, Any], *,
            record_outputs: bool = False) -> tuple[Any, BaseException | None]:
        """Call ``fn`` (the kernel, which sets the Python dispatcher as its mode has it) under the fake mode;
        its result, or what it raised. ``record_outputs``: then record each output tensor's metadata as
        torch.export's tracer does for every node it makes (``_extract_tensor_metadata``: contiguity in each
        memory format, which with backed sizes guards an output size such as ``(W - 1) // 2 + 1`` against 1:
        the exported program keeps that guard and refuses W = 2)."""
        recorded = _GuardList(self.shape_env.guards, self.own, self.guards)
        self.shape_env.guards = recorded
        try:
            with quiet_torch_logging(), export_backends(), self.mode:
                out = fn(*args, **kwargs)
                if record_outputs:
                    recorded.phase = OUTPUT_METADATA
                    self.outputs_recorded = _record_metadata(out)
                    recorded.phase = ""
                return out, None
        except BaseException as err:  # noqa: BLE001 - the kernel's own failure at the example (sys.exit too)
            from ..errors import user_stopped

            if user_stopped(err):  # the user stopping the run, never the kernel's failure
                raise
            return None, err
        finally:
            self.shape_env.guards = list(recorded)

    def export_verdict(self) -> str | None:
        """None when torch.export would accept the inputs' Dim ranges after this run, else its message: the
        constraint violations ``produce_guards_verbose`` reports (torch.export's own check)."""
        try:
            with quiet_torch_logging():
                self.shape_env.produce_guards_verbose(self.placeholders, self.sources, input_contexts=self.contexts)
        except Exception as err:  # noqa: BLE001 - torch's ConstraintViolationError and what formatting it raises
            from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

            text = said(err).strip() or type(err).__name__
            if isinstance(err, ConstraintViolationError):
                return text
            # torch's check itself failed as shapecheck runs it (an IndexError formatting a derived Dim; hunt 67:
            # "sources must not be empty" for a symbol col2im made): the guard stays installed, so export is taken
            # to reject, but the text is no reason of export's, and is not given as one
            return (f"the guard stays installed; torch's constraint check, run here as export runs it, failed before "
                    f"wording the violation ({type(err).__name__}: {text[:160]})")
        return None



@dataclass(frozen=True)
class DataDependent:
    """A fake output whose sizes the data decides (an unbacked size: no example value): each size an int, or
    None where the data decides it; for those, the range (least, greatest or None) the fake gave it."""

    shape: tuple[int | None, ...]
    dtype: Any
    ranges: tuple[tuple[int | None, int | None] | None, ...] = ()
    # per size the data decides: the fake's torch._check conditions on it alone, the backed sizes at their
    # hints (``n < x.shape[0]`` at N = 5: ``u0 < 5``), which its value range does not show
    checks: tuple[tuple[tuple[Any, Any], ...] | None, ...] = ()

    def admits(self, index: int, value: int) -> bool:
        """Whether the fake's own conditions on the size at ``index`` allow ``value`` (its range aside)."""
        import sympy

        for symbol, cond in (self.checks[index] or ()) if index < len(self.checks) else ():
            if cond.xreplace({symbol: sympy.Integer(value)}) is sympy.false:
                return False
        return True

    def __repr__(self) -> str:
        return "(" + ", ".join("?" if s is None else str(s) for s in self.shape) + ("," if len(self.shape) == 1 else "") + ")"


class NegativeSize(ValueError):
    """A kernel returned a tensor with a negative size: no tensor can have it, but the kernel did return."""


def concrete(x: Any, shape_env: Any = None) -> Any:
    """A fake output at the example: a meta tensor of its sizes and strides where every one has a value (a
    backed size's hint), ``DataDependent`` where the data decides a size; an int for a SymInt with a value;
    anything else as it is. ``NegativeSize`` where a size is below 0 (a broken kernel's ``[-1, 0, 2]``, hunt 63)."""
    if isinstance(x, torch.Tensor):
        sizes = [_hint(d) for d in x.shape]
        if any(v is not None and v < 0 for v in sizes):
            raise NegativeSize(f"the kernel returned a tensor of negative size {sizes}")
        strides = [_hint(d) for d in x.stride()] if x.layout == torch.strided else None
        if None in sizes:
            ranges = tuple(None if v is not None else _range(d, shape_env) for v, d in zip(sizes, x.shape))
            checks = tuple(None if v is not None else _checks(d, shape_env) for v, d in zip(sizes, x.shape))
            return DataDependent(tuple(sizes), x.dtype, ranges, checks)
        if strides is None or None in strides:
            return torch.empty(sizes, dtype=x.dtype, device="meta")
        return torch.empty_strided(sizes, strides, dtype=x.dtype, device="meta")
    if isinstance(x, torch.SymInt):
        return _hint(x)
    return x


def _hint(v: Any) -> int | None:
    if not isinstance(v, torch.SymInt):
        return int(v)
    node = v.node
    if node.has_hint():
        return int(node.hint)
    return None


def _checks(v: Any, shape_env: Any) -> tuple[tuple[Any, Any], ...] | None:
    """The runtime asserts torch deferred on a data-dependent size (a fake's ``torch._check(n < x.shape[0])``),
    each as (its symbol, the condition with every backed size at its hint) where only the symbol is left."""
    expr = v.node.expr if isinstance(v, torch.SymInt) else None
    if shape_env is None or expr is None or not expr.is_Symbol:
        return None
    hints = getattr(shape_env, "backed_var_to_val", None)  # var_to_val's name from torch 2.13 (it warns)
    if hints is None:
        hints = shape_env.var_to_val
    out = []
    for ras in shape_env.deferred_runtime_asserts.values():
        for ra in ras:
            if expr not in ra.expr.free_symbols:
                continue
            cond = ra.expr.xreplace({s: hints[s] for s in ra.expr.free_symbols if s in hints})
            if cond.free_symbols == {expr}:
                out.append((expr, cond))
    return tuple(out)


def _range(v: Any, shape_env: Any) -> tuple[int | None, int | None] | None:
    """The value range torch gives a data-dependent size (its own symbol's), or None."""
    from torch.utils._sympy.numbers import int_oo

    expr = v.node.expr if isinstance(v, torch.SymInt) else None
    vr = shape_env.var_to_range.get(expr) if shape_env is not None and expr is not None else None
    if vr is None:
        return None
    lo = None if vr.lower in (-int_oo,) or not vr.lower.is_finite else int(vr.lower)
    hi = None if vr.upper in (int_oo,) or not vr.upper.is_finite else int(vr.upper)
    return lo, hi


def output_values(x: Any, names: dict[Any, str], point: dict[str, int]) -> Any:
    """A fake output's sizes evaluated at ``point`` (dim values) instead of the hints it was traced at: the
    program torch.export would build from this trace, run at ``point``. A meta tensor, or None where a size is
    not an expression of the dims; an int output evaluated the same way."""
    from .translate import value_at, with_dim_names

    if isinstance(x, torch.SymInt):  # an int output (flash attention's max_seqlen_q): its formula at the point
        value = value_at(with_dim_names(x.node.expr, names), point)
        return value if isinstance(value, int) else None
    if isinstance(x, (torch.SymFloat, torch.SymBool)):
        return None
    if not isinstance(x, torch.Tensor):
        return x
    sizes = []
    for d in x.shape:
        if not isinstance(d, torch.SymInt):
            sizes.append(int(d))
            continue
        value = value_at(with_dim_names(d.node.expr, names), point)
        if not isinstance(value, int):
            return None
        sizes.append(value)
    return torch.empty(sizes, dtype=x.dtype, device="meta")


def holds_at(expr: Any, names: dict[Any, str], point: dict[str, int]) -> bool | None:
    """A guard's value at ``point``; None when it cannot be evaluated."""
    from .translate import value_at, with_dim_names

    value = value_at(with_dim_names(expr, names), point)
    return value if isinstance(value, bool) else None


def made_unbacked(shape_env: Any) -> bool:
    """Whether the run made a size the data decides (an unbacked symbol) or deferred a runtime assert, or torch is
    set to treat backed sizes as unbacked (``backed_size_oblivious``): what the run then decided was read at the
    hints, not only by its guards (True where torch's ShapeEnv does not say)."""
    from torch.fx.experimental import _config

    if getattr(_config, "backed_size_oblivious", True):  # backed sizes treated as unbacked: hints read unguarded
        return True
    counters = [getattr(shape_env, name, None) for name in ("unbacked_symint_counter", "unbacked_symfloat_counter")]
    if any(not isinstance(c, int) for c in counters):
        return True
    asserts = getattr(shape_env, "deferred_runtime_asserts", None)
    return any(counters) or asserts is None or any(asserts.values())


def symbol_ranges(shape_env: Any, names: dict[Any, str]) -> dict[str, tuple[int, int | None]]:
    """Each named symbol's value range after the run (a kernel's ``torch._constrain_as_size`` narrows one without a
    guard): dim name -> (least, greatest or None)."""
    from torch.utils._sympy.numbers import int_oo

    out: dict[str, tuple[int, int | None]] = {}
    for symbol, name in names.items():
        vr = shape_env.var_to_range.get(symbol)
        if vr is None:
            continue
        lo = int(vr.lower) if vr.lower.is_finite else 0
        hi = None if vr.upper in (int_oo,) or not vr.upper.is_finite else int(vr.upper)
        least, most = out.get(name, (lo, hi))
        out[name] = (max(lo, least), hi if most is None else most if hi is None else min(hi, most))
    return out


def all_guards(shape_env: Any) -> list[Any]:
    """Every guard's expression the ShapeEnv holds (those its inputs installed too)."""
    return [g.expr for g in shape_env.guards]


def output_formulas(x: Any) -> tuple[str, Any]:
    """An output as torch's expressions: ("tensor", (sizes, strides, dtype)) for a strided tensor, ("int",
    expression) for a SymInt, ("plain", x) for a value that holds no symbol, ("other", None) for the rest."""
    if isinstance(x, torch.Tensor):
        if x.layout != torch.strided:
            return "other", None
        sizes = tuple(d.node.expr if isinstance(d, torch.SymInt) else int(d) for d in x.shape)
        strides = tuple(d.node.expr if isinstance(d, torch.SymInt) else int(d) for d in x.stride())
        return "tensor", (sizes, strides, x.dtype)
    if isinstance(x, torch.SymInt):
        return "int", x.node.expr
    if x is None or isinstance(x, (bool, int, float, str, torch.dtype, torch.device)):
        return "plain", x
    return "other", None


def meta_tensor(sizes: list[int], strides: list[int] | None, dtype: Any) -> Any:
    """A meta tensor of these sizes (and strides), as ``concrete`` and ``output_values`` give an output."""
    if strides is None:
        return torch.empty(sizes, dtype=dtype, device="meta")
    return torch.empty_strided(sizes, strides, dtype=dtype, device="meta")
