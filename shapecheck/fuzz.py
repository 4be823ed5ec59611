"""Fuzzing: examples drawn from a contract, run on the kernel under test and on ``metal_ref`` -> ``FuzzReport``.

Each example checks (1) the meta kernel's output shapes, on ``meta`` tensors and under a static FakeTensorMode,
against the contract's paths; (2) its output 0 against the runtime reference's output 0 (shape, dtype,
density); (3) the reference's values against the float64 math. Proofs (``verify``) cover every size of the
meta kernel; this covers what proofs cannot: that the contract and the meta kernel match the runtime.
"""

from __future__ import annotations

import inspect
import json
import math
import random
import shlex
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import Verbosity, given, settings
from hypothesis import example as hyp_example
from hypothesis import seed as hyp_seed
from hypothesis.errors import InvalidArgument

from . import _compat as C
from . import expr as E
from .contract import BoundCase, Contract
from .errors import TargetError
from .sources import from_options
from .strategies import (
    DEFAULT_MAX_ELEMENTS,
    DEFAULT_MAX_SIDE,
    Example,
    cases,
    example_at,
    fast_holds,
    largest_tensor,
)
from .target import load_target
from .trace import Kernel, NotApplicable, call_args, concrete_size

CHECKS = ("kernel-error", "meta-shape", "fake-shape", "runtime", "values")
"""Failure kinds: the meta kernel raised on a valid input; its shapes on meta tensors / under FakeTensorMode
differ from the contract (or from each other); its output 0 differs from the runtime's; the runtime's values
differ from the math."""


@dataclass(frozen=True)
class FuzzOptions:
    examples: int = 200  # Hypothesis max_examples
    seed: int | None = None  # None: a random seed, reported so the run can be replayed
    eras: tuple[str, ...] = ()  # empty: every era of the contract
    cases: tuple[str, ...] = ()  # substrings of case ids; empty: every case
    path: str | None = None  # aim every example at this path ("id" or "id@era")
    max_elements: int = DEFAULT_MAX_ELEMENTS
    max_side: int = DEFAULT_MAX_SIDE
    verify_examples: bool = True  # run verify first; its counterexamples become explicit examples
    from_verify: str | None = None  # take the counterexamples from this ``verify --format json`` file instead


@dataclass(frozen=True)
class Failure:
    check: str  # one of CHECKS
    example: str  # Example.text(): case;dims;seed=N
    case: str
    dims: dict[str, int]
    seed: int
    paths: dict[str, list[str]]  # era -> contract paths whose ``when`` holds at the example
    runtime_paths: dict[str, str]  # era -> the path the runtime reference took
    expected: str
    got: str
    message: str
    replay: str = ""  # a command that replays this example alone


@dataclass(frozen=True)
class FuzzReport:
    op: str
    contract: str
    kernel: str
    verdict: str  # pass | fail
    seed: int
    examples: int  # examples run (explicit, generated and shrinking)
    explicit: int  # examples taken from verify counterexamples
    seconds: float
    timings: dict[str, float]  # generation, tensors, meta, metal_ref, math, other
    failures: tuple[Failure, ...]
    notes: dict[str, int]  # things seen that are not failures, with counts
    paths: dict[str, int]  # contract paths (id@era) the examples fell in, with counts
    reference: str  # what checks 2 and 3 ran against, or why they were skipped
    verify: str = ""  # the verify verdict that supplied explicit examples, if any
    replay: str = ""  # a command that replays the whole run
    torch: str = C.TORCH_VERSION

    @property
    def examples_per_second(self) -> float:
        return self.examples / self.seconds if self.seconds > 0 else 0.0

    @property
    def exit_code(self) -> int:
        return 1 if self.failures else 0

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["failures"] = [dict(f.__dict__) for f in self.failures]
        out["examples_per_second"] = round(self.examples_per_second, 2)
        return out


