"""One op's audit, v2 (issue 23): inputs found by search (or from OpInfo, or from the project's samples hook),
the symbolic exploration of the guards (``explore``), the fake against the eager kernel (``differential``), and
the same for each argument combination beyond the first inputs (``audit.variants``). The caller
(``run.audit_op``) turns the ``OpOutcome`` into the op's record.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..logic import expr as E
from .candidates import NO_EAGER, Found, Search
from .differential import MEMORY_WORDS, about_data
from .differential import run as diff_run
from .explore import STOPPED, AuditExplorer, Finding, OpAudit, parsed_requires
from .inputs import DATA_DEPENDENT, OpInputs, fake_result, held_constant
from .keys import finding_keys, first_per_kind
from .points import draw_points
from .variants import variants

VARIANT_POINTS = 6  # drawn points per variant
#: points for the representations a layout or dtype bug shows at whatever the sizes (the int32 inputs, the rank-up
#: input's other memory order): the example and the next drawn point; they cost an eager and a fake call each
EXTRA_POINTS = 2
#: an eager error that says the kernel lacks a case or a device here, not that the call is wrong
RESTRICTIONS = ("not implemented", "NotImplementedError", "not support", "accelerator", "primitive descriptor",
                "No backend", "no backend",  # a library's dispatch to its backends finding none for a dtype
                *MEMORY_WORDS)  # the machine's memory, not a check (a variant one rank up of a 2048 x 2048 sample)


SAMPLE = "of the samples hook"  # the label of a variant that is one of the hook's samples


@dataclass
class OpOutcome:
    inputs: OpInputs | None
    audit: OpAudit | None = None
    findings: list[Finding] = field(default_factory=list)  # the explorations' and the comparisons' findings
    notes: list[str] = field(default_factory=list)
    eager: dict[str, Any] | None = None
    variants: list[dict[str, Any]] = field(default_factory=list)
    traces: int = 0
    finished: int = 0  # the traces that returned (a trace that raised or guarded checked no output)
    no_fake: str = ""  # FakeTensorMode has no kernel for the op (UnsupportedOperatorException): why, when so
    internal: bool = False  # shapecheck failed on part of the op (a variant): its note says where (exit 4)
    #: plain FakeTensorMode's kernel where it is not torch.export's: its name and how it ran ("kernel", "modes",
    #: "points", "compared") and its disagreements with the eager kernel at the first inputs' points
    other_mode: dict[str, Any] | None = None
    other_findings: list[Finding] = field(default_factory=list)


class OpRun:
    def __init__(self, name: str, op: Any, kernel: Any, options: Any,
                 checkpoint: Callable[[OpOutcome, str], None] | None = None) -> None:
        """``checkpoint(outcome, stage)``, where given, is called with what is done before each stage that may
        kill the process (a fake or an eager kernel that segfaults): the supervisor keeps the last one."""
        self.name, self.op, self.kernel, self.options = name, op, kernel, options
        self.checkpoint = checkpoint or (lambda outcome, stage: None)
        self.device = options.device
        self.has_eager = False
        self.timed_out: Any = None  # the eager kernel's first time-out: not waited for again on this op
        self.broken: list[str] = []  # how a reused eager process ended at points a fresh one answers otherwise
        self.late_notes: list[str] = []  # notes of the op's whole run (the hook's samples refused)
        self.gap_calls = {}  # argument -> (the variant, the fake's TypeError) where the fake's signature lacks it
        self.shaped = []
        self.eager_seen: dict[tuple[str, tuple[tuple[str, bytes], ...], tuple[tuple[str, int], ...]], Any] = {}
        if options.differential:
            from .._torch import audit as CA

            self.has_eager = CA.has_eager_kernel(op, self.device)

    # -- the eager kernel, in the worker -------------------------------------------------------------------
    def eager_at(self, inputs: OpInputs, point: dict[str, int]) -> Any:
        from .eager import TIMED_OUT, worker

        if self.timed_out is not None:
            return self.timed_out  # a kernel stuck once (a lock, a build, a loop) costs one time-out, not one a point
        key = (repr(getattr(inputs, "args", inputs)), getattr(inputs, "blobs", ()), tuple(sorted(point.items())))
        hit = self.eager_seen.get(key)
        if hit is not None:  # the same call asked again (18% of an audit's): its answer, unless the process died
            return hit
        res = worker().call(self.name, inputs, point, self.device)
        if not res.crashed:
            self.eager_seen[key] = res
        if res.broken_by_earlier:
            self.broken.append(res.broken_by_earlier)
        if res.crashed and str(res.value).startswith(TIMED_OUT):
            self.timed_out = res
        return res

    def eager_example(self, inputs: OpInputs) -> Any:
        return self.eager_at(inputs, dict(inputs.dims()))

    # -- inputs ----------------------------------------------------------------------------------------------
    def find(self, given: list[OpInputs]) -> tuple[Found, Search]:
        """The first given inputs (OpInfo, samples hook) that the fake or the eager kernel accepts, else a search."""
        own = self.kernel.definition.function if self.kernel.definition is not None else ""
        search = Search(self.name, self.op, self.kernel.fn, self.eager_example if self.has_eager else None, own)
        refused = []  # the hook's samples neither kernel takes: said, not dropped without a word
        for inputs in given:
            ok, err = fake_result(self.kernel.fn, inputs, dict(inputs.dims()))
            ok = ok or err.startswith(DATA_DEPENDENT)
            e = self.eager_example(inputs) if self.has_eager else None
            if ok or (e is not None and e.ok):
                eager = "none" if e is None else "accepted" if e.ok else "rejected"
                return Found(inputs, eager, "" if e is None or e.ok else e.error, "" if ok else err), search
            if inputs.origin == "samples":
                refused.append(err.splitlines()[0][:160] if err else "")
        if refused:
            self.late_notes.append(f"{len(refused)} sample(s) of the samples hook refused by the fake"
                                   f"{' and the eager kernel' if self.has_eager else ''} (the first: {refused[0]}); "
                                   "inputs searched for instead")
        return search.run(), search

    # -- the whole op ----------------------------------------------------------------------------------------
    def run(self, given: list[OpInputs]) -> OpOutcome:
        out = self._run(given)
        out.notes += [n for n in self.late_notes if n not in out.notes]
        if self.broken:
            out.notes.append(f"the eager kernel's process ended ({self.broken[0]}) at {len(self.broken)} point(s) "
                             "after earlier calls, and a fresh process answered each otherwise: a call before left "
                             "it broken (a kernel that writes past its memory and returns?); each such point's "
                             "result is the fresh process's")
        return out

    def _run(self, given: list[OpInputs]) -> OpOutcome:
        found, search = self.find(given)
        out = OpOutcome(found.inputs)
        if found.demands is not None:
            err, call, names = found.demands
            out.findings.append(Finding(
                "fake-rejects", f"the fake's signature demands {', '.join(names) or 'an argument'}",
                self.kernel.definition, dict(call.dims()), None,
                f"the fake {self.kernel.name} demands the schema's {', '.join(names)}, which a call may leave out: "
                f"called without it ({call.describe()}), it raises {err[:200]} under FakeTensorMode, so torch.export "
                "and torch.compile fail on every call that leaves it out"))
            found.every_call_error = "" if found.every_call_error == err else found.every_call_error
        if found.inputs is None:
            if found.no_fake:  # the eager kernel took no call tried, but no fake ran on any either
                out.no_fake = (f"no fake kernel: FakeTensorMode raises UnsupportedOperatorException on every call "
                               f"tried ({found.fake_tries}), so torch.export and torch.compile cannot trace this op")
                return out
            if found.every_call_error:
                every = "every input tried" if found.past_checks >= found.fake_tries else \
                    f"every input tried that passes its checks ({found.past_checks} of them)"
                out.findings.append(Finding("kernel-error", found.every_call_error, self.kernel.definition, {}, None,
                                            f"the fake raises {found.every_call_error} on {every} "
                                            f"({found.fake_tries} calls): no input reaches its shape logic"))
            else:
                out.notes += found.notes
                out.notes.append(f"no input found that the fake (or the eager kernel) accepts: {found.fake_tries} "
                                 f"fake and {found.eager_tries} eager calls tried" + _most_frequent(search.errors) +
                                 (f"; the eager kernel's last error: {found.eager_error}" if found.eager_error else ""))
            return out
        base = found.inputs
        if found.fake_error.startswith("UnsupportedOperatorException"):  # no fake at all: nothing to audit
            out.no_fake = (f"no fake kernel: FakeTensorMode raises {found.fake_error[:120]} on inputs the eager "
                           "kernel accepts, so torch.export and torch.compile cannot trace this op")
            return out
        if found.fake_error:  # the eager kernel takes a call the fake raises on
            bad = found.fake_rejected or base
            out.findings.append(Finding("fake-rejects", "the fake raises where the eager kernel returns",
                                        self.kernel.definition, dict(bad.dims()), None,
                                        f"the fake raises {found.fake_error} on inputs the eager kernel accepts "
                                        f"({bad.describe()})"))
            if found.fake_rejected is None or base is found.fake_rejected:
                out.eager = self._eager_record("compared", 1, 0, 0, 0, "")
                return out
        self.checkpoint(out, "the exploration of the first inputs")
        st = self._explore(base, self.options.max_traces, out)
        given_base, base = base, st.inputs  # held constant where the fake takes no SymInts (``_explore``)
        out.audit = st
        self.base_keys = {k for f in out.findings for k in finding_keys(f)}
        self.sample_keys = self.base_keys if base.origin == "samples" else frozenset()
        self.checkpoint(out, "the fake's runs at static sizes for the comparison with the eager kernel (which runs in "
                                 "a worker of its own)")
        out.eager = self._compare(base, st, found, out, self.options.max_traces)
        if getattr(self.kernel, "other", None) is not None and self.base_points and found.eager == "accepted":
            self._other_mode(base, out)
        # the hook's other samples, each traced and compared as a variant is (a per-row scale after a per-tensor one)
        hook = [g for g in given if g.origin == "samples"]
        # (the first inputs' own sample is none of them, its ints held or not: hunt 60's finding reported twice)
        samples = [replace(g, label=f"sample {i + 1} {SAMPLE}") for i, g in enumerate(hook)
                   if g is not base and g is not given_base]
        # variants compared again in other representations once the first inputs' are (layouts or dtypes)
        self.later: list[tuple[OpInputs, list[dict[str, int]], list[E.Node], Callable[[OpInputs], list[OpInputs]]]] = []
        if self.options.variants or samples:
            self._variants(search, base, out, found.eager == "accepted", samples)
            self._signature_gaps(out)
        if self.options.variants:
            # here the first inputs are a call both kernels take, even after a call only the eager kernel took (a
            # 4-D-only fake that refuses a 2-D input: its 4-D inputs are compared in every layout too)
            from .variants import representations

            if self.base_points and found.eager == "accepted":
                self._representations(base, out, representations(base), self.base_points, self.base_requires)
            for v, points, requires, others in self.later:
                self._representations(v, out, others(v), points, requires, EXTRA_POINTS)
        return out

    @functools.cached_property
    def gaps(self) -> tuple[str, dict[str, str]]:
        """The fake's signature and the schema arguments it cannot take (``_torch.audit.unbindable``)."""
        from .._torch import audit as CA

        return CA.unbindable(self.op)

    def _signature_gaps(self, out: OpOutcome) -> None:
        """One finding for the schema arguments whose variants raised TypeError because the fake's signature
        lacks them (xformers' fake of six arguments written with three): every call that passes one fails to
        trace, whether or not the eager kernel can run here."""
        if not self.gap_calls:
            return
        names = list(self.gap_calls)
        v, err = self.gap_calls[names[0]]
        out.findings.append(Finding("fake-rejects", f"the fake's signature takes no {', '.join(names)}",
                                    self.kernel.definition, dict(v.dims()), None,
                                    f"the fake {self.gaps[0]} cannot take the schema's {', '.join(names)}: with "
                                    f"{v.label}, it raises {err[:200]} under FakeTensorMode, so torch.export and "
                                    "torch.compile fail on every call that passes it"))

    gap_calls: dict[str, tuple[OpInputs, str]]
    base_points: list[dict[str, int]] = []
    #: the points drawn for their shapes alone (``draw_points``' ``shaped``), early among the points: compared
    #: beside a budget of points, not within it
    shaped: list[dict[str, int]]

    def _first(self, points: list[dict[str, int]], budget: int) -> list[dict[str, int]]:
        """The first ``budget`` of ``points``, and the points drawn for their shapes among them beside."""
        out: list[dict[str, int]] = []
        for p in points:
            if sum(q not in self.shaped for q in out) >= budget:
                break
            out.append(p)
        return out
    variant_points: tuple[list[dict[str, int]], list[E.Node]] | None = None
    base_requires: list[E.Node] = []
    base_paths: list[dict] = []
    sites: list[tuple[str, Any, str]] = []  # the inferred asserts with their lines, of every input compared

    def _representations(self, base: OpInputs, out: OpOutcome, others: list[OpInputs], points: list[dict[str, int]],
                         requires: list[E.Node], per: int = VARIANT_POINTS) -> None:
        """``others``: ``base`` non-contiguous, and in another dtype (``variants.representations``), compared with
        the eager kernel at ``base``'s points: an output's strides or dtype that the fake gets wrong only there.
        Not traced: their sizes and guards are ``base``'s. One the eager kernel refuses at the example (a
        dtype its CPU kernel lacks) is noted in the variants as such, not compared."""
        self.checkpoint(out, "the fake's runs on the inputs' other layouts and dtypes")
        for v in others:
            e = self.eager_example(v)
            if not e.ok and e.crashed:
                self._eager_died(out, v.label, e.error)
                out.variants.append({"args": v.label, "status": "eager-crashed", "traces": 0})
                continue
            if not e.ok:
                if _refuses_the_call(e.error, v):
                    # the eager kernel checks the dtypes (mm: "expected m1 and m2 to have the same dtype";
                    # optimum-quanto's unpack takes uint8 only) or the layout (torch-harmonics' permute_to_nhwc
                    # "expects a contiguous (B, C, H, W) tensor"); a fake that returns on the same call lacks that
                    # check (a dtype the eager kernel merely lacks, "not implemented for", is no check)
                    ok, _ = fake_result(self.kernel.fn, v, dict(v.dims()))
                    if ok:
                        _one_check(out, Finding("fake-accepts", f"the fake returns where the eager kernel raises, "
                                                f"with {v.label}", self.kernel.definition, dict(v.dims()), None,
                                                f"with {v.label}, the eager kernel raises {e.error}; the fake returns"))
                out.variants.append({"args": v.label, "status": "eager-rejects", "traces": 0})
                continue
            # no formulas: the variant is not traced, and the first inputs' trace may have taken a path of their
            # own (embedding_bag's contiguous fast path gives offset2bag (0,), a transposed weight not)
            budget = EXTRA_POINTS if v.label.endswith((" as int32", " as int8")) or "as int8 (" in v.label else per
            res = diff_run(self.name, self.kernel.fn, v, self._first(points, budget), self.eager_at, [], requires,
                           self.device)
            for d in first_per_kind(res.disagreements):
                if d.cls == "fake-accepts" and (not _refuses_the_call(d.detail, v) or "crashes" in d.what):
                    # a dtype the eager kernel lacks on this device ("not implemented for 'BFloat16'"), or an eager
                    # kernel that dies on this layout (embedding_bag on a transposed weight): no check a fake makes
                    continue
                self._add(out, Finding(d.cls, d.what, self._site(d), d.point, None,
                                       f"at {_point(d.point)}: {d.detail}"), v.label)
            out.variants.append({"args": v.label, "status": "compared", "traces": 0})

    def _explore(self, inputs: OpInputs, max_traces: int, out: OpOutcome) -> OpAudit:
        explorer = AuditExplorer(self.kernel, inputs, max_traces, self.options.seconds_per_op, self.options.timeout_ms)
        st = explorer.run()
        held = held_constant(inputs) if not st.leaves and explorer.ints_only else inputs
        if held is not inputs:  # tico's maxpool2d passes its SymInt[] kernel_size to max_pool2d_with_indices' int[2]
            note = (f"the fake takes no symbolic values for its int arguments ({explorer.ints_only[0][:200]}): "
                    "traced with them held at the example's values, as its callers pass them")
            if note not in out.notes:
                out.notes.append(note)
            out.traces += st.traces  # the traces that raised count too
            explorer = AuditExplorer(self.kernel, held, max_traces, self.options.seconds_per_op, self.options.timeout_ms)
            st = explorer.run()
        st.explorer = explorer  # type: ignore[attr-defined] - the points of the comparison use its solver
        out.traces += st.traces
        out.finished += st.leaves
        for f in st.findings:
            self._add(out, f, inputs.label)
        return st

    base_keys: set = frozenset()

    sample_keys: set = frozenset()

    def _add(self, out: OpOutcome, f: Finding, label: str) -> None:
        """A finding of the first inputs, or a variant's that the first inputs do not show already. A sample of the
        hook's is the user's own call: only another sample's finding hides one of its (hunt 43: bitsandbytes' 3-D
        sample, whose eager kernel flattens the leading dims, hidden behind a broadcast at made-up sizes)."""
        keys = finding_keys(f)
        sample = SAMPLE in label
        if label and (self.sample_keys if sample else self.base_keys) & keys:
            return
        self.base_keys = {*self.base_keys, *keys}  # one report per guard or disagreement: the first inputs that show it
        if sample:
            self.sample_keys = {*self.sample_keys, *keys}
        out.findings.append(_labelled(f, label))

    def _site(self, d: Any) -> Any:
        """Where a disagreement is located: a fake that raises, at the assert it breaks there; else the kernel."""
        loc = _raise_site(self.sites, d.point) if d.cls == "fake-rejects" else None
        return loc or self.kernel.definition

    def _compare(self, inputs: OpInputs, st: OpAudit, found: Any, out: OpOutcome, budget: int) -> dict[str, Any]:
        if not self.options.differential:
            return self._eager_record("off", 0, 0, 0, 0, "")
        if not self.has_eager or found.eager == "none":
            return self._eager_record("none", 0, 0, 0, 0, f"no eager kernel for {self.device}")
        if found.eager == "rejected":
            from .eager import TIMED_OUT

            how = "returned on no input tried" if TIMED_OUT in found.eager_error else "rejected every input tried"
            return self._eager_record("rejected", 0, 0, 0, 0, f"the eager kernel {how}: {found.eager_error}")
        explorer = st.explorer  # type: ignore[attr-defined]
        self.sites = [*self.sites, *st.requires]  # where a fake-rejects raises, at these points or a layout's
        requires = parsed_requires(st.requires)
        shaped: list[dict[str, int]] = []
        points = draw_points(inputs, st.points, explorer.near, requires, st.paths, shaped)
        points = points[:budget + len(shaped) if inputs.label else len(points)]
        self.shaped += [p for p in shaped if p not in self.shaped]
        if not inputs.label:  # the first inputs': the representation variants are compared at them too
            self.base_points, self.base_requires, self.base_paths = points, requires, st.paths
        else:  # a variant's: its other memory order is compared at them (the first tensor a rank up)
            self.variant_points = (points, requires)
        res = diff_run(self.name, self.kernel.fn, inputs, points, self.eager_at, st.paths, requires, self.device,
                       explorer.returned, zeros=not inputs.label)
        for d in first_per_kind(res.disagreements):
            f = Finding(d.cls, d.what, self._site(d), d.point, None, f"at {_point(d.point)}: {d.detail}")
            self._add(out, f, inputs.label)
        out.notes += [n for n in res.notes if not n.startswith("the fake's symbolic") and n not in out.notes]
        evidence = next((n for n in res.notes if n.startswith("the fake's symbolic")), "")
        if evidence and inputs.label:  # a variant's: the record's evidence is the first inputs' (hunt 37)
            evidence = ""
        elif evidence:
            evidence = evidence.replace(" points checked:", " points checked with the op's first inputs (each "
                                        "argument variant is compared on its own, its findings listed):")
        return self._eager_record("crashed" if res.crashes and not res.compared else "compared", res.points,
                                  res.compared, res.formula_points, res.crashes, evidence)

    def _other_mode(self, base: OpInputs, out: OpOutcome) -> None:
        """Plain FakeTensorMode's kernel (meta-device model init, FakeTensorProp), where torch.export runs another
        (upsample_nearest2d's meta registration beside its decomposition): run against the eager kernel at the
        first inputs' points. Its disagreements name it; they count with --both-modes (as verify's do)."""
        other = self.kernel.other
        self.checkpoint(out, "plain FakeTensorMode's own kernel against the eager kernel")
        res = diff_run(self.name, other.fn, base, self.base_points, self.eager_at, [], self.base_requires,
                       self.device)
        out.other_mode = {"kernel": other.name, "modes": other.modes_text, "points": res.points,
                          "compared": res.compared}
        for d in first_per_kind(res.disagreements):
            out.other_findings.append(Finding(d.cls, f"[plain FakeTensorMode ({other.name})] {d.what}",
                                              other.definition or self.kernel.definition, d.point, None,
                                              f"at {_point(d.point)}, plain FakeTensorMode's kernel ({other.name}): "
                                              f"{d.detail}"))

    def _eager_died(self, out: OpOutcome, label: str, error: str) -> None:
        """A variant's call that killed the eager kernel's process (or ran past its limit): not compared, and said
        once for the op (hunt 41: amd-quark's ``fake_quantize_to_low_precision_fp`` corrupts the heap on int8 and
        bfloat16 inputs; those variants read "eager-rejects" and the op was clean with no word of it)."""
        note = (f"the eager kernel did not answer with {label} ({error}): that call is not compared, nor any other "
                f"variant whose status is eager-crashed")
        if not any(n.startswith("the eager kernel did not answer with ") for n in out.notes):
            out.notes.append(note)

    def _eager_record(self, status: str, points: int, compared: int, formula: int, crashes: int,
                      evidence: str) -> dict[str, Any]:
        return {"device": self.device, "status": status, "points": points, "compared": compared,
                "formula_points": formula, "crashes": crashes, "evidence": evidence}

    def _variants(self, search: Search, base: OpInputs, out: OpOutcome, base_ok: bool,
                  samples: Sequence[OpInputs] = ()) -> None:
        """Each of ``samples`` (the hook's other samples), then each variant, traced and compared; ``base_ok``: the
        eager kernel takes the first inputs (then a variant it refuses while the fake returns is a check the fake
        lacks)."""
        self.checkpoint(out, "the argument variants")
        given: list[tuple[OpInputs, tuple[str, Any] | None]] = [(s, None) for s in samples]
        for v, varied in itertools.chain(given, variants(search, base, self.options.variants)):
            try:
                self._variant(search, base, out, base_ok, v, varied)
            except Exception as err:  # noqa: BLE001 - shapecheck's failure on one variant: its note (exit 4), and the
                # op's other results stand
                out.notes.append(f"not run: the variant {v.label}: {type(err).__name__}: {str(err)[:200]}")
                out.internal = True

    def _variant(self, search: Search, base: OpInputs, out: OpOutcome, base_ok: bool, v: OpInputs,
                 varied: tuple[str, Any] | None) -> None:
        """One variant (or another sample of the hook) traced and compared."""
        self.checkpoint(out, f"the argument variants ({len(out.variants)} of them done)")
        ok, err = fake_result(self.kernel.fn, v, dict(v.dims()))
        ok = ok or err.startswith(DATA_DEPENDENT)
        e = self.eager_example(v) if self.has_eager else None
        again = False
        if not ok and varied is not None and err.startswith("TypeError") and varied[0] in self.gaps[1]:
            # the fake's Python signature lacks the argument: whatever the eager kernel says of the value
            self.gap_calls.setdefault(varied[0], (v, err))
            out.variants.append({"args": v.label, "status": "fake-rejects", "traces": 0})
            return
        if not ok:
            if e is not None and e.ok:
                from .differential import zeros_aside

                out.findings.append(Finding("fake-rejects", f"the fake raises where the eager kernel returns, "
                                            f"with {v.label}", self.kernel.definition, dict(v.dims()), None,
                                            f"with {v.label}, the fake raises {err}; the eager kernel returns"
                                            f"{zeros_aside(v, dict(v.dims()), self.eager_at)}"))
                out.variants.append({"args": v.label, "status": "fake-rejects", "traces": 0})
                return
            # the first inputs cannot take this value (dim=2 of a 2-D input): inputs searched again around it
            other = search.narrowed(*varied) if varied is not None else None
            if other is not None and other.fake_error and other.fake_rejected is not None:
                # inputs with this value that the eager kernel takes and the fake raises on (a 0-d self of
                # index_select with a one-element index)
                w = other.fake_rejected
                out.findings.append(Finding("fake-rejects", f"the fake raises where the eager kernel returns, "
                                            f"with {v.label}", self.kernel.definition, dict(w.dims()), None,
                                            f"with {v.label} ({w.label or 'inputs searched again'}), the fake raises "
                                            f"{other.fake_error}; the eager kernel returns"))
                out.variants.append({"args": v.label, "status": "fake-rejects", "traces": 0})
                return
            if other is None or other.inputs is None or other.fake_error:
                out.variants.append({"args": v.label, "status": "both-reject" if e is not None else
                                     "fake-rejects", "traces": 0})
                if e is None:  # nothing says whether the op takes it: said, not passed in silence (a rank the
                    # op has no meaning for is no gap in the audit, so the op's status stands)
                    out.notes.append(f"the fake rejects the variant {v.label} ({err[:160]}); the op has no eager "
                                     f"kernel on {self.device} to say whether it takes that call")
                return
            v = OpInputs(other.inputs.op, other.inputs.origin, other.inputs.args, other.inputs.blobs,
                         f"{v.label}, inputs searched again")
            e = self.eager_example(v) if self.has_eager else None
            again = True
        if base_ok and not again and e is not None and not e.ok and not e.crashed and _refuses_the_call(e.error, v):
            # the base inputs both take; with this one argument changed the eager kernel refuses and the fake
            # returns: a check the fake lacks (conv_transpose2d's output_padding below the stride)
            _one_check(out, Finding("fake-accepts", f"the fake returns where the eager kernel raises, with "
                                    f"{v.label}", self.kernel.definition, dict(v.dims()), None,
                                    f"with {v.label}, the eager kernel raises {e.error}; the fake returns"))
        # the bound of the first inputs (--max-traces): a variant explored in part leaves the op in part
        st = self._explore(v, self.options.max_traces, out)
        v = st.inputs
        _variant_notes(out, st, v.label)
        if e is not None and e.crashed:
            self._eager_died(out, v.label, e.error)
        found = Found(v, "none" if e is None else "accepted" if e.ok else "rejected", "" if e is None or e.ok
                      else e.error)
        self.variant_points = None
        compared = self._compare(v, st, found, out, VARIANT_POINTS)["compared"] if e is not None else 0
        out.variants.append({"args": v.label, "status": "traced", "traces": st.traces, "finished": st.leaves,
                             "compared": compared})
        if varied is None or e is None or not e.ok or not self.variant_points:
            return
        from .variants import layouts, other_dtypes

        if varied[0] == _first_tensor(base) and _elements(v) <= LAYOUT_ELEMENTS:  # the first tensor a rank up (a
            # batched image) in another memory order too, after the first inputs' own layouts and dtypes
            self.later.append((v, *self.variant_points, layouts))
        elif all(n != varied[0] or t[0] not in ("tensor", "tensors") for n, _, t in v.args):
            # a flag or an int argument varied: its tensors in the other dtypes too (a fake that keeps the scale's
            # dtype only where ``out_fp32=True`` asks for float32: flag and dtype together)
            self.later.append((v, *self.variant_points, other_dtypes))


