"""Hunt 68's findings (rebuilt historical bugs of torch's meta kernels), each rebuilt as a test."""

import pytest

from shapecheck.findings import Verdict
from shapecheck.rules import RuleCode
from tests.conftest import verify_meta


@pytest.mark.slow
def test_a_branch_whose_outputs_agree_only_in_output_0_is_not_called_unnecessary():
    """lu_unpack's ``k = min(m, n)`` (pytorch/pytorch#183736): output 0 is (B, M, M) on both sides of N < M, outputs
    1 and 2 are not the same formula on each side. The fix said "every explored branch returns output 0 = (B, M, M);
    return that path-independent shape", which fixes nothing; it now states every output's one formula (the
    contract's min(M, N)) and torch.sym_min."""
    r = verify_meta("aten::lu_unpack", "hunt68_lu_unpack.toml", "hunt68_kernels.py", "python_min")
    (guard,) = [v for v in r.violations if v.code is RuleCode.GUARD_ON_DYNAMIC_DIM]
    assert set(guard.dims) == {"M", "N"}
    for said in ("output 0 = (B, M, M)", "output 1 = (B, M, min(M, N))", "output 2 = (B, min(M, N), N)",
                 "torch.sym_min"):
        assert said in guard.fix, guard.fix
    assert verify_meta("aten::lu_unpack", "hunt68_lu_unpack.toml", "hunt68_kernels.py", "sym_min").verdict \
        is Verdict.PASS
