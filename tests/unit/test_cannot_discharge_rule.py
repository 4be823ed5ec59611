"""A guard that holds over the contract's whole range but that torch.export installs and cannot discharge is
SC016 whoever asked for it: the trace's own run of such a guard is SC016 (``torch_decides.settled_guard``), and the
export-style run gave SC022 when a helper asked, so the rule flipped with the path the trace took and a contract's
accepted SC016 read as stale (hunt 57)."""

from shapecheck.contract.load import load_contract
from shapecheck.findings import SourceLoc
from shapecheck.logic import expr as E
from shapecheck.prove.helper_guards import FIX_CHECK, _cannot_discharge
from shapecheck.prove.torch_decides import FIX_GUARD
from shapecheck.rules import RuleCode
from tests.conftest import ROOT


class _Guard:
    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.kernel_line = SourceLoc("k.py", 7, "kernel", "h = helper(x)")


def test_a_guard_torch_cannot_discharge_is_sc016_for_the_kernel_and_for_a_helper_alike():
    case = next(iter(load_contract(str(ROOT / "contracts" / "aten" / "avg_pool2d.toml")).cases()))
    node = E.parse("2 * ((H - 1) // 2) < H")
    own = _cannot_discharge(case, node, _Guard(""), {"H": 5})
    helper = _cannot_discharge(case, node, _Guard("the helper pad_lr at k.py:3"), {"H": 5})
    assert own.code is helper.code is RuleCode.GUARD_TORCH_CANNOT_DISCHARGE
    assert own.fix == FIX_CHECK and helper.fix == FIX_GUARD
    assert helper.message.startswith("the helper pad_lr at k.py:3, reached from the kernel line 7, installs the guard")
    assert own.message.startswith("the kernel's torch._check becomes the guard")
