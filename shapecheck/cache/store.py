"""The result cache: a result stored under a key, answered again while its key and dependencies hold, without
importing torch or z3. ``verify op`` and ``gate`` use it per contract; ``audit`` per op.

API (every part torch-free; ``cache_key.kernel_dependencies`` needs the kernel's function object):

- ``key_parts`` is any JSON-able dict naming what the result depends on besides code: the op, the contract
  file's path and content digest, every option that changes the result. ``cache_key.environment()`` (Python,
  torch, z3, sympy versions, shapecheck's version and source digest) is added by ``store`` and ``lookup``.
- ``deps`` is what ``kernel_dependencies(fn)`` (``cache_key``'s, re-exported here) returns first for the kernel:
  its function and every definition it reaches by name, each a ``Dep`` fingerprinted by its source segment;
  optionally relaxed with ``cache_key.unlocated``. Its second value says whether the walk was complete: an
  incomplete one must not be stored (part of what the kernel runs would have no fingerprint).
- ``store(kind, key_parts, deps, value, valid_until=None)`` writes an entry (atomically); ``value`` is any
  picklable object made of shapecheck's torch-free types (``report``, ``findings``, ``contract``, ...) and plain
  containers; a value that holds anything else is not stored (``store`` returns False).
  ``valid_until`` (an ISO date) ends the entry after that day (a suppression that expires changes the result).
- ``lookup(kind, key_parts, deps=None)`` -> ``Hit | None``. Without ``deps`` the stored ones are checked
  against the files on disk (``cache_key.deps_hold``), which is how a run that has not imported torch answers;
  with ``deps`` (the audit, which has the functions) they must equal the stored ones.

Entries live in ``$SHAPECHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/shapecheck``, else ``~/.cache/shapecheck``,
one file per key; the whole cache is kept under ``$SHAPECHECK_CACHE_MAX_MB`` (default 256) by dropping the
least recently used entries. ``SHAPECHECK_CACHE=0`` turns it off (the test suite does). A corrupt, foreign or
unreadable entry is a miss, never an error; a cache that cannot be written is skipped silently.

Entries are pickles read back by an unpickler that only builds shapecheck's own torch-free types and plain
containers, so an entry cannot run code; still, treat the cache directory like the rest of your home.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import io
import json
import os
import pickle
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import key as K
from .key import Dep as Dep  # noqa: F401 - the API: what store and lookup take as deps
from .key import kernel_dependencies as kernel_dependencies  # noqa: F401 - the API: (deps, complete)

FORMAT = 1  # bump when the entry layout or the meaning of a stored value changes
DEFAULT_MAX_MB = 256
_FALSE = ("0", "false", "no", "off")


@dataclass(frozen=True)
class Hit:
    value: Any
    stored_at: str  # ISO time of the run that stored it
    key: str  # the entry's key digest

    def to_json(self) -> dict[str, Any]:
        return {"hit": True, "stored_at": self.stored_at, "key": self.key[:16]}


def enabled() -> bool:
    """Whether the environment allows the cache (``SHAPECHECK_CACHE=0`` turns it off)."""
    return os.environ.get("SHAPECHECK_CACHE", "").strip().lower() not in _FALSE


def directory() -> Path:
    explicit = os.environ.get("SHAPECHECK_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "shapecheck"


def _max_bytes() -> int:
    try:
        return int(float(os.environ.get("SHAPECHECK_CACHE_MAX_MB", DEFAULT_MAX_MB)) * 2**20)
    except ValueError:
        return DEFAULT_MAX_MB * 2**20


def key_digest(kind: str, key_parts: dict[str, Any]) -> str:
    """The entry's name: sha256 of the kind, the key parts and the environment, as canonical JSON."""
    doc = {"format": FORMAT, "kind": kind, "key": key_parts, "env": K.environment()}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def _path(kind: str, digest: str) -> Path:
    return directory() / f"v{FORMAT}" / f"{kind}-{digest}.entry"


# ---------------------------------------------------------------------------------------------------------
# Store and lookup


