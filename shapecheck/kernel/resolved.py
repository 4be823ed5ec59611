"""The kernel torch runs for an op, as a ``Kernel`` (``_torch.kernels.resolve_kernel`` decides which one): the
installed torch's, and a candidate (``--meta``, ``--meta-source``) put in torch's own slot so that the op is
called and torch's dispatch reaches it, as it would once the candidate is merged.

Where torch.export and plain FakeTensorMode run different kernels (upsample_nearest2d: a decomposition under
export, the meta registration in plain FakeTensorMode), the kernel is export's and ``Kernel.other`` plain
FakeTensorMode's: both are checked, and each finding says which one failed.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from .._torch import core as C
from .._torch import kernels as K
from ..errors import TargetError
from .binding import Unbindable, rebind, schema_signature
from .sources import Kernel


def _mode_text(modes: tuple[Any, ...]) -> str:
    return "" if len(modes) > 1 else modes[0].value


def plain_mode_twin(kernel: Kernel) -> Kernel | None:
    """``kernel``, which both ways of running the op reach, as plain FakeTensorMode runs it (the Python dispatcher
    off), for ``--both-modes``: the same function's callees may be dispatched otherwise there (``_refs``'
    ``narrow_copy`` calls ``narrow``, which raises under symbolic sizes; im2col's reshapes specialise every size).
    None for a candidate, or where plain FakeTensorMode's kernel is another one already (``other``)."""
    op = kernel.op
    if kernel.mode != "" or op is None or kernel.other is not None or kernel.via_op or kernel.install is not None:
        return None
    return replace(kernel, fn=_called_in(op, K.Mode.FAKE), mode=K.Mode.FAKE.value)


