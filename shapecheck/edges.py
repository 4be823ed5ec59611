"""The edges of the typed code, named: where a value comes from (or goes to) something that has no type for
it. The type-checked folders (``logic``, ``contract``, ``result``, ``render``, ``prove``) may not write ``Any``
(mypy's ``disallow_any_explicit`` there, ``pyproject.toml``); each value that truly has no static type is
annotated with one of these aliases instead, so the annotation says which edge it is.

Both are ``Any`` to the type checker: a documented name, not a wrapper (nothing changes at run time).

Torch-free, z3-free; imports nothing of the package.
"""

from __future__ import annotations

from typing import Any

#: A value decoded from TOML or JSON, or about to be encoded as JSON: a contract file's raw tables and values
#: (``contract.load`` checks each one's type, key by key, before it is used), a default from an op's schema
#: as the contract compares it, a ``to_json`` document and its parts, an audit run's records.
JSON = Any

#: An object of torch's (or of the sympy torch uses): a tensor, a SymInt, a dtype, an op overload, a
#: ``torch.export.Dim``, an ``nn.Module`` class, a context manager that installs a kernel, a kernel function,
#: the arguments it is called with and what it returns, a schema default. ``_torch/`` is the door to torch;
#: what comes back through it is one of these.
TorchObject = Any
