"""Run one kernel on one case under unbacked symbolic sizes -> ``Trace``.

A trace either finishes (output shapes, kernel asserts, range refinements, replacements, all in the
contract's dim names) or stops at the first guard the kernel forces on a size (its expression and the
kernel's own source line). Internal symbol names never leave this module.
"""

from __future__ import annotations

import contextlib
import enum
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._torch import core as C
from .._torch import translate as T
from .._torch.attribution import from_cpp
from .._torch.continued import continued
from ..contract.model import BoundArg, BoundCase
from ..errors import ShapecheckError
from ..findings import SourceLoc
from ..kernel.binding import Unbindable, bind, schema_signature
from ..kernel.sources import Kernel, NotApplicable
from ..logic import expr as E
from .raised import first_line, missing_name, raised_inside


class OutputKind(enum.Enum):
    TENSOR = "tensor"  # a tensor whose sizes translated
    INT = "int"  # a SymInt or int that translated
    OTHER = "other"  # anything else (None, a float, ...)
    UNSUPPORTED = "unsupported"  # a tensor or int whose sizes are outside the contract language


@dataclass(frozen=True)
class Output:
    kind: OutputKind
    shape: E.TupleE | None = None
    scalar: E.Node | None = None
    dtype: str | None = None
    text: str = ""
    # unsupported: torch's expressions over dim-named symbols (one per size; one for an int), for value_at
    exprs: tuple[Any, ...] | None = field(default=None, repr=False)
    is_tensor: bool = False
    items: tuple[E.Node | None, ...] | None = None  # unsupported tensor: each size translated where it can be
    strides: tuple[E.Node, ...] | None = None  # a tensor's strides, where every one translated
    stride_text: str = ""  # torch's strides as text (for messages, and when they did not translate)

    @property
    def formula(self) -> str:
        """The shape (or integer) in the contract language where it translated, else torch's text."""
        from ..logic.simplify import shown

        if self.kind is OutputKind.TENSOR:
            return shown(self.shape)
        if self.kind is OutputKind.INT:
            return shown(self.scalar)
        return self.text


@dataclass(frozen=True)
class Assert:
    expr: E.Node | None
    raw: str
    loc: SourceLoc | None
    sym: Any = field(default=None, repr=False)  # torch's expression over dim-named symbols, for value_at
    # torch's broadcasting helper that asserted it (``_broadcast_shapes at torch/_refs/__init__.py:463``): under
    # unbacked sizes it took neither size for 1 and asserted ``a == b``; the op demands ``relation``
    broadcast: str = ""
    by: str = ""  # who made it, in words, where not the kernel's own torch._check (``attribution.asserted_by``)

    @property
    def relation(self) -> E.Node | None:
        """What the assert demands of the op's inputs: ``expr``, or for torch's broadcasting the broadcast
        relation (``a == b or a == 1 or b == 1``). ``expr`` itself is what the trace's outputs hold under."""
        return broadcast_relation(self.expr) if self.broadcast and self.expr is not None else self.expr


def demanded(a: Assert, asserts: tuple[Assert, ...]) -> E.Node | None:
    """One of a trace's asserts as a demand on the op's inputs: torch's broadcasting's as its relation; another
    that reads a size torch's broadcasting took equal to its partner with that equality as its premise (the trace
    holds only where no size-1 side was taken: mm's ``A_1 == scales_1`` after ``scales * B`` demands nothing of
    a ``scales`` of one column, so it is ``scales_1 != B_1 or A_1 == scales_1``)."""
    if a.expr is None or a.broadcast:
        return a.relation
    names = E.free_names(a.expr)
    taken = [b.expr for b in asserts if b.broadcast and b.expr is not None and E.free_names(b.expr) & names]
    return E.disj([*(E.negate(e) for e in taken), a.expr]) if taken else a.expr


def broadcast_relation(node: E.Node) -> E.Node:
    """``a == b`` as broadcasting reads it: ``a == b or a == 1 or b == 1`` (a constant side simplified away)."""
    if not (isinstance(node, E.Cmp) and node.op == "=="):
        return node
    one = E.Const(1)
    return E.disj([node, E.compare("==", node.left, one), E.compare("==", node.right, one)])