def store(kind: str, key_parts: dict[str, Any], deps: tuple[K.Dep, ...], value: Any, *,
          valid_until: str | None = None) -> bool:
    """Write an entry; False when ``value`` holds a type the cache does not read back, or the cache cannot be
    written (neither is an error: the run's result stands)."""
    digest = key_digest(kind, key_parts)
    entry = {"format": FORMAT, "kind": kind, "key": json.dumps(key_parts, sort_keys=True, default=str),
             "deps": tuple(deps), "files": {d.file: K.file_digest(d.file) for d in deps},
             "valid_until": valid_until, "stored_at": datetime.datetime.now().isoformat(timespec="seconds"),
             "value": value}
    try:
        data = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
        _loads(data)  # only what a lookup can read back is stored
    except (pickle.PicklingError, pickle.UnpicklingError, TypeError, AttributeError, RecursionError):
        return False
    import tempfile

    path = _path(kind, digest)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".entry")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)  # atomic: a reader sees the old entry or the new one, never half of one
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _evict(path.parent, _max_bytes())
    except OSError:
        return False
    return True


def lookup(kind: str, key_parts: dict[str, Any], deps: tuple[K.Dep, ...] | None = None, *,
           today: str | None = None) -> Hit | None:
    """The stored value when the entry exists, is readable, is for exactly these key parts, has not passed its
    ``valid_until`` day, and its dependencies hold (see the module docstring); else None."""
    digest = key_digest(kind, key_parts)
    path = _path(kind, digest)
    try:
        entry = _loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError,
            KeyError, ImportError, MemoryError, RecursionError, UnicodeDecodeError):
        return None  # missing or corrupt: a miss
    try:
        if entry["format"] != FORMAT or entry["kind"] != kind \
                or entry["key"] != json.dumps(key_parts, sort_keys=True, default=str):
            return None
        until = entry["valid_until"]
        if until is not None and (today or datetime.date.today().isoformat()) > until:
            return None
        stored = tuple(entry["deps"])
        if deps is not None:
            if tuple(deps) != stored:
                return None
        elif not K.deps_hold(stored, dict(entry["files"])):
            return None
        hit = Hit(entry["value"], str(entry["stored_at"]), digest)
    except (KeyError, TypeError, AttributeError, ValueError):
        return None
    try:
        os.utime(path)  # least recently used goes first
    except OSError:
        pass
    return hit


def _evict(folder: Path, limit: int) -> None:
    entries = []
    for p in folder.glob("*.entry"):
        try:
            st = p.stat()
        except OSError:
            continue
        entries.append((st.st_mtime, st.st_size, p))
    total = sum(size for _, size, _ in entries)
    for _, size, p in sorted(entries, key=lambda e: e[0]):
        if total <= limit:
            break
        p.unlink(missing_ok=True)
        total -= size


# ---------------------------------------------------------------------------------------------------------
# Reading entries back: shapecheck's torch-free types and plain containers only


#: modules whose classes an entry may hold: shapecheck's data modules that import neither torch nor z3
_MODULES = frozenset(f"shapecheck.{m}" for m in (
    "cache.key", "contract.model", "contract.spec", "contract.load", "contract.outputs",
    "contract.rejects", "logic.expr", "findings", "result.report", "result.run", "rules", "kernel.sources",
    "limits"))
_GLOBALS = frozenset({("builtins", "set"), ("builtins", "frozenset"), ("builtins", "tuple"), ("builtins", "list"),
                      ("builtins", "dict"), ("builtins", "bytes"), ("builtins", "complex"), ("builtins", "slice"),
                      ("builtins", "range"), ("collections", "OrderedDict"), ("copyreg", "_reconstructor"),
                      ("builtins", "object"), ("pathlib", "PosixPath"), ("pathlib", "WindowsPath"),
                      ("fractions", "Fraction"), ("datetime", "date"), ("enum", "Enum")})


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module in _MODULES or (module, name) in _GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not a type the cache reads back")


def _loads(data: bytes) -> Any:
    return _Unpickler(io.BytesIO(data)).load()


# ---------------------------------------------------------------------------------------------------------
# verify and gate: one entry per (contract, kernel source, options), holding verify's Report


def verify_key(op: str, contract_file: str | None, source: Any, imports: tuple[str, ...],
               options: dict[str, Any], *, cwd: Path | None = None) -> dict[str, Any] | None:
    """The key parts of verifying OP against a contract with a kernel source (``sources.KernelSource``) and
    the result-changing ``options`` (``--jobs`` is not one: reports do not depend on it); None when the run
    is not cached (``--explore`` and ``--confirm-export`` results hold torch-side objects) or when the op or
    contract cannot be found (the run itself then reports the error)."""
    from ..contract.find import find_contract, normalize_op

    if options.get("explore") or options.get("confirm_export"):
        return None
    try:
        name = normalize_op(op)
    except ValueError:
        return None
    if contract_file is None:  # as target.load_op_contract finds it
        found = find_contract(name)
        if found is None:
            return None
        contract_file = str(found)
    src = _source_parts(source, name)
    if src is None:
        return None
    digest = K.file_digest(Path(cwd or ".") / contract_file)
    return {"op": name, "contract": contract_file, "contract_digest": digest,
            "source": src, "imports": [_import_parts(i) for i in imports], "options": options}


