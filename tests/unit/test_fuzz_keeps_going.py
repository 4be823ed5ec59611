"""fuzz keeps a guard failure and goes on searching (hunt 49): a guard is judged over the whole domain, so raised
it failed the first example and the search stopped soon after; an output wrong only at some sizes behind it was
never drawn. Kernel: tests/kernels/guard_and_rows.py."""

from __future__ import annotations

import pytest

from tests.conftest import KERNELS


@pytest.mark.slow  # a fuzz run
@pytest.mark.parametrize("seed", [1, 2])
def test_a_guard_failure_does_not_hide_an_output_wrong_at_some_sizes(seed):
    import tests.kernels.guard_and_rows  # noqa: F401 - registers the op
    from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op

    r = fuzz_op("scguardrows::rows", contract=str(KERNELS / "guard_and_rows.toml"),
                options=FuzzOptions(examples=100, seed=seed, verify_examples=False, imports=("tests.kernels.guard_and_rows",)))
    checks = {f.check: f for f in r.failures}
    assert set(checks) == {"guard", "meta-shape"}, [f.message for f in r.failures]
    assert checks["guard"].code.value == "SC001" and "N" in checks["guard"].got
    assert checks["meta-shape"].dims["M"] % 2 == 1  # a real point: the fake floors an odd M
    assert len([f for f in r.failures if f.check == "guard"]) == 1  # once per rule and place