@dataclass(frozen=True)
class Fallback:
    """A guard_or_false/guard_or_true the kernel itself called on an undecidable size expression: torch
    assumed ``value`` and went on (with example sizes, as in torch.export, the call installs a guard)."""

    guard: E.Node | None  # in dim names; None when outside the contract language
    raw: str
    value: bool
    loc: SourceLoc | None
    expr: Any = field(default=None, repr=False)  # torch's expression over dim-named symbols
    own: bool = True  # False: torch's own helper (broadcasting, layout) asked, called from the kernel's ``loc``
    # the condition reads a size the kernel made from data (``new_dynamic_size``, ``nonzero``): unbacked in
    # torch.export too, so export takes the same fallback and installs no guard there, for every input
    data_dependent: bool = False


@dataclass(frozen=True)
class Finished:
    """The kernel returned: its outputs and what it asserted, refined or assumed on the way."""

    outputs: tuple[Output, ...] = ()
    asserts: tuple[Assert, ...] = ()
    refinements: tuple[tuple[str, int | None, int | None], ...] = ()
    replacements: tuple[tuple[str, E.Node | None, str], ...] = ()
    returned_at: SourceLoc | None = None  # the return statement of the outermost kernel frame
    fallbacks: tuple[Fallback, ...] = ()  # in the order the kernel asked
    # torch's layout logic's answers (contiguity, strides, memory format), at the kernel line that reached it: the
    # outputs' strides hold only where they do
    layout_fallbacks: tuple[Fallback, ...] = ()
    # data-dependent sizes the kernel created (named FRESH + torch's name): (name, least, greatest or None),
    # and the kernel's asserts that mention them (what it claims about their values)
    fresh: tuple[tuple[str, int | None, int | None], ...] = ()
    fresh_facts: tuple[E.Node | None, ...] = ()
    fresh_at: tuple[tuple[str, SourceLoc | None], ...] = ()  # where the kernel created each
    # where the kernel's code last set each one's least and greatest value (constrain_range, torch._check, min=)
    fresh_bounded_at: tuple[tuple[str, SourceLoc | None, SourceLoc | None], ...] = ()


@dataclass(frozen=True)
class Guarded:
    """The kernel needed to know a condition (or a value) of the sizes that the assumptions do not decide."""

    guard: E.Node | None  # the guarded condition (or the specialised value), in dim names; None: untranslated
    guard_raw: str
    loc: SourceLoc | None
    is_specialization: bool = False
    frames: tuple[Any, ...] = field(default=(), repr=False)
    guard_expr: Any = field(default=None, repr=False)  # torch's guard over dim-named symbols (for value_at)
    fallback_value: bool | None = None  # a guard made from a Fallback: the value torch assumed
    helper: bool = False  # a Fallback of torch's own helper: its sides are explored, it is not the kernel's guard
    # who asked for the guard when it was not the kernel's own code: torch's helper or a sub-op's C++ kernel, in
    # words (``_torch.core.origin``); ``loc`` is then the kernel line that reached it
    origin: str = ""
    # what the kernel had stated of the dims before it asked (its torch._check asserts, the sizes torch made equal):
    # both sides of the guard are inputs that meet them (``facts_so_far``)
    facts: tuple[E.Node, ...] = ()


@dataclass(frozen=True)
class Failed:
    """The kernel raised. ``missing_name``: the error says its environment lacks a name (a NameError, or a
    torch module without the attribute): a kernel written for another torch, not a kernel failure."""

    error: str  # "ExceptionType: first line"
    loc: SourceLoc | None
    missing_name: bool = False
    frames: tuple[Any, ...] = field(default=(), repr=False)
    fallbacks: tuple[Fallback, ...] = ()  # guard_or_* answers torch gave before the kernel raised


Trace = Finished | Guarded | Failed


