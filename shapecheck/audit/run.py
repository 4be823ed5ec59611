"""``shapecheck audit``: every op whose meta/fake kernel runs under FakeTensorMode, without contracts.

``audit_op`` is a pure function of (op, kernel source, torch version, options) and returns a JSON-serialisable
record (``record`` keys below), so that a result cache can store it. ``run_audit`` enumerates the ops, splits
them by ``--shard``, audits them in ``--jobs`` processes and ranks the findings.

A record: ``op``, ``kernel`` (its name), ``definition`` (file:line of the kernel function, when Python),
``inputs`` (``schema`` or ``opinfo``), ``example`` (the call), ``status`` (``clean``, ``relation-only``,
``findings``, ``inconclusive``, ``no-inputs``, ``not-run``), ``findings``, ``requires``, ``notes``, ``traces``,
``paths`` (the first finished traces: their region and output shapes), ``seconds``.
"""

from __future__ import annotations

import fnmatch
import functools
import time
from dataclasses import dataclass, replace
from typing import Any, NotRequired, TypedDict

from ..errors import UserError
from ..options import internal, result_options
from .classify import RANK

#: the order of a ranked report: a finding's class first (most likely to break torch.export first), then op
STATUSES = ("findings", "relation-only", "clean", "inconclusive", "no-inputs", "not-run")


#: ops whose kernel kills the process under FakeTensorMode with schema-derived inputs (measured on torch 2.13.0):
#: never called, each reported as not run with the reason
CRASHES = {"aten::_thnn_differentiable_gru_cell_backward.default": "segfaults (torch 2.13.0) on schema-derived "
                                                                     "inputs under FakeTensorMode: not called"}


class AuditLoc(TypedDict):
    file: str
    line: int
    function: str
    text: str


#: one finding of an op's record ("class" is a keyword, hence the functional form)
AuditFinding = TypedDict("AuditFinding", {"code": str, "class": str, "expr": str, "location": AuditLoc | None,
                                          "counterexample": dict[str, int], "witness": dict[str, int] | None,
                                          "message": str})


class AuditRequire(TypedDict):
    expr: str
    location: AuditLoc | None
    evidence: str


class AuditPath(TypedDict):
    when: str
    outputs: list[str | None]


class AuditRecord(TypedDict):
    """One op's record, as the result cache reads it back (the module docstring says what each key means)."""

    op: str
    kernel: str
    definition: AuditLoc | None
    inputs: str | None
    example: str
    status: str
    findings: list[AuditFinding]
    requires: list[AuditRequire]
    notes: list[str]
    traces: int
    paths: NotRequired[list[AuditPath]]
    seconds: float


@dataclass(frozen=True)
class AuditOptions:
    """The audit's options; the cache key holds those that change a record (``options.result_options``)."""

    max_traces: int = 12
    seconds_per_op: float | None = internal(True, None)  # a wall-clock bound makes a record depend on the load
    timeout_ms: int = 2000
    cache: bool = True  # answer an op from the result cache while its kernel, torch and shapecheck are unchanged


_REGISTERED: dict[str, frozenset[str]] = {}  # --import spec -> the op names importing it registered


@dataclass(frozen=True)
class _Item:
    id: str  # the op name (parallel.map_cases hands out items by ``id``)


def op_name(name: str) -> str:
    """``ns::name.overload`` with the default overload spelled out."""
    return name if "." in name.partition("::")[2] else f"{name}.default"


def enumerate_ops(patterns: tuple[str, ...], namespaces: set[str], extra: set[str]) -> list[str]:
    """Every functional overload in ``namespaces`` (plus ``extra`` names) with a meta/fake kernel reachable
    under FakeTensorMode (a Python meta registration or decomposition, a fake kernel, a C++ Meta or composite
    kernel), that matches one of ``patterns`` (all when none), sorted."""
    from .._torch import audit as CA
    from .._torch import core as C
    from .._torch import kernels as K

    out = []
    for raw in CA.all_op_names():
        ns = raw.partition("::")[0]
        if ns not in namespaces and raw not in extra:
            continue
        name = op_name(raw)
        if patterns and not any(fnmatch.fnmatchcase(n, p) for n in (name, raw) for p in patterns):
            continue
        overload = name.partition("::")[2].partition(".")[2]
        if overload == "out" or overload.endswith("_out") or "out_" in overload:
            continue
        try:
            op = C.resolve_op(raw)
        except Exception:  # noqa: BLE001 - a name torch lists but cannot resolve: not an op to audit
            continue
        if CA.is_functional(op) and K.has_fake_kernel(op):
            out.append(name)
    return sorted(set(out))


