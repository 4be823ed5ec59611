"""``shapecheck audit``: every op whose meta/fake kernel runs under FakeTensorMode, without contracts.

``audit_op`` is a pure function of (op, kernel source, torch version, options) and returns a JSON-serialisable
record (``record`` keys below), so that a result cache can store it. ``run_audit`` enumerates the ops, splits
them by ``--shard``, audits them in ``--jobs`` processes and ranks the findings.

A record: ``op``, ``kernel`` (its name), ``kernel_kind`` (``python`` or ``c++``), ``definition`` (file:line of
the kernel function, when Python), ``inputs`` (``schema``: found by search; ``opinfo``; ``samples``: the project's
hook), ``example`` (the call), ``status`` (``clean``, ``relation-only``, ``findings``, ``inconclusive``,
``no-inputs``, ``not-run``), ``partial`` (explored only in part, findings or not: untraced once its findings are
accepted), ``findings``, ``requires``, ``notes``, ``traces``, ``finished`` (the traces that returned), ``paths`` (the first finished
traces: their region and output shapes), ``eager`` (the comparison with the eager kernel: device, whether it
accepted the inputs, points run and compared, evidence), ``variants`` (the argument combinations beyond the
first inputs, each with what happened), ``other_mode`` (where plain FakeTensorMode runs another kernel than
torch.export: that kernel compared with the eager kernel, its findings counted with --both-modes), ``seconds``.
"""

from __future__ import annotations

import copy
import fnmatch
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import UserError, said
from ..findings import Verdict
from ..options import internal, result_options
from .classify import RANK
from .compared import only_uncompared, valid_call_traced, was_compared
from .explore import STOPPED
from .record import AuditRecord
from .scope import aten_in_scope, enumerate_all, enumerate_ops, imported_ops, op_name  # noqa: F401 - the names callers import from here

#: the order of a ranked report: a finding's class first (most likely to break torch.export first), then op
STATUSES = ("findings", "relation-only", "clean", "inconclusive", "no-inputs", "not-run")


#: ops whose kernel kills the process under FakeTensorMode with schema-derived inputs (measured on torch 2.13.0):
#: never called, each reported as not run with the reason
CRASHES = {"aten::_thnn_differentiable_gru_cell_backward.default": "segfaults (torch 2.13.0) on schema-derived "
                                                                     "inputs under FakeTensorMode: not called"}


@dataclass(frozen=True)
class AuditOptions:
    """The audit's options; the cache key holds those that change a record (``options.result_options``)."""

    max_traces: int = 12
    seconds_per_op: float | None = internal(True, None)  # a wall-clock bound makes a record depend on the load
    timeout_ms: int = 2000
    cache: bool = True  # answer an op from the result cache while its kernel, torch and shapecheck are unchanged
    device: str = "cpu"  # the eager kernel's device for the differential check
    differential: bool = True  # run the eager kernel beside the fake (off: the guards only)
    variants: int = 6  # argument combinations beyond the first inputs, each traced and compared
    samples: str | None = None  # "pkg.module:function": the project's sample calls per op
    both_modes: bool = False  # plain FakeTensorMode's own kernel (where it is not export's): its findings count
    op_timeout: float = 300.0  # seconds one op's worker may take before it is stopped (0: no bound; not cached)


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
    try:
        return installed_kernel(name)
    except Exception:  # noqa: BLE001 - a kernel installed_kernel does not list (FakeTensor's rule, a CEA kernel)
        return _reached_kernel(name)


def _reached_kernel(name: str) -> Any:
    """The op as FakeTensorMode runs it, for an op whose kernel ``installed_kernel`` does not name: a FakeTensor
    rule, or a C++ kernel that runs on meta tensors (a stand-in until _torch resolves kernels, issue 22)."""
    from .._torch import audit as CA
    from .._torch import core as C
    from ..kernel.sources import Kernel

    op = C.resolve_op(name)
    label, fn = CA.kernel_origin(op)
    from .._torch.kernels import library_meta_file

    files = frozenset(f for f in [C.function_file(fn) if fn is not None else library_meta_file(op)] if f)

    def call(*args: Any, **kwargs: Any) -> Any:
        return op(*args, **kwargs)

    return Kernel(kernel_of(label, name), call, files, None, op, None)