def call_args(kernel: Kernel, case: BoundCase, make_tensor: Callable[[BoundArg], Any],
              make_size: Callable[[BoundArg], Any] | None = None) -> tuple[list, dict]:
    """Positional and keyword arguments for the kernel. A function kernel of an op torch knows is bound by the
    op's schema (``binding``); otherwise by the contract's argument names and ``keyword`` flags, adapted to its
    signature. ``make_size`` gives the value of an int(s) argument that the contract builds from dims;
    without it such a case is not applicable (a check that has no sizes for it)."""
    values: dict[str, Any] = {}
    for a in case.args:
        if not a.present or a.kind == "none":
            values[a.name] = None
        elif a.kind == "tensor":
            values[a.name] = make_tensor(a)
        elif a.kind == "tensors":
            values[a.name] = [make_tensor(e) for e in a.elements()]
        elif a.kind == "dtype":
            values[a.name] = C.DTYPES[a.value]
        elif a.expr is not None:
            if make_size is None:
                raise NotApplicable(f"{a.name} = {E.to_text(a.expr)} is built from dims, which this check "
                                    "cannot give it")
            values[a.name] = make_size(a)
        else:
            values[a.name] = a.value
        if a.kind == "ints" and isinstance(values[a.name], tuple):
            # an int[] reaches a Python kernel as a list, as torch's dispatcher passes it (a copy of col2im's
            # decomposition adds a list to it: ``[...] + kernel_size``; hunt 53)
            values[a.name] = list(values[a.name])
    spec = {a.name: a for a in case.args}

    def may_omit(name: str) -> bool:
        a, value = spec[name], values[name]
        return value is None or (a.has_default and a.expr is None and a.kind not in ("tensor", "tensors") and value == a.default)

    if kernel.schema is not None and kernel.signature is not None:
        try:
            bound = bind(kernel.schema, kernel.signature, values, may_omit)
            if kernel.via_op:  # called as the op is: torch passes the arguments on to the candidate
                return bind(kernel.schema, schema_signature(kernel.schema), values, may_omit)
            return bound
        except Unbindable as why:
            raise NotApplicable(str(why)) from None
    params = kernel.signature.parameters if kernel.signature is not None else None
    takes_kwargs = params is not None and any(p.kind == p.VAR_KEYWORD for p in params.values())
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for a in case.args:
        if params is not None and a.name not in params and not takes_kwargs:
            if may_omit(a.name):
                continue
            shown = E.to_text(a.expr) if a.expr is not None else repr(values[a.name])
            raise NotApplicable(f"the kernel takes no argument {a.name!r} (case needs {a.name}={shown})")
        if a.keyword:
            kwargs[a.name] = values[a.name]
        else:
            args.append(values[a.name])
    return args, kwargs


def made(values: dict[str, Any], convert: Callable[[Any], Any] = lambda t: t) -> Callable[[BoundArg], Any]:
    """A ``make_tensor`` for ``call_args`` that takes the tensors already made, by argument name (an element
    of a tensors argument, ``name[i]``, is item i of its list)."""
    def get(a: BoundArg) -> Any:
        name, _, index = a.name.partition("[")
        value = values[name]
        return convert(value[int(index[:-1])] if index else value)

    return get


def trace_case(kernel: Kernel, case: BoundCase, assumptions: list[E.Node], *, track_return: bool = False,
               answer: Callable[[E.Node], bool | None] | None = None) -> Trace:
    """Trace ``kernel`` on ``case`` with every dim an unbacked size in its range, under ``assumptions``.

    ``track_return`` records which return statement of the kernel produced the outputs (the kernel's code
    path), at the cost of a profile hook during the call. ``answer``: the side of a condition torch cannot
    decide, which the trace then assumes and goes on (``_torch.continued``; the caller keeps the sides it named:
    the trace is its region's with them), or None to stop at it, as without.
    """
    own = own_code(kernel)
    bounds, fixed, rest = range_bounds(case, assumptions)
    with C.TraceEnv(own, static_answers=True) as env:
        syms: dict[str, Any] = {d.name: fixed[d.name] if d.name in fixed else env.size(*bounds[d.name])
                                for d in case.dims}
        names = {C.symbol_of(s): n for n, s in syms.items() if n not in fixed}
        for a, original in rest:
            C.assume(a, syms)
            if original in _TORCH_FORMS:
                C.assume_form(_TORCH_FORMS[original], syms)

        def make_tensor(a: BoundArg) -> Any:  # a size may be an expression of dims: C * r * r
            sizes = [C.sym_value(i, syms) for i in a.shape.items]
            if a.layout is None:
                return env.tensor(sizes, a.dtype)
            # the layout's strides and offset, symbolic in the dims: what the kernel reads is a function of them
            return env.tensor(sizes, a.dtype, C.sym_value(E.TupleE(a.layout.strides), syms),
                              C.sym_value(a.layout.offset, syms))

        # the inputs are made before the baseline: what torch records about a composite size is ours
        args, kwargs = call_args(kernel, case, make_tensor, lambda a: C.sym_value(a.expr, syms))
        env.mark_baseline()
        returns: list[SourceLoc] = []
        try:
            with _answered(env, answer, names):
                if track_return:
                    with C.return_sites(own, returns):
                        result = kernel.fn(*args, **kwargs)
                else:
                    result = kernel.fn(*args, **kwargs)
        except C.GuardError as exc:
            return guard_trace(exc, names, kernel, own)
        except (NotApplicable, ShapecheckError):  # ours (a contract the kernel cannot take, bad input, a bug)
            raise
        except BaseException as exc:  # noqa: BLE001 - the kernel failed on a valid input (sys.exit too): a finding
            if not kernel_failure(exc):
                raise
            frames = C.exception_frames(exc)
            return Failed(f"{type(exc).__name__}: {first_line(exc)}{raised_inside(exc)}", C.kernel_frame(frames, own),
                          missing_name(exc), tuple(frames), fallbacks_of(env, names))
        return finished_trace(env, result, names, own, returns[-1] if returns else None)


