"""A kernel run on FakeTensors the way torch runs fakes: under FakeTensorMode with a ShapeEnv, every dynamic dim a
backed size whose hint is the example's value, the Python dispatcher as the kernel's mode has it (torch.export's
kernel under the Python dispatcher, plain FakeTensorMode's without). A fake that makes a data-dependent size
(``get_ctx().new_dynamic_size()``, ``repeat_interleave`` without ``output_size``) works here, as it does in
torch; meta tensors (no fake mode) cannot run it.

``fuzz op``, its pytest entry and ``ref check`` take the kernel's outputs from here, and verify's replay a kernel
error that only sizes as torch.export makes them show; the guards the run installs
are how torch.export would see the example (``Checker``'s guard check).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..contract.model import BoundCase
from ..kernel.sources import Kernel

if TYPE_CHECKING:
    from .reuse import TraceReuse


@dataclass
class FakeRun:
    """What one run gave: the outputs at the example (meta tensors, ``DataDependent`` where the data decides a
    size), or the error the kernel raised; the guards it installed, and their symbols' dim names."""

    outputs: list[Any] = field(default_factory=list)
    error: BaseException | None = None
    guards: list[Any] = field(default_factory=list)
    names: dict[Any, str] = field(default_factory=dict)
    # with ``record_outputs``: whether the outputs' metadata was recorded (False: an output size was 0 or 1 at the
    # example, and the record, with the guards it asks, left out); None where it was not asked
    recorded: bool | None = None


def fake_run(kernel: Kernel, case: BoundCase, dims: dict[str, int], *, export_view: bool = False,
             specialize_zero_one: bool = False, reuse: TraceReuse | None = None,
             record_outputs: bool = False) -> FakeRun:
    """``kernel`` on ``case`` at ``dims`` (every dynamic dim backed, hint = its value; a size of 1 stays
    symbolic, 0 is a constant). ``export_view``: each dynamic dim that is 0 or 1 at the example traced at 2
    instead, as torch.export traces every size from 2 up; the outputs are then that trace's formulas at
    ``dims`` (a guard_or_false fallback export takes for every size, evaluated where the condition is really the
    other way), None where one cannot be evaluated. ``specialize_zero_one``: sizes 0 and 1 constants, as torch's
    own ShapeEnv makes them. ``record_outputs``: the outputs' metadata recorded as torch.export's tracer records
    it, with the guards that asks (``BackedRun.run``: an output size guarded against 1, which the exported program
    keeps; hunt 47: pdist's ``N * (N - 1) // 2 >= 2``). ``reuse``: an earlier run's trace wherever this one's hints meet all its guards
    (``TraceReuse``), and this run kept for later ones. Raises NotApplicable when the kernel cannot take the
    case."""
    from .._torch import backed as B
    from .._torch import core as C
    from .run import call_args, own_code

    dynamic = {d.name for d in case.contract.dims if d.dynamic}
    hints = {n: (2 if export_view and n in dynamic and v in (0, 1) else v) for n, v in dims.items()}
    key = None
    if reuse is not None:
        key = (*reuse.key(kernel, case, hints, dynamic, export_view=export_view,
                          specialize_zero_one=specialize_zero_one), record_outputs)
        found = reuse.lookup(key, hints, dims, export_view=export_view)
        if found is not None:
            outputs, guards, names, recorded = found
            return FakeRun(outputs, None, guards, names, recorded)
    run = B.BackedRun(own_code(kernel), specialize_zero_one=specialize_zero_one)
    syms = {n: run.dim(n, v) if n in dynamic else v for n, v in hints.items()}

    def make_tensor(a: Any) -> Any:
        shape = [C.sym_value(item, syms) for item in a.shape.items]
        if a.layout is None:
            return run.empty(shape, a.dtype)
        strides = [C.sym_value(x, syms) for x in a.layout.strides]  # the input's layout, as verify builds it
        return run.empty(shape, a.dtype, strides, C.sym_value(a.layout.offset, syms))

    args, kwargs = call_args(kernel, case, make_tensor, lambda a: C.sym_value(a.expr, syms))
    result, error = run.run(kernel.fn, args, kwargs, record_outputs=record_outputs)
    if error is not None and not specialize_zero_one and 1 in (hints[n] for n in dynamic if n in hints):
        # a size of 1 kept symbolic (to see the guards at 1) is no size torch makes: its ShapeEnv makes 1 a
        # constant, and a kernel that raises only on the symbolic 1 (_fft_r2c's "tried to directly modify sizes
        # for customized tensor", hunt 42) is run as torch runs it
        again = fake_run(kernel, case, dims, specialize_zero_one=True, reuse=reuse, record_outputs=record_outputs)
        if again.error is None:
            return again
    if error is not None:
        return FakeRun(error=error, guards=list(run.guards), names=dict(run.names))
    results = result if isinstance(result, (tuple, list)) else (result,)
    if export_view:
        outputs = [B.output_values(x, run.names, dims) for x in results]
    else:
        try:
            outputs = [B.concrete(x, run.shape_env) for x in results]
        except B.NegativeSize as err:  # it returned, a tensor no runtime can make: told as what it did
            return FakeRun(error=err, guards=list(run.guards), names=dict(run.names))
    recorded = run.outputs_recorded if record_outputs else None
    if reuse is not None and key is not None:
        reuse.store(key, run, results, run.guards, run.names, hints, recorded)
    return FakeRun(outputs, None, list(run.guards), dict(run.names), recorded)


def static_fake_run(kernel: Kernel, case: BoundCase, dims: dict[str, int]) -> FakeRun:
    """``kernel`` on ``case`` at ``dims`` as plain sizes, under FakeTensorMode without a ShapeEnv: how meta-device
    model init, ``torch.library.opcheck`` and ``torch.compile``'s first (static) compile run a fake. A fake whose
    branch reads whether a size is concrete (``statically_known_true(L == 5)``, ``isinstance(L, int)``) takes
    another path here than with backed sizes. The outputs are the fake tensors; an error the kernel raised (a
    data-dependent output, which needs a ShapeEnv, included: the caller tells it apart). Raises NotApplicable
    when the kernel cannot take the case."""
    import contextlib

    from .._torch import core as C
    from .._torch.layout import strided_empty
    from .run import call_args

    def make_tensor(a: Any) -> Any:
        shape = [C.sym_value(item, dims) for item in a.shape.items]
        if a.layout is None:
            return strided_empty(shape, C.DTYPES[a.dtype], mode=mode)
        return strided_empty(shape, C.DTYPES[a.dtype], [C.sym_value(x, dims) for x in a.layout.strides],
                             C.sym_value(a.layout.offset, dims))

    with contextlib.ExitStack() as stack:
        stack.enter_context(C.quiet_torch_logging())
        mode = stack.enter_context(C.static_fake_mode())  # the kernel's call sets the Python dispatcher as its mode has it
        args, kwargs = call_args(kernel, case, make_tensor, lambda a: C.sym_value(a.expr, dims))
        try:
            result = kernel.fn(*args, **kwargs)
        except Exception as err:  # noqa: BLE001 - the kernel's error: the caller judges it
            return FakeRun(error=err)
    results = result if isinstance(result, (tuple, list)) else (result,)
    return FakeRun(list(results))
