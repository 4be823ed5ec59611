import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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
    from shapecheck.contract import load_contract

    return load_contract(SDPA_CONTRACT)