def _answered(env: Any, answer: Callable[[E.Node], bool | None] | None, names: dict) -> Any:
    """``trace_case``'s ``answer`` given each condition torch cannot decide, in the dims' names (None: stop)."""
    if answer is None:
        return contextlib.nullcontext()
    return continued(env, lambda cond: None if (node := _node_or_none(cond, names)) is None else answer(node))


def range_bounds(case: BoundCase, assumptions: list[E.Node]) -> tuple[dict[str, tuple[int, int]], dict[str, int],
                                                                    list[tuple[E.Node, E.Node]]]:
    """A region's assumptions in the cheapest form torch can take them: each dim's range (``bounds``), the dims
    the region fixes to one value (``fixed``), and the assumptions left (``rest``), the fixed values put in.

    - A bound of one dim by a constant (``L <= 8``, ``not (L > 8)``) is the size's range from the start, as
      torch's range refinement of the same ``torch._check`` leaves it, but with no runtime assert: each later
      guard of the trace is evaluated against fewer facts.
    - A dim that the region leaves one value (``E == 64``, or ``L >= 8`` with ``L <= 8``) is that constant,
      not a size: torch would replace the size by it (its range refined to a singleton) after two checks.
      Every other assumption is then evaluated with it; one that folds to true is dropped. A dim the contract
      itself fixes (its range a single value) stays a size, as before.
    - A region that leaves a dim no value, or folds an assumption to false, is refused as torch refuses it
      (``AssumptionRejected``).

    Each assumption left comes with the one it was made from (its key in ``_TORCH_FORMS``)."""
    ranges = {d.name: (d.min, d.max) for d in case.dims}
    bounds = dict(ranges)
    fixed: dict[str, int] = {}
    todo = [(a, a) for a in assumptions]
    while True:
        rest: list[tuple[E.Node, E.Node]] = []
        for a, original in todo:
            if fixed:
                a = E.bind(a, {n: E.Const(v) for n, v in fixed.items()})
                if a == E.TRUE:
                    continue
                if a == E.FALSE:
                    raise C.AssumptionRejected(f"the region's assumptions contradict the value(s) "
                                               f"{', '.join(f'{n}={v}' for n, v in fixed.items())}")
            b = _bound(a)
            if b is None or b[0] not in bounds:
                rest.append((a, original))
                continue
            name, lo, hi = b
            old_lo, old_hi = bounds[name]
            new = (old_lo if lo is None else max(old_lo, lo), old_hi if hi is None else min(old_hi, hi))
            if new[0] > new[1]:
                raise C.AssumptionRejected(f"Invalid ranges [{new[0]}:{new[1]}] for {name}")
            bounds[name] = new
        now = {n: lo for n, (lo, hi) in bounds.items() if lo == hi and ranges[n][0] != ranges[n][1] and n not in fixed}
        if not now:
            return {n: b for n, b in bounds.items() if n not in fixed}, fixed, rest
        fixed.update(now)
        todo = rest


