"""Counterexamples are real: torch's own helpers (broadcasting) answer guard_or_false under unbacked sizes, and
a trace holds only where that answer does; every reported counterexample is replayed at static sizes."""

from shapecheck.findings import Verdict
from shapecheck.verify import verify_op
from tests.conftest import KERNELS, ROOT

CROSS = str(ROOT / "contracts" / "aten" / "linalg_cross.toml")
AK = KERNELS / "aten_kernels.py"


def test_linalg_cross_broadcast_of_two_dynamic_dims_passes():
    """_broadcast_shapes assumes `B == 1` is false under unbacked sizes: the first trace's (B, 1, 3) held only
    where B != 1, and was compared with the contract at B=1, Bo=2 (a false SC002 and SC004). Both sides of
    torch's answer are explored now."""
    r = verify_op("aten::linalg_cross", contract=CROSS)
    assert r.verdict == Verdict.PASS, [v.message for v in r.violations]
    shared = next(c for c in r.cases if "shared" in c.case)
    assert shared.traces > 1 and all(p.status == "proved" for p in shared.paths)


def test_a_candidate_built_on_broadcast_shapes_passes():
    r = verify_op("aten::linalg_cross", contract=CROSS, meta=f"{AK}:cross_broadcast")
    assert r.verdict == Verdict.PASS, [v.message for v in r.violations]


def test_a_wrong_broadcast_is_found_at_a_real_point():
    r = verify_op("aten::linalg_cross", contract=CROSS, meta=f"{AK}:cross_keeps_self_shape")
    assert r.verdict == Verdict.FAIL
    bad = [v for v in r.violations if v.code == "SC002"]
    assert bad and not [v for v in r.violations if v.code == "SC004"]
    for v in bad:  # the kernel's output really differs there
        b, bo = v.counterexample["B"], v.counterexample["Bo"]
        want = (b, bo, 3) if "outer" in v.case else (max(b, bo), 1, 3)
        assert want != (b, 1, 3)
