"""The result cache: a result stored under a key, answered again while its key and dependencies hold, without
importing torch or z3. ``verify op`` and ``gate`` use it per contract; ``audit`` per op.

The trust model (docs/cache.md): an entry is data, never code, and it is authenticated.

- An entry is JSON read back by ``codec`` against the schema the caller names (a dataclass or TypedDict):
  nothing in it is imported or called. Anything unexpected is a miss, never an error.
- Each entry carries an HMAC-SHA256 over its kind, its key digest and its bytes, made with a secret kept
  outside the cache folder: ``$SHAPECHECK_CACHE_SECRET`` (a CI secret), else a per-user key file
  (``$XDG_CONFIG_HOME/shapecheck/cache-key``, created with mode 0600 on first use). An entry whose MAC does not
  verify is a miss: whoever can write the cache folder but not read the secret can delete entries, never
  forge one, move one to another key, or make a failing result pass.
- A cache folder (or key file) that other users can write is refused with a warning, as ssh refuses a key
  file others can read; the run goes on uncached.
- Every read is bounded and regular-file-only (``limits.read_bounded``): a FIFO, a device or a huge file is a
  miss.

API (every part torch-free; ``cache_key.kernel_dependencies`` needs the kernel's function object):

- ``key_parts`` is any JSON-able dict naming what the result depends on besides code. ``environment()`` is
  added by ``store`` and ``lookup``.
- ``deps``: ``Dep``s (``cache_key``) whose sources must still hold: the definitions the kernel reaches
  (``kernel_dependencies``) and every project file loaded when it ran (``loaded_files``).
- ``store(kind, key_parts, deps, value, valid_until=None)`` writes an entry atomically; ``value`` is data the
  codec writes (a dataclass of the result model, a TypedDict); False when it is not, or nothing can be written.
- ``lookup(kind, key_parts, schema, deps=None)`` -> ``Hit | None``: the value read back as ``schema``.

Entries live in ``$SHAPECHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/shapecheck``, else ``~/.cache/shapecheck``,
kept under ``$SHAPECHECK_CACHE_MAX_MB`` (default 256) by dropping the least recently used. ``SHAPECHECK_CACHE=0``
turns the cache off (the test suite does).
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import hmac
import json
import math
import os
import stat
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypedDict

from .. import codec
from .. import limits as L
from ..contract.spec import ContractInfo
from ..errors import UserError
from ..result.report import CacheNote, Report
from . import key as K
from .key import Dep as Dep  # noqa: F401 - the API: what store and lookup take as deps
from .key import kernel_dependencies as kernel_dependencies  # noqa: F401 - the API: (deps, complete)
from .key import loaded_files as loaded_files  # noqa: F401 - the API: the project's files, after a run

FORMAT = 2  # bump when the entry layout or the meaning of a stored value changes
DEFAULT_MAX_MB = 256
MAX_MB = 1 << 20  # a terabyte: the largest SHAPECHECK_CACHE_MAX_MB taken
ENTRY_BYTES = 32 << 20  # one entry (the SDPA-MPS contract's report: about 100 KB)
MIN_SECRET = 16  # characters of $SHAPECHECK_CACHE_SECRET
_MAGIC = b"shapecheck-cache-entry"
_FALSE = ("0", "false", "no", "off")
_warned: set[str] = set()


@dataclass(frozen=True)
class Hit:
    value: Any
    stored_at: str  # ISO time of the run that stored it
    key: str  # the entry's key digest

    def to_json(self) -> dict[str, Any]:
        return self.note().to_json()

    def note(self) -> CacheNote:
        """What a report answered from this entry says of it (``Report.cache``)."""
        return CacheNote(self.stored_at, self.key[:16])


# ---------------------------------------------------------------------------------------------------------
# Where, how large, with which secret


@dataclass(frozen=True)
class Settings:
    folder: Path  # the entries' folder (the cache directory's ``v<FORMAT>``)
    max_bytes: int
    secret: bytes


def enabled() -> bool:
    """Whether the cache is used: the environment allows it, its folder and secret can be trusted. Raises
    ``UserError`` for a malformed ``SHAPECHECK_CACHE_MAX_MB`` (call it before a run: bad input is exit 2)."""
    return settings() is not None


def settings() -> Settings | None:
    """The cache in force, or None: off (``SHAPECHECK_CACHE=0``), or refused with a warning on stderr (a
    folder others can write, no usable secret)."""
    if os.environ.get("SHAPECHECK_CACHE", "").strip().lower() in _FALSE:
        return None
    limit = max_bytes()
    folder = _trusted_folder(directory())
    if folder is None:
        return None
    secret = _secret(folder)
    return None if secret is None else Settings(folder, limit, secret)


def directory() -> Path:
    explicit = os.environ.get("SHAPECHECK_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "shapecheck"


def max_bytes() -> int:
    """``$SHAPECHECK_CACHE_MAX_MB`` in bytes (default 256 MB); ``UserError`` unless a number in [0, 2**20]."""
    raw = os.environ.get("SHAPECHECK_CACHE_MAX_MB", "").strip()
    if not raw:
        return DEFAULT_MAX_MB << 20
    try:
        mb = float(raw)
    except ValueError:
        mb = math.nan
    if not (math.isfinite(mb) and 0 <= mb <= MAX_MB):
        raise UserError(f"SHAPECHECK_CACHE_MAX_MB: expected a number of megabytes from 0 to {MAX_MB}, "
                        f"found {raw[:40]!r}")
    return int(mb * 2**20)


def key_file() -> Path:
    """The per-user secret: ``$XDG_CONFIG_HOME/shapecheck/cache-key`` (else ``~/.config/...``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "shapecheck" / "cache-key"


def _warn(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        print(f"shapecheck: warning: {message}; the result cache is not used", file=sys.stderr)


def _unsafe(st: os.stat_result, what: str, path: Path) -> str | None:
    """Why a folder or file cannot be trusted: owned by another user, or writable by others."""
    if hasattr(os, "getuid") and st.st_uid not in (os.getuid(), 0):
        return f"{what} {path} belongs to another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{what} {path} is writable by other users (mode {stat.S_IMODE(st.st_mode):o}): chmod go-w it"
    return None


def _trusted_folder(base: Path) -> Path | None:
    """The entries' folder under ``base``, created (mode 0700) when missing; None (warned) when ``base`` or it
    is not a folder of this user that others cannot write."""
    folder = base / f"v{FORMAT}"
    for path in (base, folder):
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = path.stat()
        except OSError as err:
            _warn(f"the cache folder {path} cannot be used ({err.strerror or err})")
            return None
        why = "is not a folder" if not stat.S_ISDIR(st.st_mode) else _unsafe(st, "the cache folder", path)
        if why is not None:
            _warn(why if why.startswith("the") else f"the cache folder {path} {why}")
            return None
    return folder


def _secret(folder: Path) -> bytes | None:
    """``$SHAPECHECK_CACHE_SECRET``, else the per-user key file (created when missing); None (warned) when
    neither can be trusted."""
    env = os.environ.get("SHAPECHECK_CACHE_SECRET")
    if env:
        if len(env) < MIN_SECRET:
            _warn(f"SHAPECHECK_CACHE_SECRET is shorter than {MIN_SECRET} characters")
            return None
        return env.encode("utf-8", "surrogateescape")
    path = key_file()
    try:
        inside = path.resolve().is_relative_to(folder.parent.resolve())
    except OSError:
        inside = True
    if inside:
        _warn(f"the key file {path} lies in the cache folder {folder.parent}: set XDG_CONFIG_HOME or "
              "SHAPECHECK_CACHE_SECRET")
        return None
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    except OSError as err:
        _warn(f"the key file {path} cannot be used ({err.strerror or err})")
        return None
    try:
        return _create_key(path)
    except OSError as err:
        _warn(f"the key file {path} cannot be created ({err.strerror or err})")
        return None


def _read_key(path: Path) -> bytes | None:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    try:
        st = os.fstat(fd)
        why = "is not a regular file" if not stat.S_ISREG(st.st_mode) else _unsafe(st, "the key file", path)
        if why is None and st.st_mode & (stat.S_IRGRP | stat.S_IROTH):
            why = f"the key file {path} is readable by other users (mode {stat.S_IMODE(st.st_mode):o}): chmod 600 it"
        data = os.read(fd, 4097) if why is None else b""
    finally:
        os.close(fd)
    if why is None and not (MIN_SECRET <= len(data.strip()) <= 4096):
        why = f"the key file {path} does not hold a key of {MIN_SECRET} to 4096 bytes"
    if why is not None:
        _warn(why if why.startswith("the") else f"the key file {path} {why}")
        return None
    return data.strip()


def _create_key(path: Path) -> bytes | None:
    import secrets

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = secrets.token_hex(32).encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:  # another run created it first
        return _read_key(path)
    with os.fdopen(fd, "wb") as f:
        f.write(key + b"\n")
    return key


# ---------------------------------------------------------------------------------------------------------
# Store and lookup


def key_digest(kind: str, key_parts: dict[str, Any]) -> str:
    """The entry's name: sha256 of the kind, the key parts and the environment, as canonical JSON."""
    doc = {"format": FORMAT, "kind": kind, "key": key_parts, "env": K.environment()}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def _mac(secret: bytes, kind: str, digest: str, body: bytes) -> str:
    return hmac.new(secret, b"%s\0%s\0%s\0" % (_MAGIC, kind.encode(), digest.encode()) + body, hashlib.sha256).hexdigest()


class _Header(TypedDict):
    kind: str
    key: str
    deps: list[K.Dep]
    files: dict[str, str]
    valid_until: str | None
    stored_at: str


def store(kind: str, key_parts: dict[str, Any], deps: tuple[K.Dep, ...], value: Any, schema: Any, *,
          valid_until: str | None = None) -> bool:
    """Write an entry; False when the cache is off, ``value`` is not data the codec writes and reads back as
    ``schema``, a dependency's file cannot be read, or the cache cannot be written (none is an error: the
    run's result stands)."""
    cfg = settings()
    if cfg is None:
        return False
    files = {d.file: K.file_digest(d.file) for d in deps}
    if "-" in files.values():
        return False  # a dependency that cannot be fingerprinted: the entry could never be checked
    header = {"kind": kind, "key": _canonical(key_parts), "deps": codec.encode(tuple(deps)), "files": files,
              "valid_until": valid_until, "stored_at": datetime.datetime.now().isoformat(timespec="seconds")}
    try:
        encoded = codec.encode(value)
        codec.decode(schema, encoded)  # only what a lookup reads back is stored
        body = json.dumps({**header, "value": encoded}, allow_nan=False,  # dict order kept: it is shown
                          separators=(",", ":")).encode()
    except (TypeError, ValueError, RecursionError):
        return False
    digest = key_digest(kind, key_parts)
    data = b"%s %d %s\n" % (_MAGIC, FORMAT, _mac(cfg.secret, kind, digest, body).encode()) + body
    if len(data) > ENTRY_BYTES:
        return False
    return _write(cfg, _path(cfg, kind, digest), data)


def _write(cfg: Settings, path: Path, data: bytes) -> bool:
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=cfg.folder, prefix=".tmp-", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)  # atomic: a reader sees the old entry or the new one, never half of one
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _evict(cfg.folder, cfg.max_bytes)
    except OSError:
        return False
    return True


def lookup(kind: str, key_parts: dict[str, Any], schema: Any, deps: tuple[K.Dep, ...] | None = None, *,
           today: str | None = None) -> Hit | None:
    """The stored value, read back as ``schema``, when the entry exists, is a regular file within the size
    limit, its MAC verifies, it is for exactly these key parts, it has not passed its ``valid_until`` day and
    its dependencies hold; else None. With ``deps`` (the audit, which has the kernel's functions) the stored
    definitions must also equal them."""
    cfg = settings()
    if cfg is None:
        return None
    digest = key_digest(kind, key_parts)
    path = _path(cfg, kind, digest)
    try:
        data = L.read_bounded(path, ENTRY_BYTES)
    except (OSError, L.TooLarge):
        return None
    first, _, body = data.partition(b"\n")
    parts = first.split(b" ")
    if len(parts) != 3 or parts[0] != _MAGIC or parts[1] != str(FORMAT).encode() \
            or not hmac.compare_digest(parts[2], _mac(cfg.secret, kind, digest, body).encode()):
        return None  # not an entry this user's secret made for this key: a miss
    try:
        doc = json.loads(body)
        if not isinstance(doc, dict) or "value" not in doc:
            return None
        value = codec.decode(schema, doc.pop("value"))
        header: _Header = codec.decode(_Header, doc)
    except (ValueError, RecursionError):  # codec.DecodeError and JSON errors are ValueErrors
        return None
    if header["kind"] != kind or header["key"] != _canonical(key_parts):
        return None
    until = header["valid_until"]
    if until is not None and (today or datetime.date.today().isoformat()) > until:
        return None
    stored = tuple(header["deps"])
    if deps is not None and tuple(d for d in deps if d.qualname != K.WHOLE_FILE) != \
            tuple(d for d in stored if d.qualname != K.WHOLE_FILE):
        return None
    if not K.deps_hold(stored, header["files"]):
        return None
    try:
        os.utime(path)  # least recently used goes first
    except OSError:
        pass
    return Hit(value, header["stored_at"], digest)


def _canonical(key_parts: dict[str, Any]) -> str:
    return json.dumps(key_parts, sort_keys=True, default=str)


def _path(cfg: Settings, kind: str, digest: str) -> Path:
    return cfg.folder / f"{kind}-{digest}.entry"


def _evict(folder: Path, limit: int) -> None:
    entries = []
    with os.scandir(folder) as it:
        for e in it:
            if not e.name.endswith(".entry"):
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            entries.append((st.st_mtime, st.st_size, Path(e.path)))
    total = sum(size for _, size, _ in entries)
    for _, size, p in sorted(entries, key=lambda e: e[0]):
        if total <= limit:
            break
        p.unlink(missing_ok=True)
        total -= size


# ---------------------------------------------------------------------------------------------------------
# verify and gate: one entry per (contract, kernel source, options), holding verify's Report


def verify_key(op: str, contract_file: str | None, source: Any, imports: tuple[str, ...],
               options: dict[str, Any], *, cwd: Path | None = None,
               installed_fallback: bool = False) -> dict[str, Any] | None:
    """The key parts of verifying OP against a contract with a kernel source (``sources.KernelSource``) and
    the result-changing ``options`` (``--jobs`` is not one: reports do not depend on it); None when the run
    is not cached (``--explore`` and ``--confirm-export`` results hold torch-side objects), when the cache is
    off, or when the op, contract or kernel file cannot be read (the run itself then reports the error).
    The contract is found as the run finds it (``config.contract_search``).

    A ``--meta-source`` file that registers no kernel for OP: the gate checks the installed torch's kernel
    (``installed_fallback``), and its key is the installed kernel's, shared with a gate without the file and
    with any other file that leaves the op alone; ``verify op`` refuses such a file, so its key is None."""
    from ..contract.find import contract_search, find_contract, normalize_op
    from ..kernel.sources import Installed

    if options.get("explore") or options.get("confirm_export") or not enabled():
        return None
    try:
        name = normalize_op(op)
    except ValueError:
        return None
    base = Path(cwd or ".")
    if contract_file is None:  # as target.load_op_contract finds it
        found = find_contract(name, contract_search(base.resolve()))
        if found is None:
            return None
        contract_file = str(found)
    digest = K.file_digest(base / contract_file, L.CONTRACT_BYTES)
    src = _source_parts(source, name)
    if src is None or digest == "-":
        return None
    if src == INSTALLED_PARTS and not installed_fallback and type(source) is not Installed:
        return None
    return {"op": name, "contract": contract_file, "contract_path": os.path.realpath(base / contract_file),
            "contract_digest": digest, "source": src, "imports": [_import_parts(i) for i in imports],
            "options": options}


#: the source parts of the installed torch's kernel
INSTALLED_PARTS: dict[str, Any] = {"kind": "installed"}


def _source_parts(source: Any, op: str) -> dict[str, Any] | None:
    """What the result depends on in the kernel's source; None (not cached) for a kind of source this
    function does not know: a new kind is never taken for the installed torch's kernel (a stale hit)."""
    from ..kernel.sources import Function, Installed, MetaSource

    if isinstance(source, Function):  # the whole file runs when it is imported
        digest = K.file_digest(source.file)
        return None if digest == "-" else {"kind": "meta", "file": os.path.realpath(source.file), "digest": digest,
                                           "function": source.name}
    if isinstance(source, MetaSource):  # only the registered function and its helpers run
        return _meta_source_parts(source.file, op)
    if type(source) is Installed:
        return dict(INSTALLED_PARTS)
    return None


def _meta_source_parts(file: str, op: str) -> dict[str, Any] | None:
    """Which function the file registers for OP and which of the file's helpers come with it (read from its
    syntax, as ``target.source_kernel`` does), each with the digest of its source lines (decorators included).
    A file that registers none of OP is the installed torch's kernel, as in the gate: the installed kernel's
    parts (the file's kernels are never installed for the other ops a gate checks)."""
    from ..kernel.registrations import find_registration, plain_helpers

    parsed = _parsed(os.path.realpath(file), K.file_digest(file))
    if parsed is None:
        return None  # bad input: the run reports it
    lines, tree = parsed
    reg = find_registration(tree, op)
    if reg is None:
        return dict(INSTALLED_PARTS)
    return {"kind": "meta-source", "file": os.path.realpath(file), "registered": [reg.fdef.name, reg.fdef.lineno],
            "body": _segment_digest(lines, reg.fdef),
            "helpers": [[h.name, _segment_digest(lines, h)] for h in plain_helpers(tree, reg.fdef)]}


def _segment_digest(lines: list[str], node: Any) -> str:
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return hashlib.sha256("".join(lines[start - 1:node.end_lineno]).encode("utf-8", "surrogateescape")).hexdigest()


@functools.lru_cache(maxsize=8)
def _parsed(file: str, digest: str) -> tuple[list[str], Any] | None:
    """The lines and syntax tree of a kernel file whose bytes have ``digest``: parsed once per run, however
    many of the gate's contracts look it up."""
    from ..errors import TargetError
    from ..kernel.registrations import read_python

    if digest == "-":
        return None
    try:
        source, tree = read_python(file, "--meta-source")  # within the limits on kernel files
    except TargetError:
        return None
    return source.splitlines(keepends=True), tree


def _import_parts(spec: str) -> list[str]:
    """An ``--import``ed module by its file's digest (it has been imported by then: its file is known)."""
    path = Path(spec)
    if spec.endswith(".py") or path.is_file():
        return [spec, K.file_digest(path)]
    module = sys.modules.get(spec)
    file = getattr(module, "__file__", None)
    return [spec, K.file_digest(file) if file else "-"]


@dataclass(frozen=True)
class VerifyEntry:
    """What a verify entry holds: the contract as reports need it, and the report."""

    contract: ContractInfo
    report: Report


def verify_lookup(key_parts: dict[str, Any]) -> Hit | None:
    """A stored ``(ContractInfo, Report)`` for these key parts, or None."""
    hit = lookup("verify", key_parts, VerifyEntry)
    return None if hit is None else replace(hit, value=(hit.value.contract, hit.value.report))


def verify_store(key_parts: dict[str, Any], contract: Any, kernel: Any, report: Any) -> bool:
    """Store a verify ``Report`` and its contract's ``info`` (before anything adds to its ``extra``), with the
    kernel's dependencies: the definitions it reaches and every project file loaded when it ran. A run whose
    kernel's helpers cannot all be fingerprinted (the walk's bound) is not stored, nor an inconclusive one;
    errors (exit 2, and 4 outside a case) never reach here; a case's internal error (SC023) is not stored."""
    from ..contract import suppressions
    from ..findings import Verdict

    if report.verdict in (Verdict.INCONCLUSIVE, Verdict.ERROR):  # a timeout, a bug: run it again next time
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
    value = VerifyEntry(contract.info, replace(report, torch_version=str(report.torch_version), cache=None, error=""))
    return store("verify", key_parts, K.unlocated(deps, shown) + K.loaded_files(), value, VerifyEntry,
                 valid_until=min(future, default=None))


def kernel_function(kernel: Any) -> Any:
    """The Python function whose source is the kernel: the one ``--meta``/``--meta-source`` gave, or the function
    the installed torch runs for the op (``_torch.kernels.resolve_kernel``: a meta registration, a decomposition,
    a FakeTensor rule, a torch.library fake); None for a kernel written in C++."""
    if kernel.function is not None:
        return kernel.function
    return kernel.fn if kernel.op is None else None