def _adapted(kernel: Any) -> Any:
    """A kernel with a Python signature (``--meta-source``) called with the schema's arguments: keywords
    and trailing positionals it does not take are left out (they are at their schema default)."""
    sig = kernel.signature
    if sig is None or kernel.via_op or any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        return kernel  # a candidate called through the op takes the op's arguments
    params = sig.parameters
    positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params.values())
    var_positional = any(p.kind == p.VAR_POSITIONAL for p in params.values())
    fn = kernel.fn

    @functools.wraps(fn)  # __wrapped__: the cache's walk reaches the file's function through this wrapper
    def call(*args: Any, **kwargs: Any) -> Any:
        args = args if var_positional else args[:positional]
        return fn(*args, **{k: v for k, v in kwargs.items() if k in params})

    return replace(kernel, fn=call)


def audit_kernel(name: str, source: Any) -> Any:
    """The kernel under audit: the file's function where ``--meta-source`` registers one for the op, else
    the installed torch's (a fake kernel for a custom op)."""
    from ..kernel.load import installed_kernel, load_kernel

    if source is not None and _provides(source, name):
        return _adapted(load_kernel(source, name))
    return installed_kernel(name)


def _provides(source: Any, name: str) -> bool:
    """Whether ``source`` has a kernel for the op; a ``--meta-source`` file is parsed once, not once per op."""
    from ..kernel.registrations import split_op
    from ..kernel.sources import MetaSource

    if not isinstance(source, MetaSource):
        return source.provides(name)
    ns, packet, overload = split_op(name)
    return any(ref.matches(ns, packet, overload) for ref in _registered(source.file))


@functools.cache
def _registered(file: str) -> tuple:
    from ..kernel.load import read_python
    from ..kernel.registrations import registrations

    return tuple(ref for reg in registrations(read_python(file, "--meta-source")[1]) for ref in reg.ops)


def audit_op(name: str, source: Any = None, options: AuditOptions = AuditOptions()) -> dict[str, Any]:
    """One op's record (see the module docstring). Never raises for a kernel's failure: a failure of
    shapecheck itself is a ``not-run`` record with the error."""
    from .._torch import core as C
    from .explore import AuditExplorer
    from .inputs import from_opinfo, from_schema

    start = time.monotonic()
    rec: dict[str, Any] = {"op": name, "kernel": "", "definition": None, "inputs": None, "example": "",
                           "status": "not-run", "findings": [], "requires": [], "notes": [], "traces": 0}
    if name in CRASHES:
        rec["notes"].append(CRASHES[name])
        return _timed(rec, start)
    try:
        kernel = audit_kernel(name, source)
        cached = _cache_key(name, kernel, options)
        hit = _lookup(cached)
        if hit is not None:
            return hit
        rec["kernel"] = kernel.name
        rec["definition"] = _loc(kernel.definition)
        inputs = from_opinfo(name, kernel.fn) or from_schema(name, C.resolve_op(name), kernel.fn)
        if inputs is None:
            rec["status"] = "no-inputs"
            rec["notes"].append("no OpInfo sample or schema-derived example that the kernel accepts at static sizes")
            return _timed(rec, start)
        rec["inputs"], rec["example"] = inputs.origin, inputs.describe()
        st = AuditExplorer(kernel, inputs, options.max_traces, options.seconds_per_op, options.timeout_ms).run()
    except Exception as err:  # noqa: BLE001 - shapecheck's own failure on this op: reported, never silent
        rec["notes"].append(f"not run: {type(err).__name__}: {str(err)[:300]}")
        return _timed(rec, start)
    rec["traces"] = st.traces
    rec["paths"] = st.paths
    rec["findings"] = [{"code": f.code, "class": f.cls, "expr": f.expr, "location": _loc(f.loc),
                        "counterexample": f.counterexample, "witness": f.witness, "message": f.message}
                       for f in sorted(st.findings, key=lambda f: (RANK[f.cls], f.expr))]
    rec["requires"] = [{"expr": e, "location": _loc(loc), "evidence": ev} for e, loc, ev in st.requires]
    rec["notes"] = list(st.notes)
    rec["status"] = "findings" if st.findings else "inconclusive" if st.notes else \
        "relation-only" if st.requires else "clean"
    rec = _timed(rec, start)
    if cached is not None and not any(n.startswith("not run") for n in rec["notes"]):
        from ..cache import store as cache

        cache.store("audit", cached[0], cached[1] + cache.loaded_files(), rec, AuditRecord)
    return rec


