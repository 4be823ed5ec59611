"""shapecheck: prove PyTorch meta/fake kernels against declarative shape contracts, for every size.

The public API is what this module re-exports; everything else is internal.
"""

from .contract import Contract as Contract
from .contract import load_contract as load_contract
from .errors import ContractError as ContractError
from .errors import ShapecheckError as ShapecheckError
from .findings import Verdict as Verdict
from .report import Report as Report

__version__ = "0.1.0"


def verify_op(op, **kwargs):
    """Verify OP's meta kernel against its contract; see :func:`shapecheck.verify.verify_op`."""
    from .verify import verify_op as _verify_op

    return _verify_op(op, **kwargs)


def explore_op(op, **kwargs):
    """Map every meta-kernel path of every case: ``verify_op`` with exploration on. Returns the Report; each
    ``report.cases[i].path_map`` is a :class:`shapecheck.pathmap.PathMap`."""
    from dataclasses import replace

    from .verify import Options
    from .verify import verify_op as _verify_op

    options = replace(kwargs.pop("options", None) or Options(max_traces=32), explore=True)
    return _verify_op(op, options=options, **kwargs)


def fuzz_test(op, **kwargs):
    """A Hypothesis test for pytest that fuzzes OP's meta kernel: ``test_op = shapecheck.fuzz_test("aten::x")``;
    see :func:`shapecheck.fuzz.fuzz_test`."""
    from .fuzz import fuzz_test as _fuzz_test

    return _fuzz_test(op, **kwargs)


def fuzz_given(op, **kwargs):
    """Decorator form of ``fuzz_test``: ``@shapecheck.fuzz_given("aten::x")`` on ``def test_x(example): ...``."""
    from .fuzz import fuzz_given as _fuzz_given

    return _fuzz_given(op, **kwargs)


__all__ = ["fuzz_given", "fuzz_test", "explore_op", "Contract", "ContractError", "Report", "ShapecheckError", "Verdict", "load_contract", "verify_op",
           "__version__"]
