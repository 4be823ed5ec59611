"""``shapecheck ref check``: check the contract's paths against the op's runtime reference (the metal_ref ports,
and real MPS if present; or the op's own eager kernel)."""

from __future__ import annotations

import sys

import click

from ..rules import RuleCode as C
from .options import (
    check_device,
    check_outputs,
    contract_option,
    debug_option,
    emit,
    import_option,
    max_cases_option,
    options,
    output_options,
)

#: what ref check reports: its runtime rules, the meta kernel against the runtime (SC015) and [[rejects]] (SC021)
_RUNTIME_RULES = f"{C.DISPATCH_MISMATCH}-{C.META_RUNTIME_MISMATCH}, {C.META_ACCEPTS_REJECTED_INPUT}"

REF_HELP = f"""Exit codes: 0 every sampled input agrees with the contract, 1 a finding ({_RUNTIME_RULES}) not accepted by a
[[suppress]] table, 3 inconclusive (nothing could be checked), 2 bad input (contract, op without a runtime
reference, unknown era, usage), 4 internal error (a bug in shapecheck)."""


@click.group("ref", epilog=REF_HELP)
def ref() -> None:
    """Reference kernels (metal_ref) against contracts."""


@ref.command("check", epilog=REF_HELP)
@click.argument("op")
@import_option("ref")
@contract_option("ref")
@options("ref", "eras", "examples", "seed", "device")
@output_options("ref")
@max_cases_option("ref")
@debug_option("ref")
def ref_check_cmd(op, imports, contract, eras, examples, seed, device, fmt, outputs, quiet):
    """Run every path of OP's contract on inputs that satisfy its precondition, with the op's runtime
    reference. metal_ref (the MPS op): dispatch, output-0 shape, values against float64 math, and the
    documented output 1. The op's own eager kernel (any op with one, on --device): every output against the
    meta kernel (shape, dtype, significant strides, which side raises), and the [[rejects]] regions."""
    from .._torch import core as C
    from ..errors import TargetError
    from ..kernel.load import import_modules, load_op_contract
    from ..result.run import RefRun
    from ..runtime.refcheck import ref_check

    check_outputs(outputs)
    check_device(device)
    import_modules(imports)

    c = load_op_contract(op, contract)
    path = c.file
    unknown = [e for e in eras if e not in c.eras]
    if unknown:
        raise TargetError(f"{path}: no era {unknown[0]!r} (eras: {', '.join(c.eras)})")
    from .._torch.audit import cuda_fork_unsafe
    from ..runtime.ref_crash import crash_safe_ref

    # a kernel that crashes its process on an input costs that input only (runtime/ref_crash.py)
    report = crash_safe_ref(lambda resume: ref_check(c, eras=tuple(eras), examples=examples, seed=seed,
                                                     device=device, resume=resume),
                            fork=not (device.startswith("cuda") and cuda_fork_unsafe()))
    emit(RefRun.of(c.info, report, C.TORCH_VERSION), fmt, outputs, quiet=quiet)
    sys.exit(report.exit_code)
