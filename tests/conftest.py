import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The result cache is off for the whole suite, in-process and in the processes tests start, so that no test
# answers from what another stored; tests of the cache turn it on in a folder of their own (test_cache.py).
# Its folder is a fresh one per session all the same, so that a test never touches the user's cache.
os.environ["SHAPECHECK_CACHE"] = "0"
os.environ["SHAPECHECK_CACHE_DIR"] = tempfile.mkdtemp(prefix="shapecheck-test-cache-")
os.environ.setdefault("XDG_CONFIG_HOME", tempfile.mkdtemp(prefix="shapecheck-test-config-"))  # its key file
KERNELS = ROOT / "tests" / "kernels"
#: the tiers whose every test is slow: end to end as a user works (acceptance) and installed from a wheel (install)
SLOW_TIERS = ("acceptance", "install")
SDPA_MPS = "aten::_scaled_dot_product_attention_math_for_mps"
SDPA_CONTRACT = ROOT / "contracts" / "aten" / "_scaled_dot_product_attention_math_for_mps.toml"


def run_cli(*args, timeout=300, cwd=ROOT):
    """Run the shapecheck CLI in a fresh process, as a user would (from the repository root by default)."""
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-m", "shapecheck", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env)


@pytest.fixture(scope="session")
def sdpa_contract():
    from shapecheck.contract.load import load_contract

    return load_contract(SDPA_CONTRACT)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """The cache on (the suite turns it off), in a folder of this test's own, with a key file of its own."""
    d = tmp_path / "cache"
    monkeypatch.setenv("SHAPECHECK_CACHE_DIR", str(d))
    monkeypatch.setenv("SHAPECHECK_CACHE", "1")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("SHAPECHECK_CACHE_SECRET", raising=False)
    monkeypatch.delenv("SHAPECHECK_CACHE_MAX_MB", raising=False)
    return d


def pytest_collection_modifyitems(items):
    """Mark every test of a slow tier ``slow`` (``pytest -m "not slow"`` leaves them out)."""
    tests = ROOT / "tests"
    for item in items:
        path = Path(str(item.path))
        if path.is_relative_to(tests) and path.relative_to(tests).parts[0] in SLOW_TIERS:
            item.add_marker(pytest.mark.slow)
