"""``shapecheck fuzz op``: property-based runs of a meta kernel against its contract and the runtime reference.

Only click is imported at module level (``cli.py`` registers the ``fuzz`` group); the engine is imported in
the command callback.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .cli_options import max_cases_option

FUZZ_HELP = """Exit codes: 0 no failure, 1 a check failed (each failure is shrunk and printed with a command that
replays it), 2 bad input (contract, op, kernel file, --example, usage), 4 internal error (a bug in shapecheck)."""


@click.group(epilog=FUZZ_HELP)
def fuzz() -> None:
    """Property-based runs: does the contract (and the meta kernel) match the runtime?"""


@fuzz.command("op", epilog=FUZZ_HELP)
@click.argument("op")
@click.option("--contract", type=click.Path(dir_okay=False), help="Contract file (default: contracts/<ns>/<op>.toml).")
@click.option("--meta", metavar="FILE.py:FUNC", help="Fuzz this Python function as the op's meta kernel.")
@click.option("--meta-source", "meta_source", metavar="FILE.py",
              help="A _meta_registrations.py-style file: fuzz the function it registers for OP.")
@click.option("--examples", type=click.IntRange(1, 1_000_000), default=200, show_default=True,
              help="Examples to generate (Hypothesis max_examples; shrinking runs more).")
@click.option("--seed", type=click.IntRange(0), default=None, help="Seed of the run (default: random, reported).")
@click.option("--era", "eras", multiple=True, metavar="ERA", help="Only the contract paths and runtime of this era.")
@click.option("--case", "cases", multiple=True, metavar="TEXT", help="Only cases whose id contains TEXT.")
@click.option("--path", metavar="ID[@ERA]", help="Aim every example at this contract path.")
@click.option("--max-elements", type=click.IntRange(1), default=None,
              help="Bound on the elements of every tensor an example implies [default: 262144].")
@click.option("--max-side", type=click.IntRange(1), default=None,
              help="Bound on each dim, raised to just above the constants it is compared with [default: 64].")
@click.option("--example", "explicit", multiple=True, metavar="CASE;DIMS[;seed=N]",
              help="Replay this example (as printed for a failure) instead of generating; repeatable.")
@click.option("--verify-examples/--no-verify-examples", default=True, show_default=True,
              help="Run verify first and retry its counterexamples as explicit examples.")
@click.option("--from-verify", type=click.Path(dir_okay=False), metavar="FILE",
              help="Take the explicit examples from a saved 'verify op --format json' report instead.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@max_cases_option
def fuzz_op_cmd(op, contract, meta, meta_source, examples, seed, eras, cases, path, max_elements, max_side, explicit,
                verify_examples, from_verify, fmt):
    """Fuzz OP's meta kernel against its contract, the runtime reference and the math (OP: aten._x).

    Each example checks (1) the meta kernel's output shapes, on meta tensors and under FakeTensorMode,
    against the contract; (2) its output 0 against the runtime reference's (shape, dtype, density);
    (3) the reference's values against the float64 math. Checks 2 and 3 need a reference (metal_ref for
    aten::_scaled_dot_product_attention_math_for_mps) and are skipped, with a note, for other ops.
    """
    from .fuzz import FuzzOptions, check_examples, fuzz_op
    from .strategies import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_SIDE

    options = FuzzOptions(examples=examples, seed=seed, eras=tuple(eras), cases=tuple(cases), path=path,
                          max_elements=max_elements or DEFAULT_MAX_ELEMENTS, max_side=max_side or DEFAULT_MAX_SIDE,
                          verify_examples=verify_examples and not explicit, from_verify=from_verify)
    target = dict(contract=contract, meta=meta, meta_source=meta_source)
    if explicit:
        report = check_examples(op, explicit, options=options, **target)
    else:
        report = fuzz_op(op, options=options, **target)
    click.echo(json.dumps(report.to_json(), indent=2) if fmt == "json" else render_text(report))
    sys.exit(report.exit_code)


def render_text(report: Any) -> str:
    """The text report: a verdict line, the run's figures, then each failure with its replay command."""
    verdict = "PASS" if report.verdict == "pass" else "FAIL"
    lines = [f"{verdict}: {report.op} fuzzed against {report.contract} (kernel: {report.kernel}; "
             f"{report.examples} examples, {report.examples_per_second:.1f} examples/s, {report.seconds:.2f}s"
             + (f", seed {report.seed}" if report.replay else "") + ")"]
    if report.explicit or report.verify:
        lines.append(f"  explicit examples: {report.explicit}" + (f" (verify: {report.verify})" if report.verify else ""))
    lines.append(f"  reference: {report.reference}")
    total = sum(report.timings.values()) or 1.0
    lines.append("  time: " + ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in report.timings.items()))
    if report.paths:
        lines.append("  contract paths hit: " + ", ".join(f"{k} {v}" for k, v in report.paths.items()))
    if report.notes:
        lines.append("  notes (not failures):")
        lines += [f"    {n:6d}  {text}" for text, n in report.notes.items()]
    if report.replay:
        lines.append(f"  replay the run: {report.replay}")
    for f in report.failures:
        lines += ["", f"{f.check}: {f.message}",
                  f"  example:  {f.example}",
                  f"  case:     {f.case}",
                  f"  dims:     {', '.join(f'{k}={v}' for k, v in f.dims.items())}",
                  f"  paths:    {'; '.join(e + ': ' + (', '.join(p) or '-') for e, p in f.paths.items())}"]
        if f.runtime_paths:
            lines.append(f"  runtime:  {'; '.join(f'{e}: {p}' for e, p in f.runtime_paths.items())}")
        lines += [f"  expected: {f.expected}", f"  got:      {f.got}"]
        if f.replay:
            lines.append(f"  replay:   {f.replay}")
    return "\n".join(lines)
