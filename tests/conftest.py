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
KERNELS = ROOT / "tests" / "kernels"
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