class FuzzFailure(AssertionError):
    """A check failed on an example; ``failure`` holds the data. One subclass per check, so that Hypothesis
    shrinks and reports each kind of failure separately."""

    def __init__(self, failure: Failure):
        self.failure = failure
        super().__init__(f"{failure.check}: {failure.message}\n  example: {failure.example}"
                         + (f"\n  replay:  {failure.replay}" if failure.replay else ""))


class KernelErrorFailure(FuzzFailure):
    pass


class MetaShapeFailure(FuzzFailure):
    pass


class FakeShapeFailure(FuzzFailure):
    pass


class RuntimeFailure(FuzzFailure):
    pass


class ValueFailure(FuzzFailure):
    pass


_FAILURE_TYPES = {"kernel-error": KernelErrorFailure, "meta-shape": MetaShapeFailure,
                  "fake-shape": FakeShapeFailure, "runtime": RuntimeFailure, "values": ValueFailure}


# ---------------------------------------------------------------------------------------------------------
# The runtime reference (checks 2 and 3)


class Unmodelled(Exception):
    """The reference cannot run this input (an argument it lacks, an input it does not model)."""


class MetalReference:
    """``metal_ref``: CPU ports of the MPS attention paths, for ``aten::_scaled_dot_product_attention_math_for_mps``.

    Arguments are passed by the op's argument names; the path is ``metal_ref.select_path``'s per era. The
    math is ``metal_ref.math_reference`` with each path's documented quirks (see ``expected``).
    """

    ops = ("aten::_scaled_dot_product_attention_math_for_mps",)
    # Tolerances of tests/metal_ref (fp32 ~1e-5; fp16 / bf16 ~1e-2 relative).
    TOLERANCES = {"float32": (1e-5, 1e-5), "float16": (2e-3, 1e-2), "bfloat16": (1e-2, 2e-2),
                  "float64": (1e-7, 1e-7)}

    def __init__(self) -> None:
        import metal_ref

        self.m = metal_ref
        self.eras = tuple(metal_ref.ERAS)
        self.params = inspect.signature(metal_ref.run).parameters
        self.errors = (metal_ref.RuntimeCheckError,)

    def _kwargs(self, args: Mapping[str, Any]) -> dict[str, Any]:
        out = {}
        for name, value in args.items():
            if name in self.params:
                out[name] = value
            elif value is not None:
                raise Unmodelled(f"metal_ref.run takes no argument {name!r}")
        return out

    def run(self, args: Mapping[str, Any], era: str) -> tuple[Any, str]:
        """Output 0 and the path the runtime of ``era`` takes."""
        kw = self._kwargs(args)
        try:
            path = self.m.select_path(kw["query"], kw["key"], kw["value"], kw.get("attn_mask"),
                                      kw.get("is_causal", False), era=era)
            out = self.m.run(**kw, era=era, path=path)
        except self.errors:
            raise
        except (NotImplementedError, ValueError, TypeError) as err:  # not modelled by the port
            raise Unmodelled(f"{type(err).__name__}: {err}") from err
        return out[0], path

    def expected(self, args: Mapping[str, Any], path: str) -> Any:
        """The float64 math for ``path``, with the quirks ``metal_ref`` documents for it."""
        import torch

        q, k, v = args["query"], args["key"], args["value"]
        mask, causal, scale = args.get("attn_mask"), bool(args.get("is_causal")), args.get("scale")
        # vector_1pass: a fully masked row is 0/0 = NaN; every other path gives 0 (vector_1pass.sdpa_vector).
        fully = "nan" if path == "vector_1pass" else "zero"
        if path == "general":
            # sdpa_general: the mask is ignored when causal, and a bool mask is *added* as 1/0 (general.py).
            mask = None if causal else (mask.float() if mask is not None and mask.dtype == torch.bool else mask)
        if path in ("prefill", "mpp") and mask is not None and mask.dtype != torch.bool:
            # prefill: a dtype mask is added to base-2 scores, i.e. it acts as mask * ln(2) (prefill.py).
            mask = mask.double() * math.log(2.0)
        if path == "general_chunked" and causal:
            # causal is top-left aligned to each 3068-row chunk (general_chunked.py).
            rows = self.m.general_chunked.CHUNK_ROWS
            parts = [self.m.math_reference(q[..., s:s + rows, :], k, v, None, True, scale, fully_masked=fully)
                     for s in range(0, q.shape[-2], rows)]
            return torch.cat(parts, dim=-2)
        return self.m.math_reference(q, k, v, mask, causal, scale, fully_masked=fully)

    def tolerance(self, args: Mapping[str, Any], dtype: str) -> tuple[float, float]:
        """(atol, rtol) for output 0 in ``dtype``: the tests' tolerances, plus what rounding the scores to the
        input dtype can do (the MPSGraph path computes Q K^T in T; prefill pre-scales Q in T): a score error
        of eps/2 * |s| moves each softmax weight by at most a factor exp(eps * |s|)."""
        import torch

        atol, rtol = self.TOLERANCES.get(dtype, (1e-5, 1e-5))
        q, k, v = args["query"].double(), args["key"].double(), args["value"]
        if q.shape[-1] == 0 or k.shape[-2] == 0 or v.numel() == 0:
            return atol, rtol
        if k.shape[-3] != q.shape[-3]:
            k = k.repeat_interleave(q.shape[-3] // k.shape[-3], dim=-3)
        scale = args.get("scale") or 1.0 / math.sqrt(q.shape[-1])
        s_max = float(torch.matmul(q, k.transpose(-1, -2)).abs().max()) * scale
        eps = torch.finfo(getattr(torch, dtype)).eps
        return atol + math.expm1(eps * s_max) * float(v.abs().max()), rtol


_PROBE = object()  # stands for a tensor argument when probing the kernel's signature

REFERENCES: dict[str, Callable[[], Any]] = {op: MetalReference for op in MetalReference.ops}
"""Ops with a runtime reference, and how to build it. Checks 2 and 3 are skipped (and said so) for others."""


# ---------------------------------------------------------------------------------------------------------
# Checking one example


class Checker:
    """Runs the three checks on one example; raises a FuzzFailure subclass on the first that fails."""

    def __init__(self, contract: Contract, kernel: Kernel, *, eras: tuple[str, ...] = (),
                 max_elements: int = DEFAULT_MAX_ELEMENTS, replay: Callable[[str], str] | None = None):
        self.contract = contract
        self.kernel = kernel
        self.eras = eras or contract.eras
        self.max_elements = max_elements
        self.replay = replay
        factory = REFERENCES.get(contract.op.replace(".", "::", 1))
        self.reference = factory() if factory is not None else None
        if self.reference is None:
            self.reference_note = f"no runtime reference for {contract.op}: checks 2 and 3 skipped"
        else:
            self.reference_note = f"metal_ref (eras {', '.join(e for e in self.eras if e in self.reference.eras)})"
        from .refcheck import live_runtime_suppressions

        # runtime deviations the contract accepts ([[suppress]] of SC011, as `ref check` reads them)
        self.accepted = live_runtime_suppressions(contract)
        self.fake = C.static_fake_mode()
        self.timings: dict[str, float] = {}
        self.notes: Counter[str] = Counter()
        self.paths: Counter[str] = Counter()
        self.count = 0

    def applicable(self, case: BoundCase) -> bool:
        """False when the kernel cannot be called on this case (an argument it lacks)."""
        try:
            call_args(self.kernel, case, lambda a: _PROBE, lambda a: _PROBE)
        except NotApplicable:
            return False
        return True

    def _time(self, key: str, start: float) -> None:
        self.timings[key] = self.timings.get(key, 0.0) + time.perf_counter() - start

    def check(self, ex: Example) -> None:
        """Run the checks on one example; raise a FuzzFailure subclass on the first that fails."""
        import torch

        # Examples are small: one intra-op thread is as fast, and on a loaded machine OpenMP's barriers
        # can stall a 1 ms matmul for a second (measured on 2 shared cores).
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            self._check(ex)
        finally:
            torch.set_num_threads(threads)

    def _check(self, ex: Example) -> None:
        import torch

        self.count += 1
        dims = ex.values
        holding = {era: [p for p in ex.case.paths if p.era == era and fast_holds(p.when, dims)]
                   for era in self.eras}
        for era, ps in holding.items():
            for p in ps:
                self.paths[f"{p.id}@{era}"] += 1
        runtime_paths: dict[str, str] = {}

        def fail(check: str, expected: str, got: str, message: str) -> FuzzFailure:
            paths = {era: [p.id for p in ps] for era, ps in holding.items()}
            f = Failure(check, ex.text(), ex.case.id, dims, ex.seed, paths, dict(runtime_paths), expected, got,
                        message, self.replay(ex.text()) if self.replay else "")
            return _FAILURE_TYPES[check](f)

        # 1. the meta kernel on meta tensors and under a static FakeTensorMode
        start = time.perf_counter()
        outs = self._call(ex.arguments("meta"), ex, fail, "meta")
        self._time("meta", start)
        start = time.perf_counter()
        with self.fake:
            fake_outs = self._call(ex.arguments(None), ex, fail, "FakeTensorMode")
        self._time("fake", start)
        paths = [p for ps in holding.values() for p in ps]
        if not paths:
            self.notes["no contract path holds: output shapes unchecked"] += 1
        for check, got in (("meta-shape", outs), ("fake-shape", fake_outs)):
            for p in paths:
                for j, want in enumerate(p.outputs):
                    if want is None:
                        continue
                    expected = E.evaluate(want, dims)
                    actual = _describe(got[j]) if j < len(got) else "nothing"
                    if actual != _fmt_value(expected):
                        raise fail(check, _fmt_value(expected), actual,
                                   f"output {j} is {actual} but path {p.id}@{p.era} says {_fmt_value(expected)}")
        for j, (a, b) in enumerate(zip(outs, fake_outs)):
            if _describe(a) != _describe(b) or _dtype(a) != _dtype(b):
                raise fail("fake-shape", f"{_describe(a)} {_dtype(a)}", f"{_describe(b)} {_dtype(b)}",
                           f"output {j} under FakeTensorMode differs from the meta tensor run")
        if self.reference is None:
            return
        if largest_tensor(ex) > self.max_elements:
            self.notes["example beyond the size bound: runtime and values unchecked"] += 1
            return

        # 2. output 0 against the runtime reference; 3. the reference's values against the math
        start = time.perf_counter()
        cpu_args = ex.arguments("cpu")
        self._time("tensors", start)
        out0 = outs[0] if outs else None
        for era in self.eras:
            if era not in self.reference.eras:
                self.notes[f"{era}: the reference has no such era"] += 1
                continue
            start = time.perf_counter()
            try:
                ref0, rpath = self.reference.run(cpu_args, era)
            except self.reference.errors as err:
                self._time("metal_ref", start)
                which = "; contract paths " + ", ".join(p.id for p in holding[era]) if holding[era] else ""
                self.notes[f"{era}: the runtime rejects the input ({type(err).__name__}){which}"] += 1
                continue
            except Unmodelled as err:
                self._time("metal_ref", start)
                self.notes[f"{era}: not modelled by the reference: {str(err).splitlines()[0][:80]}"] += 1
                continue
            self._time("metal_ref", start)
            runtime_paths[era] = rpath
            if not holding[era]:
                self.notes[f"{era}: the runtime takes {rpath} where no contract path holds"] += 1
            elif rpath.replace("_", "-") not in {p.id for p in holding[era]} and \
                    rpath.replace("_", "-") in {p.id for p in ex.case.paths if p.era == era}:
                self.notes[f"{era}: the runtime takes {rpath}, the contract says "
                           f"{'/'.join(p.id for p in holding[era])}"] += 1
            want = f"{_describe(ref0)} {_dtype(ref0)} {_density(ref0)}"
            got = f"{_describe(out0)} {_dtype(out0)} {_density(out0)}"
            from .refcheck import accepted_by

            if want != got and accepted_by(self.accepted, "SC011", rpath.replace("_", "-"), ex.case.id):
                self.notes[f"{era}: the runtime's output 0 on {rpath} differs from the contract, accepted by the "
                           "contract's [[suppress]] (SC011)"] += 1
                continue
            if want != got:
                raise fail("runtime", want, got, f"output 0 of the meta kernel is {got}; the runtime ({era}, "
                           f"{rpath}) returns {want}")
            start = time.perf_counter()
            ref = self.reference.expected(cpu_args, rpath)
            self._time("math", start)
            if ref.numel() != ref0.numel():
                raise fail("values", f"{tuple(ref.shape)} values", _describe(ref0),
                           f"the runtime ({era}, {rpath}) returns {ref0.numel()} values, the math {ref.numel()}")
            atol, rtol = self.reference.tolerance(cpu_args, _dtype(ref0))
            got_v = ref0.double().reshape(ref.shape)
            close = torch.isclose(got_v, ref, rtol=rtol, atol=atol, equal_nan=True)
            if not bool(close.all()):
                bad = (~close).nonzero()[0].tolist()
                idx = tuple(bad)
                raise fail("values", f"{ref[idx].item():.6g} (math)", f"{got_v[idx].item():.6g}",
                           f"the runtime ({era}, {rpath}) differs from the math at index {idx} "
                           f"({int((~close).sum())} of {close.numel()} values; atol={atol}, rtol={rtol})")

    def _call(self, args: Mapping[str, Any], ex: Example, fail: Callable, where: str) -> list[Any]:
        pos, kw = call_args(self.kernel, ex.case, lambda a: args[a.name], lambda a: concrete_size(a, ex.values))
        try:
            result = self.kernel.fn(*pos, **kw)
        except Exception as err:  # the kernel failed on a valid input: a finding
            raise fail("kernel-error", "outputs", f"{type(err).__name__}",
                       f"the meta kernel raised {type(err).__name__} on {where} tensors: "
                       f"{str(err).strip().splitlines()[0] if str(err).strip() else ''}") from err
        return list(result) if isinstance(result, (tuple, list)) else [result]


def _describe(x: Any) -> str:
    import torch

    if isinstance(x, torch.Tensor):
        return str(tuple(int(d) for d in x.shape))
    if isinstance(x, (int, torch.SymInt)):
        return str(int(x))
    return "nothing" if x is None else type(x).__name__


def _fmt_value(v: Any) -> str:
    return str(tuple(v)) if isinstance(v, tuple) else str(v)


def _dtype(x: Any) -> str:
    return str(x.dtype).replace("torch.", "") if hasattr(x, "dtype") else "-"


def _density(x: Any) -> str:
    # The contract language states no strides, so only density is compared (both sides are dense tensors).
    if not hasattr(x, "is_contiguous"):
        return "-"
    return "contiguous" if x.is_contiguous() else f"strided{tuple(x.stride())}"


# ---------------------------------------------------------------------------------------------------------
# Targets and explicit examples


def verify_points(contract: Contract, violations: Iterable[Mapping[str, Any]],
                  case_filter: Callable[[BoundCase], bool] | None = None) -> tuple[list[Example], list[str]]:
    """Explicit examples from verify's violations (counterexample and witness) and the guard texts."""
    by_id = {c.id: c for c in contract.cases() if case_filter is None or case_filter(c)}
    examples: list[Example] = []
    seen: set[str] = set()
    guards: list[str] = []
    for v in violations:
        if v.get("expr"):
            guards.append(str(v["expr"]))
        case = by_id.get(str(v.get("case", "")))
        if case is None:
            continue
        for point in (v.get("counterexample"), v.get("witness")):
            if not point:
                continue
            ex = example_at(case, point)
            if ex is not None and ex.text() not in seen:
                seen.add(ex.text())
                examples.append(ex)
    return examples, guards


def _verify_violations(contract: Contract, kernel: Kernel, options: FuzzOptions) -> tuple[list[dict], str]:
    if options.from_verify:
        try:
            with open(options.from_verify, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError) as err:
            raise TargetError(f"--from-verify {options.from_verify}: cannot read a verify JSON report ({err})") \
                from None
        if not isinstance(data, dict) or not isinstance(data.get("violations"), list):
            raise TargetError(f"--from-verify {options.from_verify}: no 'violations' list (expected the output "
                              "of shapecheck verify op --format json)")
        return data["violations"], f"{data.get('verdict', '?')} (from {options.from_verify})"
    if not options.verify_examples:
        return [], ""
    from .verify import Options, verify_contract

    report = verify_contract(contract, kernel, Options(eras=options.eras, cases=options.cases))
    return [v.to_json() for v in report.violations if not v.suppressed], \
        f"{report.verdict.value} ({len(report.violations)} violations, {report.seconds:.2f}s)"


# ---------------------------------------------------------------------------------------------------------
# Running


@dataclass
class Prepared:
    """Everything a fuzz run needs: the checker, the strategy and the explicit examples."""

    contract: Contract
    kernel: Kernel
    options: FuzzOptions
    checker: Checker
    strategy: Any
    explicit: list[Example] = field(default_factory=list)
    verify: str = ""


def prepare(contract: Contract, kernel: Kernel, options: FuzzOptions = FuzzOptions(),
            replay: Callable[[str], str] | None = None) -> Prepared:
    """Build the checker and the strategy (and run verify for explicit examples, unless switched off)."""
    for era in options.eras:
        if era not in contract.eras:
            raise TargetError(f"--era {era!r}: the contract has eras {', '.join(contract.eras)}")
    checker = Checker(contract, kernel, eras=options.eras, max_elements=options.max_elements, replay=replay)

    def wanted(case: BoundCase) -> bool:
        if options.cases and not any(s in case.id for s in options.cases):
            return False
        return checker.applicable(case)

    if not any(wanted(c) for c in contract.cases()):
        raise TargetError(f"no case of {contract.file} can be fuzzed with {kernel.name}"
                          + (f" (case filter {', '.join(options.cases)})" if options.cases else ""))
    violations, verify = _verify_violations(contract, kernel, options)
    explicit, guards = verify_points(contract, violations, wanted)
    era = options.eras[0] if len(options.eras) == 1 else None
    try:
        strategy = cases(contract, path=options.path, era=era, max_elements=options.max_elements,
                         max_side=options.max_side, constants=guards, case_filter=wanted, timings=checker.timings)
    except InvalidArgument as err:
        raise TargetError(str(err)) from None
    return Prepared(contract, kernel, options, checker, strategy, explicit, verify)


def run(prep: Prepared, replay_run: str = "") -> FuzzReport:
    """Run the Hypothesis search (quiet, no database, seeded) and collect the shrunk failures."""
    options = prep.options
    seed = options.seed if options.seed is not None else random.randrange(2**31)
    checker = prep.checker

    def body(example: Example) -> None:
        checker.check(example)

    test = given(example=prep.strategy)(body)
    for ex in reversed(prep.explicit):
        test = hyp_example(example=ex)(test)
    test = settings(max_examples=options.examples, database=None, deadline=None, verbosity=Verbosity.quiet,
                    print_blob=False)(test)
    test = hyp_seed(seed)(test)
    failures: list[Failure] = []
    start = time.perf_counter()
    try:
        test()
    except InvalidArgument as err:  # e.g. no case reaches --path within the size bound
        raise TargetError(str(err)) from None
    except Exception as err:  # one FuzzFailure, or an ExceptionGroup of them (one per kind, each shrunk)
        leaves = _leaves(err)
        if not all(isinstance(e, FuzzFailure) for e in leaves):
            raise
        failures.extend(e.failure for e in leaves)
    seconds = time.perf_counter() - start
    timings = {k: round(v, 4) for k, v in checker.timings.items()}
    timings["other"] = round(max(seconds - sum(checker.timings.values()), 0.0), 4)
    return FuzzReport(prep.contract.op, prep.contract.file, prep.kernel.name, "fail" if failures else "pass",
                      seed, checker.count, len(prep.explicit), seconds, timings, tuple(failures),
                      dict(checker.notes.most_common()), dict(sorted(checker.paths.items())),
                      checker.reference_note, prep.verify, replay_run.replace("{seed}", str(seed)))


def _leaves(group: BaseException) -> list[BaseException]:
    subs = getattr(group, "exceptions", None)
    if subs is None:
        return [group]
    return [leaf for e in subs for leaf in _leaves(e)]


def replay_command(op: str, *, contract: str | None = None, meta: str | None = None,
                   meta_source: str | None = None, eras: Iterable[str] = (), extra: Iterable[str] = ()) -> str:
    parts = ["shapecheck", "fuzz", "op", op]
    if contract:
        parts += ["--contract", contract]
    if meta:
        parts += ["--meta", meta]
    if meta_source:
        parts += ["--meta-source", meta_source]
    for era in eras:
        parts += ["--era", era]
    return " ".join([*map(shlex.quote, parts), *extra])


def fuzz_op(op: str, *, contract: str | None = None, meta: str | None = None, meta_source: str | None = None,
            options: FuzzOptions = FuzzOptions()) -> FuzzReport:
    """The Python API behind ``shapecheck fuzz op``."""
    c, kernel = load_target(op, contract, from_options(meta, meta_source))
    base = replay_command(op, contract=contract, meta=meta, meta_source=meta_source, eras=options.eras)

    def replay(text: str) -> str:
        return f"{base} --example {shlex.quote(text)}"

    prep = prepare(c, kernel, options, replay)
    extra = [f"--seed {{seed}} --examples {options.examples}"]
    extra += [f"--case {shlex.quote(text)}" for text in options.cases]
    if options.path:
        extra.append(f"--path {shlex.quote(options.path)}")
    if options.max_elements != DEFAULT_MAX_ELEMENTS:
        extra.append(f"--max-elements {options.max_elements}")
    if options.max_side != DEFAULT_MAX_SIDE:
        extra.append(f"--max-side {options.max_side}")
    if options.from_verify:
        extra.append(f"--from-verify {shlex.quote(options.from_verify)}")
    elif not options.verify_examples:
        extra.append("--no-verify-examples")
    return run(prep, " ".join([base, *extra]))


def check_examples(op: str, texts: Iterable[str], *, contract: str | None = None, meta: str | None = None,
                   meta_source: str | None = None, options: FuzzOptions = FuzzOptions()) -> FuzzReport:
    """Replay explicit examples (``Example.text()``) without Hypothesis."""
    from .strategies import parse_example

    c, kernel = load_target(op, contract, from_options(meta, meta_source))
    checker = Checker(c, kernel, eras=options.eras, max_elements=options.max_elements)
    examples = []
    for text in texts:
        try:
            examples.append(parse_example(c, text))
        except ValueError as err:
            raise TargetError(f"--example {text!r}: {err}") from None
    failures = []
    start = time.perf_counter()
    for ex in examples:
        if not checker.applicable(ex.case):
            raise TargetError(f"--example {ex.text()!r}: {kernel.name} cannot be called on case {ex.case.id}")
        try:
            checker.check(ex)
        except FuzzFailure as err:
            failures.append(err.failure)
    seconds = time.perf_counter() - start
    return FuzzReport(c.op, c.file, kernel.name, "fail" if failures else "pass", 0, checker.count, len(examples),
                      seconds, {k: round(v, 4) for k, v in checker.timings.items()}, tuple(failures),
                      dict(checker.notes), dict(sorted(checker.paths.items())), checker.reference_note)


# ---------------------------------------------------------------------------------------------------------
# pytest entry points


def _prepared_for_pytest(op: str, kwargs: dict[str, Any]) -> Prepared:
    target = {k: kwargs.pop(k) for k in ("contract", "meta", "meta_source") if k in kwargs}
    eras = kwargs.pop("eras", ())
    options = FuzzOptions(eras=(eras,) if isinstance(eras, str) else tuple(eras), **kwargs)
    c, kernel = load_target(op, target.get("contract"), from_options(target.get("meta"), target.get("meta_source")))
    base = replay_command(op, eras=options.eras, **target)
    prep = prepare(c, kernel, options, lambda text: f"{base} --example {shlex.quote(text)}")
    _warm_up(prep)
    return prep


def _warm_up(prep: Prepared) -> None:
    """One check at the smallest point of the first case, outside Hypothesis: the first calls into
    FakeTensorMode and metal_ref cost a few hundred ms, which a Hypothesis deadline would count."""
    for case in prep.contract.cases():
        if not prep.checker.applicable(case):
            continue
        ex = example_at(case, {d.name: d.min for d in prep.contract.dims})
        if ex is not None:
            try:
                prep.checker.check(ex)
            except Exception:  # noqa: BLE001 - a failure here is found again, and reported, by the test
                pass
            prep.checker.count = 0
            prep.checker.timings.clear()
            prep.checker.notes.clear()
            prep.checker.paths.clear()
        return


def _wrap(prep: Prepared, test: Callable[[Example], None], digest: str) -> Callable[..., None]:
    test._hypothesis_internal_add_digest = digest.encode()  # one database key per op and target
    wrapped = given(example=prep.strategy)(test)
    for ex in reversed(prep.explicit):
        wrapped = hyp_example(example=ex)(wrapped)
    return wrapped


def fuzz_test(op: str, **kwargs: Any) -> Callable[..., None]:
    """A Hypothesis test for pytest: ``test_my_op = shapecheck.fuzz_test("mylib::op")``.

    Keyword arguments: ``contract``, ``meta``, ``meta_source`` (as ``verify``), and the ``FuzzOptions``
    fields except ``examples``/``seed`` (``eras``, ``cases``, ``path``, ``max_elements``, ``max_side``,
    ``verify_examples``, ``from_verify``). The number of examples, the seed, the deadline and the database
    come from the Hypothesis settings in force (a profile, or ``@settings`` on the returned test).
    ``verify_examples=True`` (the default) runs ``verify`` once, when this is called, to collect explicit
    examples.
    """
    prep = _prepared_for_pytest(op, dict(kwargs))

    def test_fuzz(example: Example) -> None:
        prep.checker.check(example)

    name = "test_fuzz_" + "".join(ch if ch.isalnum() else "_" for ch in op)
    test_fuzz.__name__ = test_fuzz.__qualname__ = name
    return _wrap(prep, test_fuzz, f"{op}|{prep.kernel.name}|{sorted(kwargs.items())}")


def fuzz_given(op: str, **kwargs: Any) -> Callable[[Callable[[Example], None]], Callable[..., None]]:
    """Decorator form of ``fuzz_test``: the decorated ``fn(example)`` runs after the built-in checks pass, for
    checks of your own (``example.arguments("cpu")`` gives the tensors)."""

    def decorate(fn: Callable[[Example], None]) -> Callable[..., None]:
        prep = _prepared_for_pytest(op, dict(kwargs))

        def test(example: Example) -> None:
            prep.checker.check(example)
            fn(example)

        for attr in ("__name__", "__qualname__", "__module__", "__doc__"):
            setattr(test, attr, getattr(fn, attr))
        return _wrap(prep, test, f"{op}|{prep.kernel.name}|{fn.__module__}.{fn.__qualname__}")

    return decorate
