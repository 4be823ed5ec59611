"""``shapecheck fuzz op``: property-based runs of a meta kernel against its contract and the runtime reference.

Only click and the shared options are imported at module level (``cli/main.py`` registers the ``fuzz`` group); the engine is imported in
the command callback.
"""

from __future__ import annotations

import sys

import click

from .options import (
    check_device,
    check_outputs,
    contract_option,
    debug_option,
    emit,
    import_option,
    kernel_source,
    max_cases_option,
    options,
    output_options,
)

FUZZ_HELP = """Exit codes: 0 no failure, 1 a check failed (each failure is shrunk and printed with a command that
replays it), 2 bad input (contract, op, kernel file, --example, usage), 4 internal error (a bug in shapecheck)."""


@click.group(epilog=FUZZ_HELP)
def fuzz() -> None:
    """Property-based runs: does the contract (and the meta kernel) match the runtime?"""


@fuzz.command("op", epilog=FUZZ_HELP)
@click.argument("op")
@import_option("fuzz")
@contract_option("fuzz")
@kernel_source("fuzz", meta_help="Fuzz this Python function as the op's meta kernel.",
               meta_source_help="A _meta_registrations.py-style file: fuzz the function it registers for OP.")
@options("fuzz", "examples", "seed", "eras", "cases", "path", "max_elements", "max_side", "explicit", "verify_examples",
         "from_verify", "both_modes", "device")
@output_options("fuzz")
@max_cases_option("fuzz")
@debug_option("fuzz")
def fuzz_op_cmd(op, imports, contract, source, examples, seed, eras, cases, path, max_elements, max_side, explicit,
                verify_examples, from_verify, both_modes, device, fmt, outputs, quiet):
    """Fuzz OP's meta kernel against its contract, the runtime reference and the math (OP: aten._x).

    Each example checks (1) the fake kernel run as torch runs fakes (FakeTensorMode with a ShapeEnv, backed
    sizes at the example; torch.export's kernel, and plain FakeTensorMode's where it differs): it raises
    nothing, installs no guard that restricts the dynamic dims, and returns the contract's outputs; (2) the runtime reference's dispatch against the contract's paths and its output 0
    against the meta kernel's (shape, dtype, density); (3) the reference's values against the float64 math.
    Runtime findings carry the rule codes of `ref check` (SC010-SC014), whose [[suppress]] tables apply.
    Checks 2 and 3 need a reference: metal_ref for aten::_scaled_dot_product_attention_math_for_mps, the op's
    own eager kernel (on --device) for any other op with one, which is compared output by output (shape,
    dtype, significant strides, which side raises); they are skipped, with a note, for ops with neither.
    """
    from ..kernel.load import import_modules, load_op_contract
    from ..result.run import FuzzRun
    from ..runtime.fuzz import FuzzOptions, check_examples, fuzz_op
    from ..search.strategies import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_SIDE

    check_outputs(outputs)
    check_device(device)
    import_modules(imports)

    options = FuzzOptions(examples=examples, seed=seed, eras=tuple(eras), cases=tuple(cases), path=path,
                          max_elements=max_elements or DEFAULT_MAX_ELEMENTS, max_side=max_side or DEFAULT_MAX_SIDE,
                          verify_examples=verify_examples and not explicit, from_verify=from_verify, device=device,
                          imports=tuple(imports), both_modes=both_modes)
    from ..runtime.fuzz_crash import crash_safe

    if explicit:  # in a supervised child: a kernel that crashes the process fails at its example
        report = crash_safe(lambda: check_examples(op, explicit, contract=contract, source=source, options=options))
    else:
        report = crash_safe(lambda: fuzz_op(op, contract=contract, source=source, options=options))
    emit(FuzzRun.of(load_op_contract(op, contract).info, report, source), fmt, outputs, quiet=quiet)
    sys.exit(report.exit_code)
