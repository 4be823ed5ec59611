"""A backed-size run's trace, reused at a later example that meets every guard it installed (``fuzz op``).

A run with backed sizes (``fake_run``) decides each question about the sizes either from what it already knows
(the symbols' ranges, earlier guards) or by a guard at the hint. So every run whose sizes meet the same guards
makes the same decisions and returns outputs whose sizes are the same formulas of the dims: the argument by which
torch.compile reuses a compiled graph wherever its guards hold. The formulas are then evaluated at the new
example, and the guards stand as that run's own.

Reused only where nothing but the guards could have told two examples apart: the same case and kernel, the same
dims constant (a static dim's value; a dynamic dim at 0 or 1; torch's own code reads hints unguarded only for
sizes without one, as a view of an unbacked size: ``_view_has_unbacked_input``, never in a stored run), every
guard readable at the new hints and true there (every guard of the ShapeEnv, those its inputs installed too), each
dim inside the value range its symbol ended the run with (``torch._constrain_as_size`` narrows one unguarded), no
float arithmetic in a guard or an output formula (sympy's evaluation of ``TruncToInt(3.0 * ToFloat(L))`` parts
from the kernel's Python floats: hunt 45), each output formula giving the run's own output at its hints, no
size the data decides (an unbacked size's range and checks are read at the hints), and outputs that are tensors
(strided), sizes or plain values. A run that raised is never stored: the next example runs again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: False runs every example's kernel afresh (for tests and benchmarks that compare the two)
ENABLED = True

#: the runs kept per kernel, case and constant dims (each later example reads each one's guards)
MOST = 64

_MISS = object()  # an output the stored formulas cannot give at the example


@dataclass(frozen=True)
class _Output:
    """One output as formulas of the dims: a tensor's sizes, strides (None: not strided) and dtype; an int's
    formula (``sizes`` of one item, ``dtype`` None); or a plain value (``plain``)."""

    sizes: tuple[Any, ...] = ()
    strides: tuple[Any, ...] | None = None
    dtype: Any = None
    plain: Any = None
    kind: str = "plain"  # "tensor", "int" or "plain"


@dataclass(frozen=True)
class _Entry:
    conditions: tuple[Any, ...]  # every guard of the run, over the dims' names: each true at the hints
    ranges: dict[str, tuple[int, int | None]]  # each dim's value range after the run: the hints inside it
    outputs: tuple[_Output, ...]
    guards: tuple[Any, ...]  # the run's BackedGuard records
    names: dict[Any, str]
    # whether the run recorded its outputs' metadata as torch.export's tracer does (None: not asked): a run that
    # left the record out (an output size 0 or 1 at its hints) stands only for examples where it is left out too,
    # and a recorded one only for those where it is not (its guards hold there, but it was made otherwise)
    recorded: bool | None = None


class TraceReuse:
    """The stored runs of one ``fuzz op`` run, per kernel, case and constant dims; ``hits`` and ``stored`` count
    the runs reused and kept."""

    def __init__(self) -> None:
        self._entries: dict[tuple, list[_Entry]] = {}
        self.hits = 0
        self.stored = 0

    @staticmethod
    def key(kernel: Any, case: Any, hints: dict[str, int], dynamic: set[str], *, export_view: bool,
            specialize_zero_one: bool) -> tuple:
        """What must be equal for two runs to reuse one trace: the kernel, the case, the mode, each static dim's
        value and which dynamic dims are 0 or 1."""
        # a size of 1 too, even where it stays symbolic: torch's code for sizes without a guarding hint asks ``== 1``
        # of hints (``_is_contiguous_with_hinted_checks``); a run here has none, but 1 is cheap to keep apart
        shape = tuple(sorted((n, v if n not in dynamic or v in (0, 1) else None) for n, v in hints.items()))
        return id(kernel.fn), case.id, export_view, specialize_zero_one, shape

    def lookup(self, key: tuple, hints: dict[str, int], dims: dict[str, int], *,
               export_view: bool) -> tuple[list[Any], list[Any], dict[Any, str], bool | None] | None:
        """The stored run whose guards all hold at ``hints``: its outputs at the example (as ``fake_run`` gives
        them), its guard records and symbol names, and whether it recorded its outputs; None."""
        from .._torch import translate as T

        for entry in self._entries.get(key, ()):
            if all(lo <= hints[n] and (hi is None or hints[n] <= hi) for n, (lo, hi) in entry.ranges.items()
                   if n in hints) and all(T.value_at(c, hints) is True for c in entry.conditions):
                outputs = [_value(o, dims if export_view else hints, export_view) for o in entry.outputs]
                if any(o is _MISS for o in outputs):
                    continue
                if entry.recorded is not None and entry.recorded != _recorded_at(entry.outputs, hints):
                    continue
                self.hits += 1
                return outputs, list(entry.guards), dict(entry.names), entry.recorded
        return None

    def store(self, key: tuple, run: Any, results: Any, guards: list[Any], names: dict[Any, str],
              hints: dict[str, int], recorded: bool | None = None) -> None:
        """Keep a run that returned (``results``: its outputs as the kernel gave them), where it may be reused.
        ``recorded``: whether it recorded its outputs' metadata (None: not asked)."""
        from .._torch import backed as B
        from .._torch import translate as T

        if B.made_unbacked(run.shape_env) or len(self._entries.get(key, ())) >= MOST:
            return
        conditions = []
        for expr in B.all_guards(run.shape_env):
            named = T.with_dim_names(expr, names)
            if named is None or T.has_floats(named) or T.value_at(named, hints) is not True:
                return  # a guard not read at the dims (or not true at its own hints, or of float arithmetic, which
                # sympy and Python's floats may evaluate apart, hunt 45): nothing to reuse by
            conditions.append(named)
        outputs = []
        for x in results:
            out = _formulas(x, names)
            try:
                made = B.concrete(x, run.shape_env)
            except B.NegativeSize:  # an output no runtime makes: nothing to reuse
                return
            if out is None or any(T.has_floats(f) for f in (*out.sizes, *(out.strides or ()))) \
                    or not _same(_value(out, hints, False), made):
                return  # a formula of float arithmetic, or one that does not give this run's own outputs
            outputs.append(out)
        if recorded is not None and recorded != _recorded_at(tuple(outputs), hints):
            return  # the record's own rule not read off the formulas: nothing to tell examples apart by
        ranges = B.symbol_ranges(run.shape_env, names)
        self._entries.setdefault(key, []).append(_Entry(tuple(conditions), ranges, tuple(outputs), tuple(guards),
                                                        dict(names), recorded))
        self.stored += 1