def _called_in(op: Any, mode: Any) -> Any:
    """The op as a function, called the way ``mode`` runs it (the Python dispatcher on or off)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        with K.dispatcher(mode):
            return op(*args, **kwargs)

    return call


def installed_kernel(op_name: str) -> Kernel:
    """The op as the installed torch runs it on FakeTensors: export's kernel, with plain FakeTensorMode's as
    ``other`` where it differs."""
    op = C.resolve_op(op_name)
    groups = [(modes, r) for modes, r in K.kernels_for(op) if r.kind != K.NO_FAKE]
    if not groups:
        raise TargetError(f"op {op_name!r} has no fake kernel in torch {C.TORCH_VERSION}: FakeTensorMode cannot run "
                          "it at symbolic sizes (no meta registration, decomposition, FakeTensor rule, torch.library "
                          "fake or C++ Meta kernel)")
    kernels = [_installed(op, op_name, modes, r) for modes, r in groups]
    return replace(kernels[0], other=kernels[1]) if len(kernels) > 1 else kernels[0]


def _installed(op: Any, op_name: str, modes: tuple[Any, ...], r: Any) -> Kernel:
    call = _called_in(op, modes[0])
    fake = C.fake_kernel(op) if r.kind == K.CUSTOM_FAKE else None
    if fake is not None:  # a torch.library fake of the user's: named as its author sees it, its file is theirs
        where = K.definition(fake)
        name = f"{op_name} fake kernel" + (f", {Path(where.file).name}:{where.line}" if where else "")
        file = C.function_file(fake)
        return Kernel(name, call, frozenset({file} if file else ()), None, op, where, codes=K.own_codes(fake),
                      mode=_mode_text(modes), function=fake)
    library = r.file is not None and r.fn is not None and not os.path.abspath(r.file).startswith(C.TORCH_DIR + os.sep)
    owner = op_name if library else f"installed torch {C.TORCH_VERSION}"  # a library's own function: its op's
    return Kernel(f"{owner}: {r.label}", call, frozenset({r.file} if r.file else ()),
                  None, op, r.definition,
                  codes=r.codes, mode=_mode_text(modes), function=r.fn)


def candidate_kernel(base: Kernel, fn: Any, op: Any, registration: str | None,
                     global_slot: tuple[Any, str] | None = None) -> Kernel:
    """``base`` (a function kernel called directly: ``fn`` with the case's arguments bound to its signature)
    called through ``op`` instead, with the candidate in torch's slot.

    ``registration`` (``register_meta``, ``register_fake``, ``impl_abstract``: how a ``--meta-source`` file
    registers it) puts it where that registration does; the modes whose kernel is then the candidate check it,
    and a mode whose kernel is still another is named in words (``Kernel.notes``). Without a registration
    (``--meta FILE:FUNC``), or when no mode reaches the registered function, the candidate stands in for the
    kernel each mode resolves to. ``global_slot`` (module, name): where torch's kernel for a mode reads that
    global of the module the file stands for (a FakeTensor rule calling the decomposition by name), the file's
    function is bound there, and that mode checks it."""
    schema, signature, wrapped = base.schema, base.signature, base.fn
    calls: list[bool] = []  # one entry per call torch makes of the candidate (``install``'s probe reads it)

    def candidate(*args: Any, **kwargs: Any) -> Any:
        calls.append(True)
        if schema is not None and signature is not None:
            try:
                args, kwargs = rebind(schema, signature, args, kwargs)
            except Unbindable:
                # torch passes keyword-only arguments the case never gave (new_empty's pin_memory=False): a
                # candidate without the parameter is called without them, as a direct call would be
                takes = signature.parameters
                if not any(p.kind == p.VAR_KEYWORD for p in takes.values()):
                    kwargs = {k: v for k, v in kwargs.items() if k in takes}
                args, kwargs = rebind(schema, signature, args, kwargs)
        return wrapped(*args, **kwargs)

    def by_name(*args: Any, **kwargs: Any) -> Any:  # the file's function where torch's code calls it by name
        calls.append(True)
        return fn(*args, **kwargs)

    plans, notes = _registered_plans(op, registration, candidate, base.name, global_slot and (*global_slot, by_name)
                                     ) if registration else ([], [])
    if registration and not plans:
        # the kernel torch resolves for the op is not the file's function (a decomposition of an op with a meta
        # registration; a FakeTensor rule): that kernel is checked, with the file's function registered while it
        # runs, since the kernel may call it (fake_impls' conv calls the op at the Meta key, which the Python
        # dispatcher gives the file's meta_conv) or never does
        return _registered_beside(installed_kernel(op.name()), base, op, registration, candidate, calls)
    if not plans:
        plans, more = _slot_plans(op, candidate, base.name)
        notes += more
        if registration and plans:
            notes.append(f"{base.name} is checked in the place of the kernel torch runs instead: " + "; ".join(
                f"{_modes_words(modes)}: {label}" for modes, label in _labels(op)))
    if not plans:
        raise TargetError(f"{base.name}: " + "; ".join(notes))
    kernels = [_through(base, op, modes, install, notes, calls) for modes, install in plans]
    if registration:  # the file's function where its registration puts it: a direct call (replays) registers it
        # too, so that its own calls of its op reach it again, as with the file installed (_refs' roll)
        kernels = [replace(k, direct=_with_registered(base.fn, op, registration, candidate)) for k in kernels]
    if registration and len(kernels) == 1 and K.Mode.EXPORT in plans[0][0]:
        # plain FakeTensorMode runs another kernel (constant_pad_nd's C++ composite): checked too, as for the
        # installed torch, with the file's function registered while it runs
        kernels += _unreached(op, registration, candidate, plans[0][0])
    elif registration and len(kernels) == 1:
        # the file's function runs only in plain FakeTensorMode (upsample_nearest2d's meta registration, where
        # export runs a decomposition): export's kernel decides, as for the installed torch, with the file's
        # function registered while it runs, and the file's is checked beside it (hunt 32: an unmodified copy of
        # _meta_registrations.py hid the findings of the kernel export runs)
        first = _unreached(op, registration, candidate, plans[0][0])
        if first:
            return replace(first[0], notes=(*first[0].notes, *notes), other=replace(kernels[0], install=None))
    out = replace(kernels[0], other=kernels[1]) if len(kernels) > 1 else kernels[0]
    return out if K.Mode.EXPORT in plans[0][0] else replace(out, install=None)


def _registered_beside(kernel: Kernel, base: Kernel, op: Any, registration: str, candidate: Any,
                       calls: list[bool]) -> Kernel:
    """``kernel`` (torch's, and its ``other``) run with ``candidate`` registered as the file registers it, the
    file's function its own code too (a guard there is the file's line)."""
    def beside(k: Kernel) -> Kernel:
        call = _with_registered(k.fn, op, registration, candidate)

        @contextlib.contextmanager
        def installed() -> Any:
            with K.registered_as(op, registration, candidate):
                yield _Probe(calls)

        label = k.name.partition(": ")[2] or k.name
        note = (f"{base.name} ({registration}) is not torch's kernel for {op.name()}: torch runs {label}"
                f"{' ' + k.modes_text.join('()') if k.mode else ''}, checked with {base.name} registered, which it "
                "reaches only where it calls the op at the Meta key under the Python dispatcher or the function by name")
        return replace(k, name=f"{k.name}, with {base.name} registered", fn=call, install=installed,
                       codes=k.codes | base.codes, source_files=k.source_files | base.source_files | base.files,
                       notes=(*k.notes, note))

    out = beside(kernel)
    return replace(out, other=beside(kernel.other)) if kernel.other is not None else out


def _unreached(op: Any, registration: str, candidate: Any, reached: tuple[Any, ...]) -> list[Kernel]:
    """The kernel of the way of running the op that the file's registered function does not reach, as torch runs
    it with that function registered; none where every way reaches it."""
    with K.registered_as(op, registration, candidate):
        groups = [(modes, r) for modes, r in K.kernels_for(op) if r.kind != K.NO_FAKE and not set(modes) & set(reached)]
    if not groups:
        return []
    modes, r = groups[0]
    kernel = _installed(op, op.name(), modes, r)
    return [replace(kernel, fn=_with_registered(kernel.fn, op, registration, candidate))]


def _with_registered(fn: Any, op: Any, registration: str, candidate: Any) -> Any:
    """``fn`` called with ``candidate`` registered for ``op`` as the file registers it."""
    def call(*args: Any, **kwargs: Any) -> Any:
        with K.registered_as(op, registration, candidate):
            return fn(*args, **kwargs)

    return call


def _registered_plans(op: Any, registration: str, candidate: Any, name: str,
                      by_name: tuple[Any, str, Any] | None = None) -> tuple[list, list[str]]:
    from .._torch.namespaces import bound_global, reads_global

    plans, notes = [], []
    with K.registered_as(op, registration, candidate):
        groups = K.kernels_for(op)
    for modes, r in groups:
        if getattr(r.fn, "shapecheck_candidate", None) is candidate:
            def install(r=r) -> Any:
                return K.registered_as(op, registration, candidate)
            plans.append((modes, install, r))
        elif by_name is not None and reads_global(r.fn, by_name[0], by_name[1]):
            @contextlib.contextmanager
            def install_by_name() -> Any:
                with K.registered_as(op, registration, candidate), bound_global(*by_name):
                    yield
            notes.append(f"under {_modes_words(modes)}, torch runs {r.label} for {op.name()}, which calls "
                         f"{by_name[1]} by name: {name} ({registration}) is checked there in its place")
            plans.append((modes, install_by_name, r))
        else:
            notes.append(f"under {_modes_words(modes)}, torch runs {r.label} for {op.name()}: {name} "
                         f"({registration}) is not reached there")
    return [(modes, _calling(op, modes[0], install, r)) for modes, install, r in plans], notes


def _slot_plans(op: Any, candidate: Any, name: str) -> tuple[list, list[str]]:
    plans, notes = [], []
    for modes, r in K.kernels_for(op):
        why = K.can_install(r, modes[0])
        if why is not None:
            notes.append(why)
            continue
        def install(r=r, mode=modes[0]) -> Any:
            return K.installed(op, mode, r, candidate)
        plans.append((modes, _calling(op, modes[0], install, r)))
    return plans, notes


def _modes_words(modes: tuple[Any, ...]) -> str:
    return "every way torch runs the op" if len(modes) > 1 else modes[0].words


def _labels(op: Any) -> list[tuple[tuple[Any, ...], str]]:
    return [(modes, r.label) for modes, r in K.kernels_for(op)]


def _calling(op: Any, mode: Any, install: Any, r: Any) -> Any:
    """(the context of one call of the op with the candidate in its slot, the installation alone)."""
    @contextlib.contextmanager
    def call_context() -> Any:
        with install(), K.calling(mode, r, candidate=True):
            yield

    return call_context, install


def _through(base: Kernel, op: Any, modes: tuple[Any, ...], contexts: Any, notes: list[str],
             calls: list[bool]) -> Kernel:
    call_context, install = contexts

    def call(*args: Any, **kwargs: Any) -> Any:
        with call_context():
            return op(*args, **kwargs)

    @contextlib.contextmanager
    def installed() -> Any:
        """The candidate in torch's slot for a whole run (torch.export's); yields a probe whose ``reached``
        says whether torch called it."""
        probe = _Probe(calls)
        with install():
            yield probe

    return replace(base, fn=call, mode=_mode_text(modes), via_op=True, install=installed, notes=tuple(notes),
                   function=base.function, direct=base.fn)


class _Probe:
    def __init__(self, calls: list[bool]) -> None:
        self.calls, self.start = calls, len(calls)

    @property
    def reached(self) -> bool:
        return len(self.calls) > self.start


def op_signature(kernel: Kernel) -> Any:
    """The signature a case's arguments bind to for a call of the op (a kernel called through the op)."""
    return schema_signature(kernel.schema) if kernel.schema is not None else kernel.signature
