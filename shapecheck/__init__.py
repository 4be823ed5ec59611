"""shapecheck: prove PyTorch meta/fake kernels against declarative shape contracts, for every size.

The public API is what ``__all__`` names; everything else is internal. Each name is the real object of the
module that defines it. Those that need torch or z3 are imported on first use (PEP 562), so that
``import shapecheck`` and the report renderers load neither.
"""

from typing import TYPE_CHECKING

from ._version import __version__ as __version__
from .contract.load import load_contract as load_contract
from .contract.model import Contract as Contract
from .errors import ContractError as ContractError
from .errors import ShapecheckError as ShapecheckError
from .errors import UserError as UserError
from .findings import Finding as Finding
from .findings import PathStatus as PathStatus
from .findings import SourceLoc as SourceLoc
from .findings import Verdict as Verdict
from .findings import Violation as Violation
from .kernel.sources import Function as Function
from .kernel.sources import Installed as Installed
from .kernel.sources import KernelSource as KernelSource
from .kernel.sources import MetaSource as MetaSource
from .result.report import Report as Report
from .rules import RULES as RULES
from .rules import Rule as Rule
from .rules import RuleCode as RuleCode

if TYPE_CHECKING:
    from .prove.verify import Options as Options
    from .prove.verify import explore_op as explore_op
    from .prove.verify import verify_op as verify_op
    from .pytest_entry import fuzz_given as fuzz_given
    from .pytest_entry import fuzz_test as fuzz_test

#: public name -> the module that defines it, for the names loaded on first use
_LAZY = {"verify_op": "prove.verify", "explore_op": "prove.verify", "Options": "prove.verify",
         "fuzz_test": "pytest_entry", "fuzz_given": "pytest_entry"}

__all__ = sorted(["Contract", "ContractError", "Finding", "Function", "Installed", "KernelSource", "MetaSource",
                  "Options", "PathStatus", "RULES", "Report", "Rule", "RuleCode", "ShapecheckError", "SourceLoc",
                  "UserError", "Verdict", "Violation", "__version__", "explore_op", "fuzz_given", "fuzz_test", "load_contract", "verify_op"])


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'shapecheck' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