def _raise_site(requires: list[tuple[str, Any, str]], point: dict[str, int]) -> Any:
    """Where the fake raises at ``point``: the line of the first inferred assert it breaks there (a check the
    kernel's own line makes, not the FakeTensor rule that called it), or None."""
    for r in requires:
        fact = parsed_requires([r])
        if r[1] is not None and fact and E.free_names(fact[0]) <= point.keys():
            try:
                if not E.evaluate(fact[0], point):
                    return r[1]
            except Exception:  # noqa: BLE001, S112 - undefined at this point (a division by 0): not this one
                continue
    return None


def _variant_notes(out: OpOutcome, st: OpAudit, label: str) -> None:
    """What a variant's exploration left out, in the op's notes: a region not explored, or no symbolic trace that
    returned, leaves the op explored in part (never a pass, as for the first inputs)."""
    for n in st.notes:
        if n.startswith(STOPPED):
            out.notes.append(f"{n} (the variant {label})")
    if st.traces and not st.leaves:
        out.notes.append(f"not traced: with {label}, none of the fake's {st.traces} symbolic traces returned (each "
                         "raised or stopped); that variant was compared with the eager kernel at static sizes only")


def _most_frequent(errors: list[str]) -> str:
    """The fake's most frequent error in a search that found no input, in words ("" for none); a name this torch
    lacks (a --meta-source file written for another torch) said so."""
    if not errors:
        return ""
    top = max(dict.fromkeys(errors), key=errors.count)
    lacks = " (a name this torch lacks: a kernel written for another torch?)" if top.startswith("NameError") else ""
    return f"; the fake's most frequent error ({errors.count(top)} of {len(errors)} calls): {top}{lacks}"


