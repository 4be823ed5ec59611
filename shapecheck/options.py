"""Every command option, declared once (issue 21 item 4). Torch-free and z3-free.

``DECLARED`` holds one ``Option`` per option and command group: its click parameter name, flag, default, the
commands that take it, whether it changes a result, and its ``[tool.shapecheck]`` key. From it derive:

- the click options of every command (``cli/options.declared``; ``tests/unit/test_options.py`` checks that
  each command has exactly the declared options, with the declared defaults);
- the project file's keys and what each sets (``config.OPTIONS``);
- the run-options objects the engine takes (``VerifyOptions``, which ``prove/verify.py`` calls ``Options``;
  ``ci/gate.GateOptions``), whose fields are declared options or carry their own ``result`` classification;
- the result cache's key (``result_options``): every field of a run-options object that changes a result, and
  none that does not (``--jobs``). A field nobody classified is refused, so a new option cannot be forgotten
  by the cache.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

#: the commands, as their click paths spell them
COMMANDS = ("verify", "gate", "fuzz", "ref", "audit", "contract check", "contract draft")
_RESULT = "result"  # a dataclass field's metadata key for a field that is no command-line option


@dataclass(frozen=True)
class Option:
    """One option of the ``commands`` it belongs to. ``flag`` is its long flag (``--x/--no-x`` for a boolean
    pair); ``config`` its key in ``[tool.shapecheck]`` (None: not settable there); ``result`` whether its value
    changes what a run finds (so a cached result must be keyed by it); ``type`` a click type or the name of one
    of ``cli/options``'s own types (``"FORMAT=FILE"``, ``"K/N"``, ...); ``extra`` any other click keyword."""

    name: str
    flag: str
    commands: tuple[str, ...]
    result: bool
    default: Any = None
    help: str = ""
    config: str | None = None
    type: Any = None
    multiple: bool = False
    is_flag: bool = False
    short: str | None = None
    metavar: str | None = None
    show_default: bool = False
    extra: tuple[tuple[str, Any], ...] = ()


def _int_range(lo: int | None, hi: int | None = None) -> Any:
    import click

    return click.IntRange(lo, hi)


def _choice(*values: str) -> Any:
    import click

    return click.Choice(values)


def _path(**kw: Any) -> Any:
    import click

    return click.Path(**kw)


_ENGINE = ("verify", "gate")
_LOADERS = ("verify", "gate", "fuzz", "ref", "audit", "contract check", "contract draft")
_ONE_OP = ("verify", "fuzz", "ref")
_CASE_HELP = "Only cases whose id contains TEXT."
_FORMATS = ("text", "json", "github", "sarif", "junit")  # render.ci.FORMATS (a test checks they agree)

