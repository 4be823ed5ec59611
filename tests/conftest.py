import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The result cache is off for the whole suite, in-process and in the processes tests start, so that no test
# answers from what another stored; tests of the cache turn it on in a folder of their own (test_cache.py).
# Its folder is a fresh one per session all the same, so that a test never touches the user's cache.


def scratch(prefix: str) -> str:
    """A fresh folder in the temp dir, removed when this process ends (each session used to leave its own)."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, True)
    return path


# Bytecode is written (pytest's rewritten test modules, shapecheck's own modules), also where the environment says
# not to (PYTHONDONTWRITEBYTECODE, as these machines set it): each pytest worker rewrote every test module's asserts
# again, 9 s of its collection's 15 (bench/README.md, the suite). __pycache__ folders are ignored by git.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ["SHAPECHECK_CACHE"] = "0"
os.environ["SHAPECHECK_CACHE_DIR"] = scratch("shapecheck-test-cache-")
if "XDG_CONFIG_HOME" not in os.environ:  # its key file
    os.environ["XDG_CONFIG_HOME"] = scratch("shapecheck-test-config-")
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


def invoke(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    """``shapecheck ARGS`` in this process, in ``cwd``: ``cli.main.main`` (the console script's one place for
    messages and exit codes) under click's stream isolation, with warnings off as ``run_cli``'s processes have
    them. The same CompletedProcess ``run_cli`` gives, without a fresh interpreter's 3 s of imports; use
    ``run_cli`` where the process boundary is the point (a crash, what the console script does). What a process
    would not keep goes afterwards: ``sys.path`` as before, and the modules imported from ``cwd`` (a project's
    ``mylib_ops.py``, which the next test's project may name alike); ops they registered stay registered, so each
    test's custom ops take a namespace of their own."""
    import warnings

    from click.testing import CliRunner

    from shapecheck.cli.main import main

    argv = [str(a) for a in args]
    before, path, modules = Path.cwd(), list(sys.path), set(sys.modules)
    os.chdir(cwd)
    try:
        with CliRunner().isolation() as (out, err, _), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                main(argv)
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            return subprocess.CompletedProcess(argv, code, out.getvalue().decode(), err.getvalue().decode())
    finally:
        os.chdir(before)
        sys.path[:] = path
        if Path(cwd).resolve() != ROOT:  # a project's own modules (mylib_ops.py): a process starts without them
            project = Path(cwd).resolve()
            for name in set(sys.modules) - modules:
                file = getattr(sys.modules[name], "__file__", None)
                if isinstance(file, str) and Path(file).resolve().is_relative_to(project):
                    del sys.modules[name]


@pytest.fixture(scope="session")
def shipped_gate():
    """One gate run over the shipped contracts, as a bare ``shapecheck gate -j 1`` from the repository root runs
    it, shared by every test that only renders or reads its result (the renderers are pure): the 12-contract
    gate runs once per session, not once per format."""
    from shapecheck.ci.gate import GateOptions, run_gate

    return run_gate([], GateOptions(), cwd=ROOT)


def audit_records(ops: str, library: str, samples: str | None = None) -> dict[str, dict]:
    """The audit's record of each op matching ``ops`` once ``library`` is imported, by op name (``-j 1``; the
    samples hook ``samples``, MODULE:FUNCTION, where given)."""
    from shapecheck.audit.run import AuditOptions, run_audit

    run = run_audit((ops,), (library,), jobs=1, options=AuditOptions(samples=samples))
    return {r["op"]: r for r in run.records}


def rendered(result, fmt: str, *, quiet: bool = False) -> str:
    """``result`` as ``--format FMT`` prints it from the repository root."""
    from shapecheck.render.ci import render

    return render(result, fmt, ROOT, quiet=quiet)


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


def pytest_ignore_collect(collection_path, config):
    """A slow tier's folder is not even imported when the ``-m`` expression leaves out every slow test
    (``-m "not slow"``, the edit loop): its modules' imports and module-level work cost collection time."""
    tests = ROOT / "tests"
    path = Path(str(collection_path))
    if not path.is_relative_to(tests) or len(path.relative_to(tests).parts) != 1 \
            or path.name not in SLOW_TIERS or not config.option.markexpr:
        return None
    try:
        from _pytest.mark.expression import Expression  # how pytest itself reads -m

        matches_slow = Expression.compile(config.option.markexpr).evaluate(lambda name, **kw: name == "slow")
    except Exception:  # noqa: BLE001 - pytest's reader moved: collect, and let -m deselect
        return None
    return True if not matches_slow else None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads the groups
def pytest_collection_modifyitems(items):
    """Mark ``slow`` (``pytest -m "not slow"`` leaves them out) every test of a slow tier and every test that
    needs ``shipped_gate``, the whole family's gate (about 20 s of CPU, once per session).

    Under pytest-xdist (``-n``, ``--dist loadgroup``) the tests that share a costly session fixture run in one
    worker, so that it is built once: the install tier's wheel and venv, and the shipped gate."""
    tests = ROOT / "tests"
    for item in items:
        path = Path(str(item.path))
        tier = path.relative_to(tests).parts[0] if path.is_relative_to(tests) else ""
        gate = "shipped_gate" in getattr(item, "fixturenames", ())
        if tier in SLOW_TIERS or gate:
            item.add_marker(pytest.mark.slow)
        if tier == "install" or gate:
            item.add_marker(pytest.mark.xdist_group(tier if tier == "install" else "shipped_gate"))


#: the words of an SC022 from torch.export's record of an op's output (finding F13: torch's, whatever the kernel)
OUTPUT_RECORD = "torch.export's record of the op's output"


def beyond_output_record(violations):
    """The findings that are not F13's output-record guards (a strided pooling's output of size 1)."""
    return [v for v in violations if OUTPUT_RECORD not in v.message]


def verify_meta(op: str, contract: str, kernels: str, fn: str, **options):
    """``verify_op`` of ``op`` against tests/kernels/``contract`` with the meta kernel ``fn`` of
    tests/kernels/``kernels``, one process (``options``: more of verify's ``Options``)."""
    from shapecheck.prove.verify import Options, verify_op

    where = ROOT / "tests" / "kernels"
    return verify_op(op, contract=str(where / contract), meta=f"{where / kernels}:{fn}",
                     options=Options(jobs=1, **options))
