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
        """The file reads and parses (within the limits); it is never run."""
        from .registrations import read_python

        read_python(self.file, "--meta-source")

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
    """A kernel under test: how to call it and which files count as 'the kernel's own lines'."""

    name: str
    fn: Callable[..., Any]
    files: frozenset[str]
    signature: inspect.Signature | None = None
    op: Any = None  # the OpOverload when the kernel is reached through the op
    definition: SourceLoc | None = None  # where the kernel function is defined (for findings without a line)
    # why what runs is not exactly the kernel asked for (a helper the file could not define here): each
    # makes the verdict inconclusive
    caveats: tuple[tuple[SourceLoc, str], ...] = ()
    # the op's schema, for a function kernel of an op torch knows: arguments bind by it (``binding``)
    schema: tuple[SchemaArg, ...] | None = None


class NotApplicable(Exception):
    """The case needs an argument the kernel does not take (e.g. enable_gqa=True for an older kernel)."""
