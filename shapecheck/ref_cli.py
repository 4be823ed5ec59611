"""``shapecheck ref check``: check the contract's paths against the metal_ref ports (and real MPS if present)."""

from __future__ import annotations

import sys

import click


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
def ref_check_cmd(op, contract, eras, examples, seed, fmt):
    """Run every path of OP's contract on inputs that satisfy its precondition, with the metal_ref ports:
    dispatch, output-0 shape, values against float64 math, and the documented output 1."""
    import json

    from .contract import find_contract, load_contract, normalize_op
    from .errors import TargetError
    from .refcheck import ref_check, render_text

    try:
        name = normalize_op(op)
    except ValueError:
        raise TargetError(f"{op!r} is not an op name (expected e.g. aten::_x or aten._x)") from None
    path = contract or find_contract(name)
    if path is None:
        raise TargetError(f"no contract for {name} under contracts/ (pass --contract FILE)")
    c = load_contract(path)
    if normalize_op(c.op) != name:
        raise TargetError(f"{path}: the contract is for {c.op}, not {name}")
    unknown = [e for e in eras if e not in c.eras]
    if unknown:
        raise TargetError(f"{path}: no era {unknown[0]!r} (eras: {', '.join(c.eras)})")
    report = ref_check(c, eras=tuple(eras), examples=examples, seed=seed)
    click.echo(json.dumps(report.to_json(), indent=2) if fmt == "json" else render_text(report))
    sys.exit(report.exit_code)
