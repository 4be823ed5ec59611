"""Fuzzing: examples drawn from a contract, run on the kernel under test and on the op's runtime reference
(``reference.reference_for``: ``metal_ref`` for the MPS attention op) -> ``FuzzReport``.

Each example checks (1) the meta kernel's output shapes, on ``meta`` tensors and under a static FakeTensorMode,
against the contract's paths; (2) the runtime's dispatch against the contract and its output 0 against the meta
kernel's (shape, dtype, density); (3) the runtime's values against the float64 math, with ``ref check``'s rule
codes (all three in ``check.Checker``). Proofs (``verify``) cover every size of the meta kernel;
this covers what proofs cannot: that the contract and the meta kernel match the runtime. This module holds
the run: options, explicit examples from verify, the Hypothesis search, the replay commands and the pytest
entry points.
"""

from __future__ import annotations

import random
import shlex
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import Phase, Verbosity, given, settings
from hypothesis import example as hyp_example
from hypothesis import seed as hyp_seed
from hypothesis.errors import InvalidArgument

from .._torch import core as C
from ..contract.model import BoundCase, Contract
from ..errors import TargetError
from ..findings import Finding, Verdict
from ..kernel.load import load_target
from ..kernel.sources import INSTALLED, Kernel, KernelSource, from_options
from ..limits import REPORT_BYTES, read_json
from ..search.strategies import (
    DEFAULT_MAX_ELEMENTS,
    DEFAULT_MAX_SIDE,
    Example,
    cases,
    example_at,
)
from .check import Checker as Checker
from .fuzz_report import CHECKS as CHECKS
from .fuzz_report import Failure as Failure
from .fuzz_report import FakeShapeFailure as FakeShapeFailure
from .fuzz_report import FuzzFailure as FuzzFailure
from .fuzz_report import FuzzReport as FuzzReport
from .fuzz_report import KernelErrorFailure as KernelErrorFailure
from .fuzz_report import MetaShapeFailure as MetaShapeFailure
from .fuzz_report import RuntimeFailure as RuntimeFailure
from .fuzz_report import ValueFailure as ValueFailure
from .reference import MetalReference as MetalReference
from .reference import Unmodelled as Unmodelled


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
    device: str = "cpu"  # where the op's eager kernel runs, when it is the runtime reference
    imports: tuple[str, ...] = ()  # what registers the op (--import): replay commands name them
    # where torch.export and plain FakeTensorMode run different kernels, both count (else export's; the other's
    # failures are notes)
    both_modes: bool = False


# ---------------------------------------------------------------------------------------------------------
# Targets and explicit examples


def verify_points(contract: Contract, violations: Iterable[Finding],
                  case_filter: Callable[[BoundCase], bool] | None = None) -> tuple[list[Example], list[str]]:
    """Explicit examples from verify's violations (counterexample and witness) and the guard texts."""
    by_id = {c.id: c for c in contract.cases() if case_filter is None or case_filter(c)}
    examples: list[Example] = []
    seen: set[str] = set()
    guards: list[str] = []
    for v in violations:
        if v.expr:
            guards.append(v.expr)
        case = by_id.get(v.case)
        if case is None:
            continue
        for point in (v.counterexample, v.witness):
            if not point:
                continue
            ex = example_at(case, point)
            if ex is not None and ex.text() not in seen:
                seen.add(ex.text())
                examples.append(ex)
    return examples, guards


def _same_contract(file: str, data: dict, contract: Contract, found: list[Finding]) -> None:
    """A verify report read back must be of this op and this contract: its cases the contract's, its points
    within the dims' ranges. Raises TargetError naming the file (a report of another op is bad input, not a
    run with no examples)."""
    from ..contract.find import normalize_op

    op = data.get("op")
    if not isinstance(op, str) or normalize_op(op) != normalize_op(contract.op):
        raise TargetError(f"--from-verify {file}: op: the report is of {op!r}, not of {contract.op}")
    from ..contract.model import size_names

    cases = {c.id for c in contract.cases()}
    known = set(contract.dim_names) | set(size_names(contract))
    for i, v in enumerate(found):
        if v.case not in cases:
            raise TargetError(f"--from-verify {file}: violations[{i}].case: {v.case!r} is not a case of the contract")
        for key, point in (("counterexample", v.counterexample), ("witness", v.witness or {})):
            for name, value in point.items():
                if name not in known:
                    raise TargetError(f"--from-verify {file}: violations[{i}].{key}.{name}: not a dim of the "
                                      f"contract (its dims: {', '.join(contract.dim_names)})")
                dim = contract.dim(name) if name in contract.dim_names else None
                if dim is not None and not dim.min <= value <= dim.max:
                    raise TargetError(f"--from-verify {file}: violations[{i}].{key}.{name}: {value} is outside "
                                      f"the contract's range [{dim.min}, {dim.max}]")