def _refuses_the_call(error: str, inputs: OpInputs | None = None) -> bool:
    """Whether an eager error refuses the call's arguments, rather than a dtype or device the eager kernel lacks
    or the made-up data of the inputs (neither is a check a fake could make)."""
    return not about_data(error, inputs) and not any(m in error for m in (*NO_EAGER, *RESTRICTIONS))


def _labelled(f: Finding, label: str) -> Finding:
    if not label:
        return f
    return Finding(f.cls, f"{f.expr} (with {label})", f.loc, f.counterexample, f.witness, f"with {label}: {f.message}")


def _point(p: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in p.items()) or "the example"


#: a dtype as torch's C++ errors spell it (``expected m1 and m2 to have the same dtype, but got: float != signed
#: char``, ``expected scalar type Float but found Double``) or as Python does
_DTYPE_WORDS = re.compile(r"\b(?:c10::)?(?:BFloat16|Half|Float|Double|Char|Byte|Short|Int|Long|Bool|ComplexFloat|"
                          r"ComplexDouble|signed char|unsigned char|float|double|short|int|long|bool|"
                          r"(?:torch\.)?(?:bfloat16|float16|float32|float64|u?int(?:8|16|32|64)))\b")


def _one_check(out: OpOutcome, f: Finding) -> None:
    """A variant's fake-accepts finding, once per check the eager kernel makes (its error, the dtypes it names
    aside: mm's "same dtype" check refuses a float64, a bfloat16 and an int8 operand alike): shown by the variant
    that changes the fewest arguments (``output_padding=[1, 1]`` rather than a corner that also moves the
    padding, or the same list with the first tensor a rank up)."""
    def check(g: Finding) -> str:
        return _DTYPE_WORDS.sub("T", g.message.partition("the eager kernel raises ")[2])

    error = check(f)
    for i, g in enumerate(out.findings):
        if g.cls == f.cls and check(g) == error:
            if f.expr.count(", ") < g.expr.count(", "):
                out.findings[i] = f
            return
    out.findings.append(f)


#: the rank-up input's other memory order is compared where its tensors hold at most this many elements: a long 1-D
#: OpInfo sample a rank up (8000 x 8000 for sort) costs seconds an eager call, and layouts show at small sizes
LAYOUT_ELEMENTS = 1 << 20


def _elements(inputs: OpInputs) -> int:
    """The elements of the largest tensor of ``inputs`` (a list's too) at its example sizes."""
    from .variants import slots

    sizes = dict(inputs.dims())
    out = 0
    for _, t in slots(inputs):
        n = 1
        for d in t[1]:
            n *= sizes.get(d, 1)
        out = max(out, n)
    return out


def _first_tensor(inputs: OpInputs) -> str | None:
    """The name of the first tensor argument (or list of tensors) of ``inputs``: the one a rank-up variant changes."""
    from .variants import tensor_rank

    return next((n for n, _, t in inputs.args if t[0] in ("tensor", "list") and tensor_rank(t) is not None), None)
