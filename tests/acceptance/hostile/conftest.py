import contextlib
import io

import pytest

from tests.acceptance.hostile.inputs import BASES, SENTINEL


@pytest.fixture(scope="session")
def warm():
    """torch, z3 and the modules FakeTensorMode loads on first use, loaded once in this process (one verify
    of each base), so that each forked run inherits them."""
    from shapecheck.cli.main import main

    SENTINEL.unlink(missing_ok=True)
    for base in BASES:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            main(["verify", "op", base.op, "--contract", str(base.file), *base.kernel, "--jobs", "1"])
    yield
    assert not SENTINEL.exists(), "an expression of a contract ran code"
