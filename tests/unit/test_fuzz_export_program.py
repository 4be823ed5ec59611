"""fuzz's check of torch.export's program at an example with a size of 0 or 1 (the program traced at 2): a
guard_or_false answer that the Dim ranges (sizes from 2) do not settle is a guard the program keeps. lerp's
broadcasting asks ``B0 == A0``, true at the trace's equal hints; at A0 = 1, B0 = 2 the program refuses the
input. fuzz read the program's output there as (1, 1), an SC002 that no exported program gives."""

import pytest

from tests.conftest import KERNELS, invoke

CONTRACT = """
schema = 1
op = "aten::lerp.Scalar"

[dims]
A0 = { min = 1 }
A1 = { min = 1 }
B0 = { min = 1 }
B1 = { min = 1 }

[choices]
dtype = ["float32"]

[domain]
requires = ["A1 == B1 or A1 == 1 or B1 == 1", "A0 == B0 or A0 == 1 or B0 == 1"]

[[args]]
name = "self"
kind = "tensor"
dtype = "dtype"
shape = "(A0, A1)"

[[args]]
name = "end"
kind = "tensor"
dtype = "dtype"
shape = "(B0, B1)"

[[args]]
name = "weight"
kind = "float"
value = 0.5

[[paths]]
id = "sample"
when = "True"
outputs = ["(max(A0, B0), max(A1, B1))"]
"""


@pytest.mark.slow
def test_a_broadcast_guard_the_program_keeps_is_no_output_of_the_program(tmp_path):
    path = tmp_path / "lerp.toml"
    path.write_text(CONTRACT)
    res = invoke("fuzz", "op", "aten::lerp.Scalar", "--contract", str(path), "--example",
                 "dtype=float32;A0=1,A1=1,B0=2,B1=1;seed=0")
    assert res.returncode == 0 and res.stdout.startswith("PASS"), res.stdout + res.stderr


@pytest.mark.slow  # over 0.5 s on an idle core
@pytest.mark.parametrize("a1", [2, 4])
def test_a_helpers_guard_at_a_derived_dims_root_of_1_is_exports_own_specialisation(a1):
    """hunt 39: glu's even ``A1`` is export's derived Dim ``2 * R``; torch's ``infer_size`` asks ``A1 // 2 == 1``,
    which export specialises only at R = 1, as every size of 0 or 1 (the helper's strict export with ``2 * h``
    succeeds). fuzz reported SC022 at A1 = 2 on torch's own glu, which verify passes."""
    path = KERNELS / "glu_even.toml"
    res = invoke("fuzz", "op", "aten::glu", "--contract", str(path), "--example", f"dtype=float32;A0=3,A1={a1};seed=0")
    assert res.returncode == 0 and res.stdout.startswith("PASS"), res.stdout + res.stderr
    verify = invoke("verify", "op", "aten::glu", "--contract", str(path), "-j", "1")
    assert verify.returncode == 0, verify.stdout + verify.stderr