def _bound(a: E.Node) -> tuple[str, int | None, int | None] | None:
    if isinstance(a, E.Not):
        inner = a.operand
        if not isinstance(inner, E.Cmp):
            return None
        a = E.negate(inner)
    if not isinstance(a, E.Cmp):
        return None
    a = E.normalize_cmp(a)
    if not (isinstance(a.left, E.Var) and isinstance(a.right, E.Const) and type(a.right.value) is int):
        return None
    c, name = a.right.value, a.left.name
    return {"<=": (name, None, c), "<": (name, None, c - 1), ">=": (name, c, None), ">": (name, c + 1, None),
            "==": (name, c, c)}.get(a.op)


def own_code(kernel: Kernel) -> Any:
    """The kernel's own code (``_torch.core.Own``): its files and code objects, made once per pair (every
    trace of a case asks, and the code objects' lines take 0.1 ms to list)."""
    return _own(kernel.files, kernel.codes)


@functools.lru_cache(maxsize=64)
def _own(files: frozenset[str], codes: frozenset[Any]) -> Any:
    return C.Own(files, codes)


def kernel_failure(exc: BaseException) -> bool:
    """Whether an exception out of a call of the kernel under test is the kernel's own failure, a finding
    (SC007): any ``Exception``, ``sys.exit()``, and any other ``BaseException`` the kernel raises (a class of its
    own, GeneratorExit, a KeyboardInterrupt it raises itself); only the user stopping the run (Ctrl-C) goes
    through."""
    from ..errors import user_stopped

    return not user_stopped(exc)


def finished_trace(env: Any, result: Any, names: dict, files: Any, returned_at: SourceLoc | None,
                   locate: Callable[..., SourceLoc | None] | None = None) -> Finished:
    """A kernel's return value and what the trace environment recorded, in dim names; ``locate(frames, files)``
    names an assert's line (the innermost frame in ``files`` by default). Sizes the kernel created (data-dependent
    ones) are named ``?u0`` and kept apart: their range, the facts the kernel stated about them, where each was made."""
    locate = locate or C.kernel_frame
    results = result if isinstance(result, (tuple, list)) else (result,)
    ranges = env.ranges()
    fresh = _fresh_sizes(ranges, results, names)
    outputs = tuple(_output(x, names | fresh) for x in results)
    asserts, facts = [], []
    for expr, frames in env.kernel_asserts():
        if T.free_symbols(expr) & set(fresh):  # a claim about a data-dependent size, not about the dims
            facts.append(_node_or_none(expr, names | fresh))
            continue
        node = _node_or_none(expr, names)
        asserts.append(Assert(node, _renamed(expr, names), locate(frames, files),
                              T.with_dim_names(expr, names) if node is None else None, C.broadcasting(frames) or "",
                              C.asserted_by(frames)))
    refinements = tuple((names[s], lo, hi) for s, (lo, hi) in env.refined_ranges(ranges).items() if s in names)
    replacements = []
    for s, repl in env.replacements().items():
        if s in names:
            replacements.append((names[s], _node_or_none(repl, names), _renamed(repl, names)))
    return Finished(outputs=outputs, asserts=tuple(asserts), refinements=refinements,
                    replacements=tuple(replacements), returned_at=returned_at,
                    fallbacks=fallbacks_of(env, names), layout_fallbacks=fallbacks_of(env, names, layout=True),
                    fresh=tuple((name, *ranges[s]) for s, name in fresh.items()), fresh_facts=tuple(facts),
                    fresh_at=tuple((n, locate(env.created_at(s), files)) for s, n in fresh.items()),
                    fresh_bounded_at=tuple((n, *(_own_site(f, files) for f in env.bound_sites(s)))
                                           for s, n in fresh.items()))


def _own_site(frames: list[Any], files: Any) -> SourceLoc | None:
    """The kernel's own line among ``frames`` (a bound's site torch kept), else None: a line of torch's or of a
    wrapper is no place to change the kernel."""
    own = C.Own.of(files)
    found = [f for f in frames if own.at(f.filename, f.name, f.lineno)]
    return C.kernel_frame(found, own) if found else None