def kernel_of(label: str, name: str) -> str:
    """``C++ Meta kernel of aten::x.default``; a label's note in parentheses stays last."""
    head, paren, rest = label.partition(" (")
    return f"{head} of {name}{paren}{rest}"


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


def _lacking(source: Any, patterns: tuple[str, ...]) -> list[dict[str, Any]]:
    """A not-run record for each op a --meta-source file registers a function for that this torch lacks (a PR's
    new op, or a name from another release): nothing of it can be traced here, so never a pass."""
    from .._torch import core as C
    from ..errors import NotDispatchedOpError, UnknownOpError
    from ..kernel.sources import MetaSource

    if not isinstance(source, MetaSource):
        return []
    out: dict[str, dict[str, Any]] = {}
    for ref in _registered(source.file):
        name = f"{ref.namespace}::{ref.packet}" + (f".{ref.overload}" if ref.overload else "")
        if patterns and not any(fnmatch.fnmatchcase(name, p) for p in patterns):
            continue
        try:
            C.resolve_op(f"{ref.namespace}::{ref.packet}.{ref.overload or 'default'}")
        except NotDispatchedOpError:
            continue
        except UnknownOpError as err:
            if ref.overload is None and "has no operator" not in str(err):
                continue  # a whole packet (every overload) that has no .default
            out[name] = {**_blank(name), "seconds": 0.0, "notes": [
                f"not run: {source.file} registers a function for {name}, an op torch {C.TORCH_VERSION} lacks: "
                "nothing of it can be traced here"]}
    return list(out.values())


def _blank(name: str) -> dict[str, Any]:
    """The record of an op before (or without) its run: not run, nothing found."""
    return {"op": name, "kernel": "", "kernel_kind": "", "definition": None, "inputs": None, "example": "",
            "status": "not-run", "findings": [], "requires": [], "notes": [], "traces": 0}