def _verify_violations(contract: Contract, kernel: Kernel, options: FuzzOptions) -> tuple[list[Finding], str]:
    if options.from_verify:
        data = read_json(options.from_verify, REPORT_BYTES, "--from-verify", "a verify JSON report")
        if not isinstance(data, dict) or not isinstance(data.get("violations"), list):
            raise TargetError(f"--from-verify {options.from_verify}: no 'violations' list (expected the output "
                              "of shapecheck verify op --format json)")
        try:
            found = [Finding.from_json(v) for v in data["violations"]]
        except ValueError as err:
            raise TargetError(f"--from-verify {options.from_verify}: {err}") from None
        _same_contract(options.from_verify, data, contract, found)
        return found, f"{data.get('verdict', '?')} (from {options.from_verify})"
    if not options.verify_examples:
        return [], ""
    from ..prove.verify import Options, verify_contract
    from . import fuzz_crash

    # in a supervised run (the command line's), verify's own child keeps a crash to its case
    report = verify_contract(contract, kernel, Options(eras=options.eras, cases=options.cases),
                             isolate=fuzz_crash.sink is not None)
    from ..rules import counted

    active = [v for v in report.violations if not v.suppressed]
    return active, f"{report.verdict.value} ({counted(active)}, {report.seconds:.2f}s)"


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
    checker = Checker(contract, kernel, eras=options.eras, max_elements=options.max_elements, replay=replay,
                      device=options.device, both_modes=options.both_modes)

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


#: every phase but Hypothesis's ``explain``: it re-runs the shrunk failure with parts of it varied to annotate the
#: exception with which parts matter, notes the quiet run never shows; on a failing SDPA-MPS run it was 30 of 32 s
PHASES = tuple(p for p in Phase if p.name != "explain")


def run(prep: Prepared, replay_run: str = "") -> FuzzReport:
    """Run the Hypothesis search (quiet, no database, seeded) and collect the shrunk failures."""
    options = prep.options
    seed = options.seed if options.seed is not None else random.randrange(2**31)
    checker = prep.checker
    from .fuzz_crash import tell

    tell(("start", prep.contract.op, prep.contract.file, prep.kernel.name, seed, replay_run.replace("{seed}", str(seed)),
          C.TORCH_VERSION))

    def body(example: Example) -> None:
        tell(_named(example, checker))  # a crash of the process then names the example (fuzz_crash)
        checker.check(example)

    test = given(example=prep.strategy)(body)
    for ex in reversed(prep.explicit):
        test = hyp_example(example=ex)(test)
    test = settings(max_examples=options.examples, database=None, deadline=None, verbosity=Verbosity.quiet,
                    print_blob=False, phases=PHASES)(test)
    test = hyp_seed(seed)(test)
    failures: list[Failure] = []
    checker.collected = {}  # guards: kept, not raised, so that the search goes on to the examples' own failures
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
    failures[:0] = checker.collected.values()
    checker.collected = None
    seconds = time.perf_counter() - start
    timings = {k: round(v, 4) for k, v in checker.timings.items()}
    timings["other"] = round(max(seconds - sum(checker.timings.values()), 0.0), 4)
    return FuzzReport(prep.contract.op, prep.contract.file, prep.kernel.name, _verdict(failures, checker.count),
                      seed, checker.count, len(prep.explicit), seconds, timings, tuple(failures),
                      dict(checker.notes.most_common()), dict(sorted(checker.paths.items())),
                      checker.reference_note, prep.verify, replay_run.replace("{seed}", str(seed)),
                      torch=C.TORCH_VERSION)


