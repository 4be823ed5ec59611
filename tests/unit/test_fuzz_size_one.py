"""fuzz keeps a size of 1 symbolic, to see the guards a kernel installs at 1; torch's ShapeEnv makes it a constant.
A kernel that raises only on the symbolic 1 is run as torch runs it, and is no kernel error (hunt 42: torch's own
``_fft_r2c`` meta kernel, "tried to directly modify sizes for customized tensor" at A = B = 1)."""

from __future__ import annotations

from tests.conftest import KERNELS, invoke

EXAMPLE = "dtype=float32,dims=01,normalization=0,onesided=false,transposed=false;A=1,B=1;seed=0"


def test_a_kernel_that_raises_only_on_a_symbolic_size_of_1_passes_there():
    res = invoke("fuzz", "op", "aten::_fft_r2c", "--contract", KERNELS / "fft_r2c.toml", "--example", EXAMPLE)
    assert res.returncode == 0 and res.stdout.startswith("PASS"), res.stdout + res.stderr



def test_the_run_at_a_size_of_1_is_torchs_for_every_caller():
    """verify's replay, the [[rejects]] checks and ref check take the same run: at A = B = 1 it returns."""
    from shapecheck.contract.load import load_contract
    from shapecheck.kernel.load import installed_kernel
    from shapecheck.trace.fake_run import fake_run

    contract = load_contract(KERNELS / "fft_r2c.toml")
    case = next(c for c in contract.cases() if c.id == EXAMPLE.split(";")[0])
    run = fake_run(installed_kernel("aten::_fft_r2c"), case, {"A": 1, "B": 1})
    assert run.error is None and [tuple(o.shape) for o in run.outputs] == [(1, 1)]