DECLARED: tuple[Option, ...] = (
    # what is checked
    Option("imports", "--import", _LOADERS, True, (), config="imports", multiple=True, metavar="MODULE_OR_FILE",
           help="Import this module or file first (what registers the ops: a custom-op library, a file of fake "
                "kernels); repeatable."),
    Option("contract", "--contract", _ONE_OP, True, config=None, type=_path(dir_okay=False),
           help="Contract file (default: contracts/<ns>/<op>.toml)."),
    Option("meta", "--meta", ("verify", "fuzz"), True, type="FILE.py:FUNC", metavar="FILE.py:FUNC"),
    Option("meta_source", "--meta-source", ("verify", "gate", "fuzz", "audit"), True, config="meta-source",
           metavar="FILE.py"),
    Option("eras", "--era", ("verify", "ref"), True, (), config="era", multiple=True, metavar="ERA",
           help="Only the contract paths of this era."),
    Option("eras", "--era", ("fuzz",), True, (), config="era", multiple=True, metavar="ERA",
           help="Only the contract paths and runtime of this era."),
    Option("cases", "--case", ("verify", "fuzz"), True, (), multiple=True, metavar="TEXT", help=_CASE_HELP),
    # a contract past the limit is refused: a result stored under another limit must not answer
    Option("max_cases", "--max-cases", ("verify", "gate", "fuzz", "ref", "contract check"), True, None,
           config="max-cases", type=_int_range(1, 10**9), metavar="N"),
    # how verify explores and proves
    Option("max_traces", "--max-traces", ("verify",), True, None, config="max-traces", type=_int_range(1, 10_000),
           help="Traces per case when exploring the kernel's guards [default: 64; 32 with --explore]."),
    Option("max_traces", "--max-traces", ("gate",), True, 64, config="max-traces", type=_int_range(1, 10_000),
           show_default=True, help="Traces per case when exploring the kernel's guards."),
    Option("max_traces", "--max-traces", ("audit",), True, 12, config="max-traces", type=_int_range(1, 1000),
           show_default=True, help="Traces per op when exploring its guards."),
    Option("timeout_ms", "--timeout-ms", _ENGINE, True, 10_000, config="timeout-ms", type=_int_range(100, 600_000),
           show_default=True, help="z3 timeout per query; a timeout makes the verdict inconclusive."),
    Option("full", "--full", ("verify",), True, False, is_flag=True,
           help="Explore every case guard by guard, also one whose first guard repeats an earlier case's."),
    Option("explore", "--explore", ("verify",), True, False, is_flag=True,
           help="Map every meta-kernel path of every case: region, example, outputs, overlapping contract paths, "
                "shape-polymorphism breaks."),
    Option("explore", "--explore", ("gate",), True, False, is_flag=True,
           help="Explore every case in full and map its meta-kernel paths."),
    Option("confirm_export", "--confirm-export", ("verify",), True, False, is_flag=True,
           help="Also run torch.export(strict=True) on failing cases and a sample of passing ones, with the "
                "contract's dynamic dims as Dims, and report agreement."),
    Option("budget", "--timeout", ("verify",), True, (), type="[case=|run=]S", multiple=True, metavar="[case=|run=]S",
           help="Time budget in seconds: per case (S or case=S) and per run (run=S); repeatable. A case over its "
                "budget is inconclusive; over the run's, the cases done are reported and the rest are not checked "
                "(exit 3 unless something fails). Not z3's --timeout-ms."),
    Option("show_obligations", "--show-obligations", ("verify",), True, False, is_flag=True,
           help="List, per case, every obligation discharged: what is proved, its premises, the kernel line, the "
                "contract key, and whether it was proved."),
    Option("debug", "--debug", ("verify", "gate", "fuzz", "ref", "audit"), False, False, is_flag=True,
           help="Print the full traceback of an internal error (exit 4) on stderr; the same as SHAPECHECK_DEBUG=1."),
    Option("both_modes", "--both-modes", ("verify",), True, False, is_flag=True,
           help="Check plain FakeTensorMode's run too (its own kernel, or export's without the Python dispatcher) "
                "and fail on either's findings; by default the kernel torch.export runs decides."),
    Option("both_modes", "--both-modes", ("audit",), True, False, is_flag=True,
           help="Where plain FakeTensorMode runs another kernel than torch.export (upsample_nearest2d's meta "
                "registration), count that kernel's disagreements with the eager kernel too; by default they are "
                "shown and the kernel torch.export runs decides."),
    Option("both_modes", "--both-modes", ("fuzz",), True, False, is_flag=True,
           help="Where torch.export and plain FakeTensorMode run different kernels (both are run), fail on "
                "either's failures; by default the kernel torch.export runs decides."),
    # how fast, from where (never the result)
    Option("jobs", "--jobs", ("verify", "gate", "audit"), False, 0, config="jobs", short="-j",
           type=_int_range(0, 64), show_default=True,
           help="Processes for tracing the cases (0: one per usable core on Linux, 1 elsewhere; 1: none). Reports "
                "do not depend on it."),
    Option("cache", "--cache/--no-cache", ("verify", "gate", "audit"), False, True, config="cache", show_default=True,
           help="Answer from the result cache when the kernel (and the helpers it reaches), the contract, the "
                "options, torch and shapecheck are unchanged; store the result otherwise (docs/cache.md)."),
    Option("shard", "--shard", ("gate", "audit"), False, "1/1", type="K/N", show_default=True),
    # how the result is shown (never the result)
    Option("fmt", "--format", ("verify", "gate", "fuzz", "ref"), False, "text", config="format",
           type=_choice(*_FORMATS), show_default=True, help="The report on stdout."),
    Option("fmt", "--format", ("audit",), False, "text", config="format",
           type=_choice("text", "json", "sarif", "github"), show_default=True, help="The report on stdout."),
    Option("outputs", "--output", ("verify", "gate", "fuzz", "ref"), False, (), config="output", type="FORMAT=FILE",
           multiple=True, metavar="FORMAT=FILE",
           help="Also write the report in FORMAT to FILE (- for stdout, instead of --format); repeatable."),
    Option("outputs", "--output", ("audit",), False, (), config="output", multiple=True, metavar="FORMAT=FILE",
           help="Also write the report in FORMAT (text, json, sarif, github) to FILE; repeatable."),
    Option("quiet", "--quiet", ("verify", "gate", "fuzz", "ref"), False, False, config="quiet", short="-q",
           is_flag=True, help="Text output: only the verdict and what fails (no suppressed findings, no notes)."),
    Option("quiet", "--quiet", ("audit",), False, False, config="quiet", short="-q", is_flag=True,
           help="Text output: the findings and the summary only."),
    Option("context", "--context", ("verify",), False, 2, config="context", type=_int_range(0, 20), show_default=True,
           help="Source lines shown around each violation (text format)."),
    Option("junit", "--junit", ("gate",), False, type=_path(dir_okay=False, allow_dash=True), metavar="FILE",
           help="Write a JUnit XML report (as --output junit=FILE)."),
    Option("sarif", "--sarif", ("gate",), False, type=_path(dir_okay=False, allow_dash=True), metavar="FILE",
           help="Write a SARIF 2.1.0 report (as --output sarif=FILE)."),
    Option("json_file", "--json", ("gate",), False, type=_path(dir_okay=False, allow_dash=True), metavar="FILE",
           help="Write the JSON report, verify's JSON per contract (as --output json=FILE)."),
    # baselines: applied to a result after it is made (the cached result is the same)
    Option("baseline", "--baseline", ("gate",), False, config="baseline", type=_path(dir_okay=False), metavar="FILE",
           help="Fail only on findings that are not in this baseline (written by --write-baseline)."),
    Option("baseline", "--baseline", ("audit",), False, config="baseline", metavar="FILE",
           help="Fail only on findings not in FILE; a missing FILE is written with today's findings."),
    Option("write_baseline", "--write-baseline", ("gate",), False, type=_path(dir_okay=False), metavar="FILE",
           help="Record today's findings in FILE as the baseline, then report as --baseline FILE would."),
    # fuzz and ref check (not cached; classified all the same)
    Option("examples", "--examples", ("fuzz",), True, 200, config="examples", type=_int_range(1, 1_000_000),
           show_default=True, help="Examples to generate (Hypothesis max_examples; shrinking runs more)."),
    Option("examples", "--examples", ("ref",), True, 24, config="examples", type=_int_range(1, 10_000),
           show_default=True, help="Inputs per contract path (boundary values first)."),
    Option("seed", "--seed", ("fuzz",), True, None, config="seed", type=_int_range(0),
           help="Seed of the run (default: random, reported)."),
    Option("seed", "--seed", ("ref",), True, 0, config="seed", type=int, show_default=True),
    Option("path", "--path", ("fuzz",), True, metavar="ID[@ERA]", help="Aim every example at this contract path."),
    Option("max_elements", "--max-elements", ("fuzz",), True, None, config="max-elements", type=_int_range(1),
           help="Bound on the elements of every tensor an example implies [default: 262144]."),
    Option("max_side", "--max-side", ("fuzz",), True, None, config="max-side", type=_int_range(1),
           help="Bound on each dim, raised to just above the constants it is compared with [default: 64]."),
    Option("explicit", "--example", ("fuzz",), True, (), multiple=True, metavar="CASE;DIMS[;seed=N]",
           help="Replay this example (as printed for a failure) instead of generating; repeatable."),
    Option("verify_examples", "--verify-examples/--no-verify-examples", ("fuzz",), True, True, show_default=True,
           help="Run verify first and retry its counterexamples as explicit examples."),
    Option("from_verify", "--from-verify", ("fuzz",), True, type=_path(dir_okay=False), metavar="FILE",
           help="Take the explicit examples from a saved 'verify op --format json' report instead."),
    Option("device", "--device", ("fuzz", "ref", "audit"), True, "cpu", type=_choice("cpu", "cuda"), show_default=True,
           help="Where the op's eager kernel runs when it is the runtime reference (cuda: a GPU; exit 2 where there "
                "is none). metal_ref runs on cpu only."),
    # audit and contract draft
    Option("patterns", "--ops", ("audit",), True, (), multiple=True, metavar="GLOB",
           help="Audit only ops matching GLOB (ns::name.overload, e.g. 'aten::cross*'); repeatable."),
    Option("draft_dir", "--draft", ("audit",), False, metavar="DIR",
           help="Also write a draft contract per audited op under DIR/<ns>/<name>.<overload>.toml (dims, arguments, "
                "inferred requires, a path per trace)."),
    Option("differential", "--eager/--no-eager", ("audit",), True, True, show_default=True,
           help="Compare the fake with the eager kernel on the same inputs at drawn sizes (--no-eager: the guards "
                "only)."),
    Option("variants", "--variants", ("audit",), True, 6, config="variants", type=_int_range(0, 64), show_default=True,
           help="Argument combinations per op beyond its first inputs (flags on together with a probability "
                "above 0, the first tensor a rank up, bools flipped, optionals present and absent, other small "
                "ints), each traced and compared."),
    Option("op_timeout", "--op-timeout", ("audit",), False, 300, config="op-timeout", type=_int_range(0),
           show_default=True, metavar="SECONDS",
           help="Wall-clock seconds one op's audit may take (0: no bound); an op past it is stopped, reported "
                "as not run or explored in part (inconclusive), and the other ops go on."),
    Option("samples", "--samples", ("audit",), True, config="samples", metavar="MODULE:FUNCTION",
           help="The project's sample calls: FUNCTION(op) returns a list of (args, kwargs) (usually set in "
                "[tool.shapecheck.audit])."),
    Option("out", "--out", ("contract draft",), False, type=_path(dir_okay=False),
           help="Write the draft to this file (default: print it)."),
    Option("ranks", "--rank", ("contract draft",), True, (), type="ARG=N", multiple=True, metavar="ARG=N",
           help="The rank of a tensor argument (the length of a SymInt[] or Tensor[] one); repeatable. Default: "
                "from a sample call of the meta kernel."),
    Option("no_trace", "--no-trace", ("contract draft",), True, False, is_flag=True,
           help="Do not trace the meta kernel: outputs unspecified, no requires."),
)


