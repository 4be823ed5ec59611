"""The other side of a layout answer reports only what the trace has not (hunt 49): an output whose dtype the trace
finds wrong on a path is not reported again "at D == 1" (the same float64 statistic), nor strides found wrong there
already. Kernel: tests/kernels/layer_norm_float64_stats.py."""

from __future__ import annotations

from tests.conftest import KERNELS


def test_a_dtype_wrong_everywhere_is_one_finding_not_one_more_at_the_other_side():
    from shapecheck.options import VerifyOptions
    from shapecheck.prove.verify import verify_op

    report = verify_op("aten::native_layer_norm", contract=str(KERNELS / "native_layer_norm.toml"),
                       meta_source=str(KERNELS / "layer_norm_float64_stats.py"),
                       options=VerifyOptions(cases=("nd=1,affine=none,rank=2",)))
    dtype = [v for v in report.violations if v.code.value == "SC017"]
    assert len(dtype) == 1 and " at " not in dtype[0].expr, [v.expr for v in dtype]
    assert any(v.code.value == "SC002" and v.expr.startswith("output 2 ") for v in report.violations)