def audit_op(name: str, source: Any = None, options: AuditOptions = AuditOptions(),
             checkpoint: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """One op's record (see the module docstring). Never raises for a kernel's failure: a failure of
    shapecheck itself is a ``not-run`` record with the error. ``checkpoint``: ``_fill``'s."""
    start = time.monotonic()
    rec = _blank(name)
    if name in CRASHES:
        rec["notes"].append(CRASHES[name])
        return _timed(rec, start)
    try:
        kernel = audit_kernel(name, source)
        cached = _cache_key(name, kernel, options)
        hit = _lookup(cached)
        if hit is not None:
            return hit
        from .._torch.core import numpy_absence_known, quiet_torch_logging
        from .inputs import remembered

        with quiet_torch_logging(), numpy_absence_known(), remembered():  # once per op, not per call (as verify's
            _fill(rec, name, kernel, options, checkpoint)  # run has them); the fake's answers kept for the op
    except Exception as err:  # noqa: BLE001 - shapecheck's own failure on this op (exit 4), or a kernel given
        # that cannot be made (a --meta-source function that fails to define: bad input): reported, never silent
        rec["notes"].append(f"not run: {type(err).__name__}: {said(err)[:300]}")
        rec["failure"] = BAD_INPUT if isinstance(err, UserError) else INTERNAL
        if rec["failure"] == INTERNAL:  # in the JSON report, and on stderr with SHAPECHECK_DEBUG=1 or --debug
            import traceback

            rec["traceback"] = "".join(traceback.format_exception(err))
        return _timed(rec, start)
    rec = _timed(rec, start)
    if cached is not None and not any(n.startswith("not run") for n in rec["notes"]) and _repeatable(rec):
        from ..cache import store as cache

        cache.store("audit", cached[0], cached[1] + cache.loaded_files(), rec, AuditRecord)
    return rec


def _repeatable(rec: dict[str, Any]) -> bool:
    """Whether the record says what the next run would say again: not where a time-out cut it short (an eager
    kernel that builds its C++ extension on its first call ran past its limit, hunt 40's optimum-quanto, whose
    next run compares it; z3 on a loaded machine), which the result cache must not replay."""
    from .eager import TIMED_OUT

    said_ = " ".join([*map(str, rec.get("notes") or []), str((rec.get("eager") or {}).get("evidence", "")),
                      *(str(v) for v in rec.get("variants") or [])])
    return not any(w in said_ for w in (TIMED_OUT, "z3 could not", "timed out"))


def _crashed(name: str, why: str, partial: dict[str, Any] | None = None) -> dict[str, Any]:
    """The record of an op whose audit killed its worker process: what was done before the stage that did
    (``partial``, from ``_fill``'s checkpoint), never a pass (inconclusive, or not run where nothing was traced);
    else not run, with the signal."""
    if partial is not None:
        rec = {k: v for k, v in partial.items() if k != "stage"}
        rec["status"] = "findings" if rec["findings"] else "inconclusive" if rec["traces"] else "not-run"
        rec["partial"] = rec["status"] == "findings"  # its findings are not all there is: never passed by a baseline
        rec["notes"] = [*rec["notes"], f"not run: {partial['stage']} {why}" if rec["status"] == "not-run" else
                        f"stopped: {partial['stage']} {why}; what ran before it is kept"]
        return rec
    from .pool import STOPPED

    note = f"not run: the op {why}" if why == STOPPED else \
        f"not run: the op's fake (or its trace) {why}; the other ops were audited in a new process"
    return {"op": name, "kernel": "", "kernel_kind": "", "definition": None, "inputs": None, "example": "",
            "status": "not-run", "findings": [], "requires": [], "notes": [note],
            "traces": 0, "seconds": 0.0}


def _fill(rec: dict[str, Any], name: str, kernel: Any, options: AuditOptions,
          checkpoint: Callable[[dict[str, Any]], None] | None = None) -> None:
    """The record of one op from its run (``op.OpRun``): inputs, exploration, comparison, variants.
    ``checkpoint`` gets the record of what is done before each stage that may kill the process, with its
    ``"stage"`` (the supervisor keeps the last one: ``crashed``)."""
    from .._torch import audit as CA
    from .._torch import core as C
    from .op import OpRun

    op = C.resolve_op(name)
    label, fn = CA.kernel_origin(op)
    rec["kernel"] = kernel.name if kernel.definition is not None or "C++" not in label else kernel_of(label, name)
    rec["kernel_kind"] = "python" if kernel.definition is not None or fn is not None or "C++" not in label else "c++"
    rec["definition"] = _loc(kernel.definition)
    start = time.monotonic()

    def partial(out: Any, stage: str) -> None:
        if checkpoint is not None:
            done = copy.deepcopy(rec)
            _record(done, out, options)
            checkpoint({**_timed(done, start), "stage": stage})

    left_out: list[str] = []
    if options.samples and checkpoint is not None:  # a hook that kills the process is named, not the fake (hunt 64)
        checkpoint({**_timed(copy.deepcopy(rec), start), "stage": f"the samples hook {options.samples}"})
    given = given_inputs(name, kernel, options, left_out)
    _record(rec, OpRun(name, op, kernel, options, partial).run(given), options)
    rec["notes"] += left_out
    # which kernel torch runs where a --meta-source function is not it (verify's and gate's notes say the same)
    rec["notes"] = [*dict.fromkeys([*getattr(kernel, "notes", ()), *rec["notes"]])]
    caveats = getattr(kernel, "caveats", ())
    if caveats:  # what ran is not the file's kernel (a helper of the file's that runs as installed): never clean
        rec["notes"] += [f"not verified: {loc.file}:{loc.line}: {why}" for loc, why in caveats]
        rec["partial"] = True
        if rec["status"] in ("clean", "relation-only"):
            rec["status"] = "inconclusive"


def _record(rec: dict[str, Any], out: Any, options: AuditOptions) -> None:
    """``rec`` filled from an op's outcome (``op.OpOutcome``)."""
    rec["traces"], rec["finished"] = out.traces, out.finished
    rec["eager"] = out.eager or {"device": options.device, "status": "off" if not options.differential else "none",
                                 "points": 0, "compared": 0, "formula_points": 0, "crashes": 0, "evidence": ""}
    rec["variants"] = out.variants
    if out.inputs is not None:
        rec["inputs"], rec["example"] = out.inputs.origin, out.inputs.describe()
    st = out.audit
    rec["paths"] = st.paths if st is not None else []
    counted = out.other_findings if options.both_modes else []
    rec["findings"] = [_finding(f) for f in sorted(_unique(out.findings + counted), key=lambda f: (RANK[f.cls], f.expr))]
    rec["requires"] = [{"expr": e, "location": _loc(loc), "evidence": ev} for e, loc, ev in
                       (st.requires if st is not None else [])]
    rec["notes"] = [*(st.notes if st is not None else []), *out.notes]
    if out.other_mode is not None:
        rec["other_mode"] = {**out.other_mode, "counted": options.both_modes,
                             "findings": [_finding(f) for f in out.other_findings]}
        rec["notes"] += [f"{f.code} {f.message} (not counted: the kernel torch.export runs decides; --both-modes "
                         "counts it)" for f in out.other_findings if not options.both_modes]
    if out.no_fake:  # not traced, never a pass; counted in the coverage with the ops that have no fake
        rec["notes"].append(f"not run: {out.no_fake}")
        rec["status"] = "not-run"
        return
    if out.inputs is None and not out.findings:
        rec["status"] = "no-inputs"
        return
    if rec["eager"]["status"] == "rejected" and not valid_call_traced(rec["variants"]):
        # the fake was traced only on calls the real op refuses: its trace says nothing of the op's inputs, and a
        # fake that returns where the eager kernel raises may lack the check (never a pass; with findings too, so
        # that a baseline that accepts them does not pass an op never compared: hunt 40's all_to_all)
        more = ("the samples hook's included" if options.samples else "give the op samples: [tool.shapecheck.audit] "
                "samples")  # (hunt 60: advice to an op with samples, whose eager kernel ran past its limit)
        rec["notes"].append(f"not compared: {rec['eager']['evidence'] or 'the eager kernel rejected every input tried'}"
                            f"; the fake returned on each ({more})")
    if not _traced(rec):  # the fake raised on every call found (one only the eager kernel takes): its findings
        # are real, but nothing of the op's valid inputs was traced (never a pass, a baseline or not)
        rec["notes"].append("not traced: the fake returned on no input found, so no trace of it was made (give the "
                            "op samples: [tool.shapecheck.audit] samples)")
    elif not _finished(rec):  # traced, but under symbolic sizes the fake raised or guarded on every region
        rec["notes"].append("not traced: no symbolic trace of the fake returned (it raised or stopped on every "
                            "region explored), so none of its outputs was checked")
    stopped = any(n.startswith((*STOPPED, "not compared:", "not traced:")) for n in rec["notes"])
    rec["status"] = "findings" if rec["findings"] else "inconclusive" if stopped else \
        "relation-only" if rec["requires"] else "clean"
    rec["partial"] = stopped  # with findings too: what was not explored is not known clean once they are accepted
    if out.internal:  # shapecheck failed on a variant (its note says which): exit 4, the rest of the record kept
        rec["failure"], rec["partial"] = INTERNAL, True


def _finding(f: Any) -> dict[str, Any]:
    return {"code": f.code, "class": f.cls, "expr": f.expr, "location": _loc(f.loc),
            "counterexample": f.counterexample, "witness": f.witness, "message": f.message}




def _traced(rec: dict[str, Any]) -> bool:
    """Whether any trace of the fake was made: of the first inputs, or of a variant."""
    return rec.get("traces", 0) > 0 or any(v.get("traces") for v in rec.get("variants") or [])


def _finished(rec: dict[str, Any]) -> bool:
    """Whether a symbolic trace of the fake returned: of the first inputs, or of a variant."""
    return rec.get("finished", 0) > 0 or any(v.get("finished") for v in rec.get("variants") or [])






def _unique(findings: list[Any]) -> list[Any]:
    from .keys import finding_keys

    seen: set[tuple] = set()
    out = []
    for f in findings:
        keys = finding_keys(f)
        if not seen & keys:
            seen |= keys
            out.append(f)
    return out


def given_inputs(name: str, kernel: Any, options: AuditOptions, notes: list[str] | None = None) -> list[Any]:
    """Inputs that need no search: the project's samples hook (``[tool.shapecheck.audit] samples``), then
    torch's OpInfo samples. ``notes``: each hook sample left out, and why."""
    from .inputs import from_opinfo, from_samples_hook

    out = from_samples_hook(name, options.samples, notes=notes) if options.samples else []
    return out + from_opinfo(name, kernel.fn)


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


#: why an op was not run, beside its note: the kernel given cannot be made (exit 2), or shapecheck failed (exit 4)
BAD_INPUT, INTERNAL = "bad input", "internal error"

#: statuses of an op that was not traced to the end: each makes the run inconclusive unless excused
UNTRACED = ("no-inputs", "not-run", "inconclusive")


@dataclass
class AuditRun:
    records: list[dict[str, Any]]
    total_ops: int
    shard: tuple[int, int]
    seconds: float
    torch_version: str
    baseline: str | None = None
    accepted: int = 0  # findings the baseline accepted
    unreachable: list[str] = field(default_factory=list)  # a library's ops FakeTensorMode cannot run at all
    excused: dict[str, str] = field(default_factory=dict)  # untraced op -> the reason the config or baseline gives
    device: str = "cpu"

    def findings(self, *, active: bool = True) -> list[tuple[dict, dict]]:
        """(record, finding) pairs, ranked: class first, then op and line."""
        out = [(r, f) for r in self.records for f in r["findings"] if not (active and f.get("baselined"))]
        return sorted(out, key=lambda rf: (RANK[rf[1]["class"]], rf[0]["op"], rf[1]["expr"]))

    def untraced(self, *, excused: bool = False) -> list[dict[str, Any]]:
        """The records of ops not traced to the end (no inputs, not run, inconclusive; or explored only in part,
        findings or not); with ``excused``, only those the config or baseline lists, else only those it does
        not."""
        return [r for r in self.records if (r["status"] in UNTRACED or r.get("partial"))
                and (r["op"] in self.excused) == excused]

    @property
    def verdict(self) -> Verdict:
        """fail on a finding the baseline does not hold; else inconclusive when an op was not traced and nothing
        excuses it (not traced is never a pass); else pass."""
        if any(r.get("failure") == INTERNAL for r in self.records):
            return Verdict.ERROR  # a bug in shapecheck (exit 4); every other op's record stands
        if self.findings():
            return Verdict.FAIL
        return Verdict.INCONCLUSIVE if self.untraced() else Verdict.PASS

    @property
    def bad_input(self) -> str | None:
        """The first op's reason it could not be run for its input (a --meta-source function that fails to
        define), or None: the run's exit is 2 once its report is out, as for ``verify`` and ``gate``."""
        return next((r["notes"][-1].removeprefix("not run: ").partition(": ")[2] for r in self.records
                     if r.get("failure") == BAD_INPUT), None)

    @property
    def exit_code(self) -> int:
        """The verdict's, but 2 where an op's kernel could not be made for its input (``bad_input``), as gate's."""
        return 2 if self.verdict is not Verdict.ERROR and self.bad_input is not None else self.verdict.exit_code

    def coverage(self) -> dict[str, Any]:
        traced = [r for r in self.records if r["status"] not in ("no-inputs", "not-run") and _traced(r)]
        no_fake = [r["op"] for r in self.records if any(n.startswith("not run: no fake kernel") for n in r["notes"])]
        eager = [r for r in self.records if was_compared(r)]
        return {"ops": len(self.records), "traced": len(traced), "compared_with_eager": len(eager),
                "no_inputs": [r["op"] for r in self.records if r["status"] == "no-inputs"],
                "not_run": [r["op"] for r in self.records if r["status"] == "not-run" and r["op"] not in no_fake],
                "inconclusive": [r["op"] for r in self.records if (r["status"] == "inconclusive" or r.get("partial"))
                                 and not only_uncompared(r)],
                "not_compared": [r["op"] for r in self.records if only_uncompared(r)],
                "excused": dict(sorted((op, why) for op, why in self.excused.items()
                                       if any(r["op"] == op and (r["status"] in UNTRACED or r.get("partial"))
                                              for r in self.records))),
                "no_fake_kernel": sorted({*self.unreachable, *no_fake}),
                "variants": sum(len(r.get("variants") or []) for r in self.records),
                "excused_unknown": self.ghost_excuses()}

    def ghost_excuses(self) -> list[str]:
        """The untraced ops the config or baseline excuses that name no registered op overload
        (``ns::name.overload``): a typo there would excuse nothing, in silence (hunt 52)."""
        from .._torch import core as C

        def known(name: str) -> bool:
            if "." not in name.partition("::")[2]:
                return False
            try:
                C.resolve_op(name)
            except Exception:  # noqa: BLE001 - UnknownOpError, or a name torch cannot look up
                return False
            return True

        return sorted(n for n in self.excused if not known(n))

    def counts(self) -> dict[str, Any]:
        by_class: dict[str, int] = {}
        for _, f in self.findings(active=False):
            by_class[f["class"]] = by_class.get(f["class"], 0) + 1
        statuses = {s.replace("-", "_"): sum(r["status"] == s for r in self.records) for s in STATUSES}
        statuses["with_findings"] = statuses.pop("findings")
        statuses["partial_findings"] = sum(r["status"] == "findings" and bool(r.get("partial")) for r in self.records)
        # clean of guards, but the fake never met its eager kernel (none on the device, or it refused every input)
        statuses["clean_not_compared"] = sum(r["status"] == "clean" and (r.get("eager") or {}).get("status") != "off"
                                             and not was_compared(r) for r in self.records)
        return {"ops": len(self.records), **statuses, "findings": sum(by_class.values()),
                "new_findings": len(self.findings()), "baselined": self.accepted, "by_class": by_class,
                "untraced_excused": len(self.untraced(excused=True)), "untraced": len(self.untraced())}


def device_missing(device: str) -> str | None:
    """Why the eager kernels cannot run on ``device`` here (None: they can)."""
    from .._torch import core as C

    return C.device_available(device)


def run_audit(patterns: tuple[str, ...] = (), imports: tuple[str, ...] = (), source: Any = None,
              jobs: int = 0, shard: tuple[int, int] = (1, 1), options: AuditOptions = AuditOptions(),
              excused: dict[str, str] | None = None) -> AuditRun:
    """Audit every matching op: every op the imports register, and the installed torch's aten ops where
    ``aten_in_scope`` says so."""
    from .._torch import core as C
    from ..trace.parallel import resolve_jobs

    if options.cache:  # checked once, before any op: a malformed setting is bad input (exit 2)
        from ..cache import store as cache

        options = replace(options, cache=cache.enabled())
    from ..kernel.sources import MetaSource

    if isinstance(source, MetaSource) and not _registered(source.file):  # as verify: nothing of it would run
        raise UserError(f"{source.file}: --meta-source registers no function for any op (register_meta, register_"
                        "decomposition, register_fake, impl_abstract, register_op_impl or <custom op>.register_fake)")
    start = time.monotonic()
    extra, fresh, foreign = imported_ops(imports)
    if options.samples is not None:  # after the imports (a hook in the library's package imports it); "" too
        from .inputs import samples_hook

        samples_hook(options.samples)  # a bad hook is bad input (exit 2), before any op
    named = {p.partition("::")[0] for p in patterns if "::" in p}  # a namespace an --ops pattern spells out
    # a namespace the library adds ops to (aten::_cat_nop, torch's quantized_decomposed) is not the library's:
    # only the ops it added there are
    namespaces = fresh | {ns for ns in named if not set(ns) & set("*?[")}
    if aten_in_scope(patterns, imports, source):
        namespaces.add("aten")
    # torch's own ops that an import loaded on the way into a namespace the library also adds to (torch.ao's 19
    # quantized_decomposed ops beside executorch's 17) stay out, unless an --ops pattern names their namespace
    names, unreachable = enumerate_all(patterns, namespaces, extra,
                                       {n for n in foreign if n.partition("::")[0] not in named} - extra)
    if isinstance(source, MetaSource) and not patterns:
        # without --ops, the file's own aten ops: every other aten op runs the installed kernel, whose audit is the
        # same without the file (259 of torch 2.13's 1653 for its _meta_registrations.py)
        names = [n for n in names if not n.startswith("aten::") or _provides(source, n)]
        if not names and not unreachable and not _lacking(source, patterns):  # else a pass of 0 ops
            raise UserError(f"{source.file}: --meta-source registers no op the audit covers (the functional "
                            "overloads: no out= or in-place variant): name the ops with --ops")
    if imports and not patterns and not names and not unreachable:  # else a pass of 0 ops
        raise UserError(f"--import {' '.join(imports)}: the import registers no op (a library whose ops are "
                        "registered elsewhere: name them with --ops 'ns::*')")
    lacking = _lacking(source, patterns)
    found = [*names, *unreachable, *(r["op"] for r in lacking)]
    idle = [p for p in patterns if not any(fnmatch.fnmatchcase(n, p) or fnmatch.fnmatchcase(n.partition(".")[0], p)
                                           for n in found)]
    if idle:  # a typo beside a pattern that matches would otherwise narrow the run in silence
        hint = ("pass --import for a library's ops" if not imports else
                f"--import {' '.join(imports)} registers ops in {', '.join(sorted(fresh))}: check the pattern"
                if fresh else
                f"--import {' '.join(imports)} defines none with a fake: import the module that defines them too")
        raise UserError(f"--ops {' '.join(idle)}: no op with a meta or fake kernel matches (patterns match "
                        f"ns::name.overload, e.g. 'aten::cross*'; {hint})")
    k, n = shard
    lacking = lacking if k == 1 else []
    mine = [x for i, x in enumerate(names) if i % n == k - 1]
    from .._torch import audit as CA
    from .pool import run_supervised

    # a kernel that kills its process loses only its own op (SIGFPE in a C++ Meta kernel, a segfault); the fakes
    # run at the eager worker's thread count (an op that returns omp_get_max_threads(): hunt 52)
    try:
        with CA.threads(1):
            done = run_supervised(mine, lambda x, keep: audit_op(x, source, options, keep), resolve_jobs(jobs),
                                  _crashed, options.op_timeout or None)
        records = [done[x] for x in mine] + lacking
    finally:
        from .eager import worker

        worker().close()
    return AuditRun(records, len(names), shard, time.monotonic() - start, C.TORCH_VERSION,
                    unreachable=unreachable if k == 1 else [], excused=dict(excused or {}), device=options.device)