def declared(command: str, name: str) -> Option:
    """The declaration of ``command``'s option ``name`` (KeyError when it has none)."""
    for o in DECLARED:
        if o.name == name and command in o.commands:
            return o
    raise KeyError(f"{command}: no option {name!r} is declared (shapecheck/options.py)")


def of_command(command: str) -> dict[str, Option]:
    """Every option ``command`` takes, by parameter name."""
    return {o.name: o for o in DECLARED if command in o.commands}


def config_keys() -> dict[str, str]:
    """``[tool.shapecheck]`` key -> parameter name, for every option a project file may set."""
    return {o.config: o.name for o in DECLARED if o.config is not None}


def changes_result(name: str) -> bool:
    """Whether the option ``name`` changes a result (the same for every command that takes it)."""
    found = {o.result for o in DECLARED if o.name == name}
    if len(found) != 1:
        raise KeyError(f"option {name!r}: declared {'nowhere' if not found else 'both ways'} (shapecheck/options.py)")
    return found.pop()


def result_options(options: Any) -> dict[str, Any]:
    """The cache key's part for a run-options dataclass: each field that changes a result, by name (tuples as
    lists: JSON). A field is classified by its declaration (``changes_result``) or by its own metadata
    (``field(metadata={"result": ...})`` for one no command line sets); an unclassified field is a
    ``TypeError``, so a new field cannot silently stay out of the key."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(options):
        if _RESULT in f.metadata:
            result = f.metadata[_RESULT]
        else:
            try:
                result = changes_result(f.name)
            except KeyError:
                raise TypeError(f"{type(options).__name__}.{f.name}: neither a declared option nor classified "
                                f"(field(metadata={{'result': ...}})): the result cache cannot tell whether it "
                                f"changes a result") from None
        if result:
            value = getattr(options, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def internal(result: bool, default: Any) -> Any:
    """A dataclass field that no command line sets, classified for the cache key."""
    return field(default=default, metadata={_RESULT: result})


def pick(cls: type, values: Any, **overrides: Any) -> Any:
    """An instance of the run-options dataclass ``cls`` from ``values`` (a mapping of parameter names, or an
    object with those attributes): every field ``values`` has, then ``overrides``."""
    get = values.get if isinstance(values, dict) else (lambda n, d=None: getattr(values, n, d))
    missing = object()
    kw = {f.name: v for f in dataclasses.fields(cls) if (v := get(f.name, missing)) is not missing}
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}
    return cls(**{**kw, **overrides})


@dataclass(frozen=True)
class VerifyOptions:
    """What ``verify`` takes (``prove/verify.py`` calls it ``Options``): the declared options of ``verify op``
    that reach the engine, plus ``export_sample``."""

    max_traces: int = 64  # per case (the CLI's None: 64, 32 with --explore)
    timeout_ms: int = 10_000  # per z3 query
    eras: tuple[str, ...] = ()  # empty: every era
    cases: tuple[str, ...] = ()  # substrings of case ids; empty: every case
    # False: a case whose very first guard repeats a violating first guard of an earlier case is traced on
    # that case's leaf regions (its verdict is already fail; its outputs are still all checked).
    full: bool = False
    explore: bool = False  # build the path map of every case (implies full)
    confirm_export: bool = False  # run torch.export on failing cases and a sample of passing ones
    export_sample: int = internal(True, 2)  # passing cases to confirm
    jobs: int = 1  # processes for the cases' first traces; 0: one per usable core (Linux), see trace/parallel.py
    # where torch.export and plain FakeTensorMode run different kernels, both verdicts count (else export's)
    both_modes: bool = False
    # the case limit the contract was loaded under (``limits.max_cases()``; None: not said). verify does not read
    # it; it is here for the cache key, so that a run that would refuse the contract is not answered from the cache
    max_cases: int | None = None
    budget: tuple[tuple[str, float], ...] = ()  # --timeout: ("case" | "run", seconds) pairs; not z3's timeout_ms
    show_obligations: bool = False  # keep every obligation discharged in its case's result (--show-obligations)

    @property
    def case_timeout(self) -> float | None:
        """Seconds per case (the last ``--timeout S``/``case=S``); None: no limit."""
        return dict(self.budget).get("case")

    @property
    def run_timeout(self) -> float | None:
        """Seconds for the whole run (the last ``--timeout run=S``); None: no limit."""
        return dict(self.budget).get("run")

    def key(self) -> dict[str, Any]:
        """The result cache's options part (``result_options``)."""
        return result_options(self)
