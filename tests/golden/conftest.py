"""The golden tests' one option: ``--regen-golden`` rewrites tests/golden/<rule>.json from the current output
(``SHAPECHECK_REGEN_GOLDEN=1`` does the same where the option cannot be passed)."""

import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--regen-golden", action="store_true", default=False,
                     help="rewrite the golden reports under tests/golden/ instead of comparing with them")


@pytest.fixture(scope="session")
def regen_golden(request) -> bool:
    flag = request.config.getoption("--regen-golden", default=False)
    return bool(flag) or os.environ.get("SHAPECHECK_REGEN_GOLDEN", "") not in ("", "0")