def _named(ex: Example, checker: Checker) -> tuple:
    return ("example", ex.text(), ex.case.id, dict(ex.values), ex.seed, checker.replay(ex.text()) if checker.replay else "")


def _leaves(group: BaseException) -> list[BaseException]:
    subs = getattr(group, "exceptions", None)
    if subs is None:
        return [group]
    return [leaf for e in subs for leaf in _leaves(e)]


def replay_command(op: str, *, contract: str | None = None, source: KernelSource = INSTALLED,
                   eras: Iterable[str] = (), extra: Iterable[str] = (), imports: Iterable[str] = ()) -> str:
    """A complete command that runs the fuzz run (or one example) again: what registers the op (``--import``),
    the contract, the kernel source, the eras."""
    parts = ["shapecheck", "fuzz", "op", op]
    for spec in imports:
        parts += ["--import", spec]
    if contract:
        parts += ["--contract", contract]
    parts += source.cli_args()
    for era in eras:
        parts += ["--era", era]
    return " ".join([*map(shlex.quote, parts), *extra])


def registering_modules(kernel: Kernel) -> tuple[str, ...]:
    """For a replay command without ``--import``: the file that defines a custom op's fake kernel (the
    module that registers the op), when the op is not torch's own; () for torch's ops."""
    from pathlib import Path

    from ..paths import relpath

    loc = kernel.definition
    if kernel.op is None or loc is None or loc.file.startswith(C.TORCH_DIR) or kernel.op.name().split("::")[0] in ("aten", "prims"):
        return ()
    return (relpath(loc.file),) if Path(loc.file).is_file() else ()


def fuzz_op(op: str, *, contract: str | None = None, source: KernelSource | None = None, meta: str | None = None,
            meta_source: str | None = None, options: FuzzOptions = FuzzOptions()) -> FuzzReport:
    """The Python API behind ``shapecheck fuzz op``. The kernel comes from ``source``, or from ``meta`` /
    ``meta_source`` as on the command line, else the installed torch."""
    source = source or from_options(meta, meta_source)
    c, kernel = load_target(op, contract, source)
    base = replay_command(op, contract=contract, source=source, eras=options.eras,
                          imports=options.imports or registering_modules(kernel))

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


def check_examples(op: str, texts: Iterable[str], *, contract: str | None = None, source: KernelSource | None = None,
                   meta: str | None = None, meta_source: str | None = None,
                   options: FuzzOptions = FuzzOptions()) -> FuzzReport:
    """Replay explicit examples (``Example.text()``) without Hypothesis."""
    from ..search.strategies import parse_example

    c, kernel = load_target(op, contract, source or from_options(meta, meta_source))
    checker = Checker(c, kernel, eras=options.eras, max_elements=options.max_elements, device=options.device,
                      both_modes=options.both_modes)
    examples = []
    for text in texts:
        try:
            examples.append(parse_example(c, text))
        except ValueError as err:
            raise TargetError(f"--example {text!r}: {err}") from None
    failures = []
    start = time.perf_counter()
    from .fuzz_crash import tell

    tell(("start", c.op, c.file, kernel.name, 0, "", C.TORCH_VERSION))
    for ex in examples:
        if not checker.applicable(ex.case):
            raise TargetError(f"--example {ex.text()!r}: {kernel.name} cannot be called on case {ex.case.id}")
        tell(_named(ex, checker))
        try:
            checker.check(ex)
        except FuzzFailure as err:
            failures.append(err.failure)
    seconds = time.perf_counter() - start
    return FuzzReport(c.op, c.file, kernel.name, _verdict(failures, checker.count), 0, checker.count, len(examples),
                      seconds, {k: round(v, 4) for k, v in checker.timings.items()}, tuple(failures),
                      dict(checker.notes), dict(sorted(checker.paths.items())), checker.reference_note,
                      torch=C.TORCH_VERSION)


def _verdict(failures: list, ran: int) -> Verdict:
    """fail on a failure; a run that checked no example (each beyond what torch can address) is inconclusive."""
    return Verdict.FAIL if failures else Verdict.PASS if ran else Verdict.INCONCLUSIVE
