"""Dtype names: every dtype the installed torch has, by the name torch gives it (``float4_e2m1fn_x2``,
``float8_e4m3fn``, ``uint16``, ``complex32``, ``bits8``, ...) or one of its aliases (``half``, ``long``).

The set is read from torch, never listed here. Loading a contract must not import torch (a cache hit answers
without it), so the names are read first from the installed torch's type stub (``torch/_C/__init__.pyi``,
one line ``NAME: dtype = ...`` per dtype torch builds), found without importing torch; a name the stub lacks
(torch adds a few dtypes in Python: ``uint1`` ... ``int7``) or a torch without the stub asks torch itself. An
unknown name's message lists its close matches (``difflib``) from torch's full set.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import re
import sys
from pathlib import Path

_STUB_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*): dtype = \.\.\.$", re.M)


@functools.cache
def _stub_names() -> frozenset[str]:
    """The dtype names the installed torch's stub declares (empty when torch or its stub is not found)."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return frozenset()
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    for folder in spec.submodule_search_locations:
        stub = Path(folder) / "_C" / "__init__.pyi"
        try:
            return frozenset(_STUB_LINE.findall(stub.read_text(encoding="utf-8")))
        except OSError:
            continue
    return frozenset()


@functools.cache
def torch_names() -> dict[str, str]:
    """Every dtype name of the installed torch (imports torch) -> its canonical name (``half`` -> ``float16``)."""
    import torch

    out = {}
    for name in dir(torch):
        value = getattr(torch, name, None)
        if isinstance(value, torch.dtype):
            out[name] = str(value).removeprefix("torch.")
    return out


def integral(name: str) -> bool:
    """Whether ``name`` is an integer dtype (``int64``, ``uint8``, ``long``, ...; not bool, not quantized)."""
    return re.fullmatch(r"u?int(8|16|32|64)|long|int|short", name) is not None


def quantized(name: str) -> bool:
    """Whether ``name`` is one of torch's quantized dtypes (``qint8``, ``quint8``, ``qint32``, ``quint4x2``, ...)."""
    return re.fullmatch(r"qu?int\d+(x\d+)?", name) is not None


def known(name: str) -> bool:
    """Whether ``name`` is a dtype of the installed torch: from its stub where it says so (torch is not
    imported), else from torch itself."""
    if name in _stub_names():
        return True
    if "torch" not in sys.modules and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return False  # not a name at all: no need to load torch to refuse it
    return name in torch_names()


def close_matches(name: str) -> list[str]:
    """Torch's dtype names closest to an unknown ``name`` (canonical names first)."""
    names = torch_names()
    canonical = sorted(set(names.values()))
    found = difflib.get_close_matches(name, canonical, n=4, cutoff=0.6)
    found += [n for n in difflib.get_close_matches(name, sorted(names), n=4, cutoff=0.6) if n not in found]
    return found[:4]


def unknown_message(name: object, choice_ok: bool = True) -> str:
    """The message for a dtype name torch does not have: its close matches, and where to look."""
    from .spec import short

    near = close_matches(name) if isinstance(name, str) else []
    hint = f"did you mean {', '.join(near)}?" if near else "no torch dtype has a similar name"
    tail = " or a choice name" if choice_ok else ""
    return (f"unknown dtype {short(name)}: {hint} (any dtype of the installed torch by its name, e.g. float32, "
            f"float4_e2m1fn_x2, float8_e4m3fn, uint16, complex32{tail})")


def canonical(name: str) -> str:
    """The canonical name of a dtype name (``half`` -> ``float16``); imports torch unless the name is already
    one torch prints."""
    names = torch_names()
    return names.get(name, name)