def _formulas(x: Any, names: dict[Any, str]) -> _Output | None:
    """An output as formulas of the dims; None where it is not one ``_value`` can rebuild."""
    from .._torch import backed as B
    from .._torch import translate as T

    kind, value = B.output_formulas(x)
    if kind == "plain":
        return _Output(plain=value)
    if kind == "int":
        named = T.with_dim_names(value, names)
        return None if named is None else _Output(sizes=(named,), kind="int")
    if kind != "tensor":
        return None
    sizes, strides, dtype = value
    named_sizes = tuple(T.with_dim_names(s, names) for s in sizes)
    named_strides = tuple(T.with_dim_names(s, names) for s in strides)
    if any(s is None for s in named_sizes + named_strides):
        return None
    return _Output(named_sizes, named_strides, dtype, kind="tensor")


def _recorded_at(outputs: tuple[_Output, ...], hints: dict[str, int]) -> bool:
    """Whether torch.export's record of the outputs is made at ``hints``, as ``BackedRun.run`` decides it: no
    tensor's size that depends on the dims is 0 or 1 there."""
    from .._torch import translate as T

    return not any(T.value_at(s, hints) in (0, 1, None) for o in outputs if o.kind == "tensor" for s in o.sizes
                   if not isinstance(s, int) and getattr(s, "free_symbols", None))


def _same(rebuilt: Any, concrete: Any) -> bool:
    """Whether an output rebuilt from its formulas is the run's own (``concrete``'s): sizes, strides and dtype of a
    tensor, else the value."""
    import torch

    if rebuilt is _MISS:
        return False
    if isinstance(rebuilt, torch.Tensor) or isinstance(concrete, torch.Tensor):
        return isinstance(rebuilt, torch.Tensor) and isinstance(concrete, torch.Tensor) \
            and tuple(rebuilt.shape) == tuple(concrete.shape) and rebuilt.stride() == concrete.stride() \
            and rebuilt.dtype == concrete.dtype
    return type(rebuilt) is type(concrete) and rebuilt == concrete


def _value(out: _Output, point: dict[str, int], export_view: bool) -> Any:
    """An output at ``point``, as ``fake_run`` gives it: a meta tensor (contiguous for ``export_view``, as
    ``output_values`` makes it; None where a size is not an int there), an int, or the plain value; ``_MISS``
    where a size or stride of a run's own outputs is not an int at its hints."""
    from .._torch import backed as B
    from .._torch import translate as T

    if out.kind == "plain":
        return out.plain
    values = [T.value_at(s, point) for s in out.sizes]
    if out.kind == "int":
        return values[0] if isinstance(values[0], int) else (None if export_view else _MISS)
    if export_view:
        return B.meta_tensor(values, None, out.dtype) if all(isinstance(v, int) for v in values) else None
    strides = [T.value_at(s, point) for s in out.strides or ()]
    if not all(isinstance(v, int) for v in values + strides):
        return _MISS
    return B.meta_tensor(values, strides, out.dtype)