def fallbacks_of(env: Any, names: dict[Any, str], layout: bool = False) -> tuple[Fallback, ...]:
    """The guard_or_* answers torch gave during the call, each once, in order (``layout``: those of torch's layout
    logic)."""
    fallbacks: list[Fallback] = []
    for expr, value, loc, own in (env.layout_fallbacks if layout else env.fallbacks):
        try:
            node = T.to_node(expr, names)
        except T.Unsupported:
            node = None
        fresh = any(sym not in names for sym in T.free_symbols(expr))  # a symbol not a dim: the kernel made it
        fb = Fallback(node, _renamed(expr, names), value, loc, T.with_dim_names(expr, names), own, fresh)
        if getattr(expr, "is_Boolean", False) or getattr(expr, "is_Relational", False):
            _remember(node, fb.expr)
        if all((f.raw, f.value, f.loc, f.own) != (fb.raw, fb.value, fb.loc, fb.own) for f in fallbacks):
            fallbacks.append(fb)
    return tuple(fallbacks)


def _strides(x: Any) -> tuple:
    """A tensor's strides; () for a layout that has none (sparse CSR/CSC/BSR/BSC): no layout is stated of it."""
    try:
        return tuple(x.stride())
    except RuntimeError:
        return ()


FRESH = "?"  # the prefix of a data-dependent size's name: no contract name starts with it


def _fresh_sizes(ranges: dict, results: Any, names: dict) -> dict:
    """The unbacked sizes in the outputs' sizes and strides that are not dims: the kernel created them (a
    data-dependent size, ``new_dynamic_size``) -> their names. ``ranges``: the trace's value ranges."""
    found: dict = {}
    for x in results:
        if C.is_tensor(x):
            for v in (*x.shape, *_strides(x)):
                for s in sorted(T.free_symbols(C.symbol_of(v)), key=str):
                    if s not in names and s in ranges:
                        found.setdefault(s, f"{FRESH}{s}")
    return found


def _renamed(expr: Any, names: dict) -> str:
    """A torch expression as text in the contract's dim names (never ``u3``)."""
    return T.rename_symbols(expr, names)


_TORCH_FORMS: dict[E.Node, Any] = {}
"""Each translated guard (and its negation) -> torch's own expression of it over dim-named symbols: a trace that
assumes the guard assumes it in torch's form too (``C.assume_form``), so torch decides the same guard again."""


def _remember(node: E.Node | None, expr: Any) -> None:
    if node is None or expr is None or node in _TORCH_FORMS:
        return
    if len(_TORCH_FORMS) > 4096:  # one process verifies many contracts: keep it bounded
        _TORCH_FORMS.clear()
    try:
        import sympy

        _TORCH_FORMS[node], _TORCH_FORMS[E.negate(node)] = expr, sympy.Not(expr)
    except (TypeError, ValueError, AttributeError):  # not a condition sympy can negate: the node alone serves
        _TORCH_FORMS.pop(node, None)


def guard_trace(exc: BaseException, names: dict, kernel: Kernel, own: Any = None) -> Trace:
    own = own if own is not None else own_code(kernel)
    cond = C.guard_condition(exc)
    frames = C.exception_frames(exc)
    loc = C.kernel_frame(frames, own)
    if cond is None:
        return Failed(f"data-dependent guard: {first_line(exc)}", loc, frames=tuple(frames))
    is_bool = getattr(cond, "is_Boolean", False) or getattr(cond, "is_Relational", False)
    try:
        node = T.to_node(cond, names)
    except T.Unsupported:
        node = None
    form = T.with_dim_names(cond, names)
    if is_bool:
        _remember(node, form)
    origin = ""
    if own:  # a kernel with code of its own (a C++ kernel's every guard is its own)
        stack = C.traceback_frames(exc)
        origin, at, _ = C.origin(stack, own)
        loc = at or loc
        if not origin and from_cpp(stack):  # torch's C++ code at the kernel's line asked (the contiguity test of
            # ``.to(memory_format=...)``: ``C > 1``, hunt 63): a sub-op's guard, as fuzz's backed run names it
            origin = "torch's C++ code that the kernel's line calls (a tensor method such as .to or .contiguous)"
    return Guarded(node, _renamed(cond, names), loc, is_specialization=not is_bool, frames=tuple(frames),
                   guard_expr=form, origin=origin)


