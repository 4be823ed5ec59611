"""The kernel under test: where it comes from (``Installed | Function | MetaSource``) and what is loaded from it
(``Kernel``).

Every command takes a ``KernelSource``; the command line builds one from ``--meta`` / ``--meta-source``
(``cli.options.kernel_source``). Adding a kind of source is one class here with ``provides`` (whether it has a
kernel for an op; the gate falls back to the installed torch's) and ``cli_args`` (the options that select it
again, for replay commands), plus its case in ``kernel.load.load_kernel``, which loads it.

This module is data: it imports nothing heavy and loads nothing.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import TargetError
from ..findings import SourceLoc
from .binding import SchemaArg


@dataclass(frozen=True)
class Installed:
    """The op as the installed torch dispatches it under FakeTensorMode (its registered meta kernel)."""

    def provides(self, op: str) -> bool:
        return True

    def cli_args(self) -> list[str]:
        return []

    def validate(self) -> None:
        """Bad input in the source itself, found before any contract uses it (raises TargetError)."""

    def __str__(self) -> str:
        return "the installed torch"


@dataclass(frozen=True)
class Function:
    """``--meta FILE.py:FUNC``: any Python function with the op's signature (the file is imported)."""

    file: str
    name: str

    @classmethod
    def parse(cls, spec: str) -> Function:
        file, sep, func = spec.rpartition(":")
        if not sep or not file or not func:
            raise TargetError(f"--meta {spec!r}: expected FILE.py:FUNC")
        return cls(file, func)

    def provides(self, op: str) -> bool:
        return True

    def cli_args(self) -> list[str]:
        return ["--meta", f"{self.file}:{self.name}"]

    def validate(self) -> None:
        """The file is imported when the kernel is loaded; nothing to check before."""

    def __str__(self) -> str:
        return f"{self.file}:{self.name}"


@dataclass(frozen=True)
class MetaSource:
    """``--meta-source FILE.py``: the function a ``_meta_registrations.py``-style file registers for the op;
    nothing else in the file runs."""

    file: str

    def provides(self, op: str) -> bool:
        from .registrations import is_registered_in

        return is_registered_in(self.file, op)

    def cli_args(self) -> list[str]:
        return ["--meta-source", self.file]

    def validate(self) -> None:
        """The file reads and parses (within the limits), and registers a function for some op; it is never
        run. A file that registers none would check nothing of its own: bad input, as for verify and audit."""
        from ..errors import TargetError
        from .registrations import read_python, registrations

        text, tree = read_python(self.file, "--meta-source")
        if not any(reg.ops for reg in registrations(tree)):
            rules = ("; its register_op_impl rules name no op (a rule taken by a predicate, such as a lambda, "
                     "is not one --meta-source can place)") if "register_op_impl" in text else ""
            raise TargetError(f"{self.file}: --meta-source registers no function for any op (register_meta, "
                              "register_decomposition, register_fake, impl_abstract, register_op_impl or "
                              f"<custom op>.register_fake){rules}")

    def __str__(self) -> str:
        return self.file


KernelSource = Installed | Function | MetaSource

INSTALLED = Installed()


def from_options(meta: str | None = None, meta_source: str | None = None) -> KernelSource:
    """The source ``--meta`` / ``--meta-source`` select (the installed torch when neither is given)."""
    if meta and meta_source:
        raise TargetError("--meta and --meta-source are exclusive")
    if meta:
        return Function.parse(meta)
    if meta_source:
        return MetaSource(meta_source)
    return INSTALLED


@dataclass(frozen=True)
class Kernel:
    """A kernel under test: how to call it and which code counts as 'the kernel's own lines'."""

    name: str
    fn: Callable[..., Any]
    files: frozenset[str]  # files whose every line is the kernel's (a kernel file of the user's)
    signature: inspect.Signature | None = None
    op: Any = None  # the OpOverload when the kernel is the installed torch's, reached through the op
    definition: SourceLoc | None = None  # where the kernel function is defined (for findings without a line)
    # why what runs is not exactly the kernel asked for (a helper the file could not define here): each
    # makes the verdict inconclusive
    caveats: tuple[tuple[SourceLoc, str], ...] = ()
    # the op's schema, for a function kernel of an op torch knows: arguments bind by it (``binding``)
    schema: tuple[SchemaArg, ...] | None = None
    # the code objects that are the kernel's own (a torch kernel function's body and the code nested in it)
    codes: frozenset[Any] = frozenset()
    # which way of running the op on FakeTensors reaches this kernel: "" every way, "export" torch.export and
    # torch.compile (the Python dispatcher on), "fake" plain FakeTensorMode (``_torch.kernels.Mode``)
    mode: str = ""
    # the kernel plain FakeTensorMode runs, when it is not this one (export's): checked too
    other: Kernel | None = None
    notes: tuple[str, ...] = ()  # what the user should know about which kernel runs (in words)
    # a candidate called through the op: ``fn`` takes the op's arguments (``signature`` is the candidate's own,
    # for binding a case's arguments), and ``install()`` puts the candidate in torch's slot for a whole run
    via_op: bool = False
    install: Callable[[], Any] | None = None
    direct: Callable[..., Any] | None = None  # a candidate called through the op, called directly (replays)
    function: Any = None  # the Python function whose source is the kernel (the result cache fingerprints it)
    # a --meta-source file: where the audit finds the kernel's lines, though only its function is its own code
    # (``codes``: a guard in one of the file's helpers is torch's helper's, as for the installed torch)
    source_files: frozenset[str] = frozenset()

    @property
    def located_in(self) -> frozenset[str]:
        """The files whose innermost frame is the kernel's line in a report: its own files and its source file."""
        return self.files | self.source_files

    @property
    def modes_text(self) -> str:
        """Which runs of the op reach the kernel, in words."""
        return {"": "", "export": "torch.export and torch.compile (FakeTensorMode under the Python dispatcher)",
                "fake": "plain FakeTensorMode without the Python dispatcher (meta-device model init, FakeTensorProp, "
                        "shape propagation)"}[self.mode]


class NotApplicable(Exception):
    """The case needs an argument the kernel does not take (e.g. enable_gqa=True for an older kernel)."""