def _cache_key(name: str, kernel: Any, options: AuditOptions) -> tuple[dict[str, Any], tuple] | None:
    """(key parts, kernel dependencies) of one op's record, or None when it is not cached: the cache is off,
    or the walk from the kernel's function could not fingerprint everything it reaches. The key holds the
    op, the kernel's name (installed, a --meta-source function, a custom op's fake), the options and whether
    torch's OpInfo samples load (they change the inputs); ``cache`` adds torch's and shapecheck's versions and
    source. A C++ kernel has no Python function: torch's version is its fingerprint."""
    from ..cache import store as cache

    if not (options.cache and cache.enabled()):
        return None
    from .._torch import audit as CA

    fn = cache.kernel_function(kernel)
    deps, complete = cache.kernel_dependencies(fn) if fn is not None else ((), True)
    if not complete or (fn is not None and not deps):  # a Python kernel whose source the walk did not see
        return None
    parts = {"op": name, "kernel": kernel.name, **result_options(options), "opinfo": CA.opinfo_db() is not None}
    return parts, deps


def _lookup(cached: tuple[dict[str, Any], tuple] | None) -> dict[str, Any] | None:
    if cached is None:
        return None
    from ..cache import store as cache

    hit = cache.lookup("audit", cached[0], AuditRecord, cached[1])
    if hit is None:
        return None
    return {**hit.value, "cached": True}


def _timed(rec: dict[str, Any], start: float) -> dict[str, Any]:
    rec["seconds"] = round(time.monotonic() - start, 3)
    return rec


def _loc(loc: Any) -> dict[str, Any] | None:
    return None if loc is None else {"file": loc.file, "line": loc.line, "function": loc.function, "text": loc.text}


@dataclass
class AuditRun:
    records: list[dict[str, Any]]
    total_ops: int
    shard: tuple[int, int]
    seconds: float
    torch_version: str
    baseline: str | None = None
    accepted: int = 0  # findings the baseline accepted

    def findings(self, *, active: bool = True) -> list[tuple[dict, dict]]:
        """(record, finding) pairs, ranked: class first, then op and line."""
        out = [(r, f) for r in self.records for f in r["findings"] if not (active and f.get("baselined"))]
        return sorted(out, key=lambda rf: (RANK[rf[1]["class"]], rf[0]["op"], rf[1]["expr"]))

    @property
    def exit_code(self) -> int:
        return 1 if self.findings() else 0

    def counts(self) -> dict[str, Any]:
        by_class: dict[str, int] = {}
        for _, f in self.findings(active=False):
            by_class[f["class"]] = by_class.get(f["class"], 0) + 1
        statuses = {s.replace("-", "_"): sum(r["status"] == s for r in self.records) for s in STATUSES}
        statuses["with_findings"] = statuses.pop("findings")
        return {"ops": len(self.records), **statuses, "findings": sum(by_class.values()),
                "new_findings": len(self.findings()), "baselined": self.accepted, "by_class": by_class}


def run_audit(patterns: tuple[str, ...] = (), imports: tuple[str, ...] = (), source: Any = None,
              jobs: int = 0, shard: tuple[int, int] = (1, 1), options: AuditOptions = AuditOptions()) -> AuditRun:
    """Audit every matching op (the installed torch's aten ops, and every op the imports register)."""
    from .._torch import audit as CA
    from .._torch import core as C
    from ..kernel.load import import_modules
    from ..trace.parallel import map_cases

    if options.cache:  # checked once, before any op: a malformed setting is bad input (exit 2)
        from ..cache import store as cache

        options = replace(options, cache=cache.enabled())
    start = time.monotonic()
    extra: set[str] = set()
    for spec in imports:  # the ops each import registers (remembered: a module is imported once per process)
        if spec not in _REGISTERED:
            before = set(CA.all_op_names())
            import_modules([spec])
            _REGISTERED[spec] = frozenset(set(CA.all_op_names()) - before)
        extra |= _REGISTERED[spec]
    namespaces = {"aten"} | {n.partition("::")[0] for n in extra}
    names = enumerate_ops(patterns, namespaces, extra)
    if patterns and not names:  # else a pass of 0 ops
        raise UserError(f"--ops {' '.join(patterns)}: no op with a meta or fake kernel matches (patterns match "
                        "ns::name.overload, e.g. 'aten::cross*'; pass --import for a library's ops)")
    k, n = shard
    mine = [x for i, x in enumerate(names) if i % n == k - 1]
    done = map_cases(lambda item: audit_op(item.id, source, options), [_Item(x) for x in mine], jobs)
    records = [done.get(x) or audit_op(x, source, options) for x in mine]
    return AuditRun(records, len(names), shard, time.monotonic() - start, C.TORCH_VERSION)