def _source_parts(source: Any, op: str) -> dict[str, Any] | None:
    from ..kernel.sources import Function, MetaSource

    if isinstance(source, Function):  # the whole file runs when it is imported
        return {"kind": "meta", "file": os.path.realpath(source.file), "digest": K.file_digest(source.file),
                "function": source.name}
    if isinstance(source, MetaSource):  # only the registered function and its helpers run: they are deps
        return _meta_source_parts(source.file, op)
    return {"kind": "installed"}


def _meta_source_parts(file: str, op: str) -> dict[str, Any] | None:
    """Which function the file registers for OP and which of the file's helpers come with it (read from its
    syntax, as ``target.source_kernel`` does); their bodies are deps. A file that registers none of OP is the
    installed torch's kernel, as in the gate."""
    from ..kernel.registrations import find_registration, plain_helpers

    tree = _parsed(os.path.realpath(file), K.file_digest(file))
    if tree is None:
        return None  # bad input: the run reports it
    reg = find_registration(tree, op)
    if reg is None:
        return {"kind": "installed", "unregistered_in": os.path.realpath(file)}
    return {"kind": "meta-source", "file": os.path.realpath(file), "registered": [reg.fdef.name, reg.fdef.lineno],
            "helpers": [h.name for h in plain_helpers(tree, reg.fdef)]}


@functools.lru_cache(maxsize=8)
def _parsed(file: str, digest: str) -> Any:
    """The syntax tree of a kernel file whose bytes have ``digest``: parsed once per run, however many of the
    gate's contracts look it up."""
    from ..errors import TargetError
    from ..kernel.registrations import read_python

    try:
        return read_python(file, "--meta-source")[1]  # within the limits on kernel files
    except TargetError:
        return None


def _import_parts(spec: str) -> list[str]:
    """An ``--import``ed module by its file's digest (it has been imported by then: its file is known)."""
    import sys

    path = Path(spec)
    if spec.endswith(".py") or path.is_file():
        return [spec, K.file_digest(path)]
    module = sys.modules.get(spec)
    file = getattr(module, "__file__", None)
    return [spec, K.file_digest(file) if file else "-"]


def verify_lookup(key_parts: dict[str, Any]) -> Hit | None:
    """A stored ``(Contract, Report)`` for these key parts (the contract too: binding its cases again would
    cost more than the rest of a hit), or None."""
    from ..contract.model import Contract
    from ..result.report import Report

    hit = lookup("verify", key_parts)
    if hit is None or not isinstance(hit.value, tuple) or len(hit.value) != 2:
        return None
    contract, report = hit.value
    return hit if isinstance(contract, Contract) and isinstance(report, Report) else None


def verify_store(key_parts: dict[str, Any], contract: Any, kernel: Any, report: Any) -> bool:
    """Store a verify ``Report`` and its contract (before anything adds to its ``extra``), with the kernel's dependencies. A
    run whose kernel's helpers cannot all be fingerprinted (the walk's bound) is not stored, nor an
    inconclusive one; errors (exit 2 and 4) never reach here."""
    from ..contract import suppressions
    from ..findings import Verdict

    if report.verdict == Verdict.INCONCLUSIVE:  # a z3 timeout may not repeat: run it again next time
        return False
    fn = kernel_function(kernel)
    deps: tuple[K.Dep, ...] = ()
    if fn is not None:
        deps, complete = K.kernel_dependencies(fn)
        if not complete:
            return False
    shown = {os.path.realpath(v.location.file) for v in report.violations if v.location is not None}
    shown |= {os.path.realpath(loc.file) for loc, _ in kernel.caveats}
    if kernel.definition is not None:
        shown.add(os.path.realpath(kernel.definition.file))
    future = [s.expires for s in contract.suppressions if s.expires and not suppressions.expired(s)]
    value = (contract, replace(report, torch_version=str(report.torch_version), extra=dict(report.extra)))
    return store("verify", key_parts, K.unlocated(deps, shown), value, valid_until=min(future, default=None))


def kernel_function(kernel: Any) -> Any:
    """The Python function whose source is the kernel: the one ``--meta``/``--meta-source`` gave, or the
    installed torch's meta (or torch.library fake) function; None for a kernel written in C++."""
    if kernel.op is None:
        return kernel.fn
    from .._torch import core as C

    return C.kernel_function(kernel.op)
