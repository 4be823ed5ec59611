"""Where the kernel under test comes from: ``Installed | Function | MetaSource``.

Every command takes a ``KernelSource``; the command line builds one from ``--meta`` / ``--meta-source``
(``cli_options.kernel_source``). Adding a kind of source is one class here with ``kernel`` (load it for an
op), ``provides`` (whether it has a kernel for an op; the gate falls back to the installed torch's) and
``cli_args`` (the options that select it again, for replay commands).

This module imports nothing heavy: loading happens in ``target`` when ``kernel`` is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import TargetError


@dataclass(frozen=True)
class Installed:
    """The op as the installed torch dispatches it under FakeTensorMode (its registered meta kernel)."""

    def kernel(self, op: str) -> Any:
        from .load import installed_kernel

        return installed_kernel(op)

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

    def kernel(self, op: str) -> Any:
        from .load import function_kernel

        return function_kernel(self.file, self.name, op)

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

    def kernel(self, op: str) -> Any:
        from .load import source_kernel

        return source_kernel(self.file, op)

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
