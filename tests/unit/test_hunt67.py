"""Hunt 67's findings, each rebuilt: a meta kernel that returns more values than its op's schema (torch's
dispatcher dies of SIGSEGV on three for kthvalue) is the kernel's error, SC007, not shapecheck's internal error;
the Dim ranges a branch's fix offers leave out a side that fails on its own."""

import pytest

from shapecheck.rules import RuleCode
from tests.conftest import KERNELS, run_cli, verify_meta

KTHVALUE = KERNELS / "hunt67_kthvalue.toml"

THREE = '''
import torch


def three_outputs(self, k, dim=-1, keepdim=False):
    s = [self.size(0)] + ([1] if keepdim else [])
    return self.new_empty(s), self.new_empty(s, dtype=torch.int64), self.new_empty(s)
'''


@pytest.mark.slow
def test_a_meta_kernel_with_one_output_too_many_is_a_kernel_error_not_a_crash_of_shapecheck(tmp_path):
    # a fresh process each: before the fix, torch's dispatcher died of SIGSEGV in every case (SC023, exit 4)
    (tmp_path / "kernels.py").write_text(THREE)
    common = ["--contract", KTHVALUE, "--meta", f"{tmp_path / 'kernels.py'}:three_outputs", "--case",
              "dtype=float32,dim=1,keepdim=false"]
    verify = run_cli("verify", "op", "aten::kthvalue", *common, "--no-cache", "--format", "json", "-j", "1")
    assert verify.returncode == 1, verify.stderr
    assert f'"{RuleCode.KERNEL_ERROR}"' in verify.stdout and f'"{RuleCode.INTERNAL_ERROR}"' not in verify.stdout
    assert "returned 3 values, where the op's schema returns 2" in verify.stdout
    fuzz = run_cli("fuzz", "op", "aten::kthvalue", *common, "--examples", "3", "--seed", "1")
    assert fuzz.returncode == 1 and RuleCode.KERNEL_ERROR in fuzz.stdout, fuzz.stdout + fuzz.stderr


@pytest.mark.slow
def test_a_dim_range_offered_for_a_branch_leaves_out_the_side_that_fails_on_its_own():
    """The fix of an SC001 whose sides return different shapes offered both sides of ``L >= 8`` as Dim ranges
    that make the kernel pass, while the side below 8 returns a wrong shape (its own SC002 there)."""
    r = verify_meta("aten::topk", "hunt67_topk.toml", "hunt67_kernels.py", "topk_small_slices",
                    cases=("dtype=float32,dim=-1,largest=true",))
    guard = [v for v in r.violations if v.code is RuleCode.GUARD_ON_DYNAMIC_DIM and v.expr == "L >= 8"]
    wrong = [v for v in r.violations if v.code is RuleCode.OUTPUT_SHAPE_MISMATCH]
    assert guard and wrong and all(v.counterexample["L"] < 8 for v in wrong)
    fix = guard[0].fix
    assert "limited to one side: Dim('L', min=8, max=100000) (the contract" in fix, fix
    assert f"Dim('L', min=0, max=7) fails on its own ({RuleCode.OUTPUT_SHAPE_MISMATCH} at" in fix, fix
