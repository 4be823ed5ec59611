"""``shapecheck ref check``: check the contract's paths against the metal_ref ports (and real MPS if present)."""

from __future__ import annotations

import sys

import click

from .cli_options import max_cases_option


@click.group("ref")
def ref() -> None:
    """Reference kernels (metal_ref) against contracts."""


@ref.command("check")
@click.argument("op")
@click.option("--contract", type=click.Path(dir_okay=False), help="Contract file (default: contracts/<ns>/<op>.toml).")
@click.option("--era", "eras", multiple=True, metavar="ERA", help="Only the contract paths of this era.")
@click.option("--examples", type=click.IntRange(1, 10_000), default=24, show_default=True,
              help="Inputs per contract path (boundary values first).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@max_cases_option
def ref_check_cmd(op, contract, eras, examples, seed, fmt):
    """Run every path of OP's contract on inputs that satisfy its precondition, with the metal_ref ports:
    dispatch, output-0 shape, values against float64 math, and the documented output 1."""
    import json

    from .errors import TargetError
    from .refcheck import ref_check, render_text
    from .target import load_op_contract

    c = load_op_contract(op, contract)
    path = c.file
    unknown = [e for e in eras if e not in c.eras]
    if unknown:
        raise TargetError(f"{path}: no era {unknown[0]!r} (eras: {', '.join(c.eras)})")
    report = ref_check(c, eras=tuple(eras), examples=examples, seed=seed)
    click.echo(json.dumps(report.to_json(), indent=2) if fmt == "json" else render_text(report))
    sys.exit(report.exit_code)