def facts_so_far(env: Any, names: dict) -> tuple[E.Node, ...]:
    """The kernel's asserts so far and the sizes torch has made equal (its replacements), over the dims: what a
    trace that stopped at a guard had demanded of its inputs before it. Those outside the language are left out."""
    out: list[E.Node] = []
    for expr, frames in env.kernel_asserts():
        node = _node_or_none(expr, names)
        if node is not None:  # torch's broadcasting demanded only the broadcast relation
            out.append(broadcast_relation(node) if C.broadcasting(frames) else node)
    for s, repl in env.replacements().items():
        node = _node_or_none(repl, names) if s in names else None
        if node is not None:
            out.append(E.Cmp("==", E.Var(names[s]), node))
    return tuple(dict.fromkeys(out))


def _node_or_none(expr: Any, names: dict) -> E.Node | None:
    try:
        return T.to_node(expr, names)
    except T.Unsupported:
        return None


def _output(x: Any, names: dict) -> Output:
    if C.is_tensor(x):
        try:
            items = tuple(T.to_node(C.symbol_of(d), names) for d in x.shape)
        except T.Unsupported as err:
            return Output(OutputKind.UNSUPPORTED, text=str(err), is_tensor=True, dtype=_dtype(x),
                          exprs=tuple(T.with_dim_names(C.symbol_of(d), names) for d in x.shape),
                          items=tuple(_node_or_none(C.symbol_of(d), names) for d in x.shape))
        dtype = _dtype(x)
        raw = [C.symbol_of(v) for v in _strides(x)]
        strides = tuple(_node_or_none(v, names) for v in raw) if raw or x.dim() == 0 else (None,)
        # torch's text (a costly rename) only for strides outside the contract language
        text = "" if None not in strides else f"({', '.join(_renamed(v, names) for v in raw)})"
        return Output(OutputKind.TENSOR, shape=E.TupleE(items), dtype=dtype, text=str(tuple(x.shape)),
                      strides=None if None in strides else strides, stride_text=text)
    if isinstance(x, int) or C.is_symint(x):
        try:
            return Output(OutputKind.INT, scalar=T.to_node(C.symbol_of(x), names), text=str(x))
        except T.Unsupported as err:
            return Output(OutputKind.UNSUPPORTED, text=str(err), exprs=(T.with_dim_names(C.symbol_of(x), names),))
    return Output(OutputKind.OTHER, text=type(x).__name__)


def _dtype(x: Any) -> str:
    return str(x.dtype).replace("torch.", "")


def guard_dims(t: Guarded) -> set[str]:
    """The dims torch's guard expression uses (also when it is outside the contract language)."""
    return T.dims_of(t.guard_expr) if t.guard_expr is not None else set()


def guard_value_at(t: Guarded, point: dict[str, int]) -> bool | int | float | None:
    """What the guarded expression evaluates to at concrete sizes (torch's semantics); None if it does not."""
    return T.value_at(t.guard_expr, point) if t.guard_expr is not None else None


def as_guard(fb: Fallback) -> Guarded:
    """A kernel's fallback seen as what it is under example sizes: a guard at the kernel's line."""
    is_bool = fb.guard is None or isinstance(fb.guard, (E.Cmp, E.And, E.Or, E.Not)) or fb.guard in (E.TRUE, E.FALSE)
    return Guarded(fb.guard, fb.raw, fb.loc, is_specialization=not is_bool, guard_expr=fb.expr,
                   fallback_value=fb.value, helper=not fb.own)


def values_at(exprs: tuple[Any, ...], point: dict[str, int]) -> tuple | None:
    """torch's expressions (from ``Output.exprs``) evaluated at concrete sizes; None if any does not."""
    out = tuple(T.value_at(e, point) for e in exprs)
    return None if any(v is None for v in out) else out


def exprs_dims(exprs: tuple[Any, ...]) -> set[str]:
    return set().union(*(T.dims_of(e) for e in exprs)) if exprs else set()


def concrete_size(a: BoundArg, values: dict[str, int]) -> Any:
    """An int or ints argument built from dims, at concrete dim values (a list for ints)."""
    v = E.evaluate(a.expr, values)
    return list(v) if isinstance(v, tuple) else v
