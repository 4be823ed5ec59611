"""Who asked for a guard, where the frames between the guard and the kernel are not torch's machinery: a
kernel's own ``guard_size_oblivious`` (which torch 2.13 wraps in typing_extensions' ``deprecated``) is the
kernel's guard, SC001, not a guard of "torch's dispatch machinery" that is explored and never reported; a helper
defined in a ``--meta-source`` file is named as that file's helper, not torch's, and a contract's accepted
SC022 of torch's own output record does not hide it (``[[suppress]] message``)."""

from pathlib import Path

import pytest

from shapecheck.contract.spec import Suppression
from shapecheck.contract.suppressions import apply
from shapecheck.findings import Finding, Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode

KERNELS = Path(__file__).resolve().parents[1] / "kernels"


@pytest.mark.slow
def test_a_kernels_own_guard_size_oblivious_is_its_guard():
    r = verify_op("aten::gather", contract=str(KERNELS / "static_answers.toml"),
                  meta=f"{KERNELS / 'size_oblivious.py'}:unit_column_fast_path", options=Options(jobs=1))
    assert r.verdict is Verdict.FAIL
    lines = (KERNELS / "size_oblivious.py").read_text().splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "if guard_size_oblivious(" in t)
    guards = [v for v in r.violations if v.code is RuleCode.GUARD_ON_DYNAMIC_DIM]
    assert guards and all(v.location is not None and v.location.line == line for v in guards), \
        [(v.code, v.message) for v in r.violations]
    assert {v.counterexample["B1"] for v in guards} <= {1, 2} and "B1" in guards[0].dims


@pytest.mark.slow
def test_a_helper_of_a_meta_source_file_is_the_files_and_torchs_accepted_output_record_does_not_hide_it():
    """pool_helper_registrations.py rounds avg_pool2d's output size through a helper of its own that branches on
    the parity of H and W; the shipped contract accepts torch.export's output-record guards (F13) by their
    message, and no longer every SC022 of the case."""
    r = verify_op("aten::avg_pool2d", meta_source=str(KERNELS / "pool_helper_registrations.py"),
                  options=Options(jobs=1, cases=("ceil_mode=false,kernel=3,stride=2,padding=1,memory_format=contiguous",)))
    assert r.verdict is Verdict.FAIL
    parity = [v for v in r.violations if v.code is RuleCode.GUARD_IN_TORCH_HELPER and "% 2" in v.expr]
    assert {v.expr for v in parity} == {"(H - 1) % 2 != 0", "(W - 1) % 2 != 0"}, [v.message for v in r.violations]
    for v in parity:
        assert v.message.startswith("the helper _div_round_down at ") and "torch's helper" not in v.message
        assert not v.suppressed
    record = [v for v in r.violations if v.suppressed and "torch.export's record of the op's output" in v.message]
    assert record, "torch's own output-record guard stays accepted"


def _guard(message: str) -> Finding:
    return Finding(code=RuleCode.GUARD_IN_TORCH_HELPER, case="k=3", expr="W - 1 != 1", dims=("W",),
                   counterexample={"W": 2}, message=message)


def test_a_suppression_with_a_message_covers_only_the_findings_that_say_it():
    s = Suppression("SC022", "F13", message="torch.export's record of the op's output")
    record, helper = _guard("torch.export's record of the op's output (...) installs the guards W - 1 != 1"), \
        _guard("the helper div_rtn at pool.py:12 branches on (W - 1) % 2 != 0")
    got = apply([s], [record, helper])
    assert got[0].suppressed == "F13" and not got[1].suppressed
    assert apply([Suppression("SC022", "all of them")], [helper])[0].suppressed == "all of them"
