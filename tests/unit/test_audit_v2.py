"""``shapecheck audit`` v2 (issue 23): inputs found by search, not traced is never a pass (exit 3 unless the
config or the baseline excuses the op), the project's samples hook, specialisations that are never relations, a
fake that raises on every input, a fake that crashes behind a non-default bool, --device without the device, and
``contract draft`` for every op (50 aten ops and every custom op under examples/ load and check ok).
In-process (click's runner through ``main``); the libraries are small files written here."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import textwrap
import time

import pytest

from tests.conftest import ROOT

LIB = '''
import torch
from torch.library import custom_op

LIB = torch.library.Library("auditv2", "DEF")


@custom_op("auditv2::spec_nonzero", mutates_args=())
def spec_nonzero(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x.new_zeros((x.shape[0],))


@spec_nonzero.register_fake
def _(x, y):
    torch._check(x.shape[0] > 0, lambda: "empty x")
    n = int(x.shape[0])  # the size's value: a specialisation, whatever the op says of 0
    return x.new_empty((n,))


LIB.define("type_error(Tensor x) -> Tensor")


@torch.library.register_fake("auditv2::type_error")
def _(x):
    return x.new_empty((x.shape[0], "1"))  # a str as a size: TypeError on every input


@custom_op("auditv2::flagged", mutates_args=())
def flagged(x: torch.Tensor, check: bool = False) -> torch.Tensor:
    return x.clone()


@flagged.register_fake
def _(x):  # lacks the bool: raises whenever check is passed
    return x.new_empty(x.shape)


@custom_op("auditv2::complex_only", mutates_args=())
def complex_only(x: torch.Tensor) -> torch.Tensor:
    torch._check(x.dtype == torch.complex128, lambda: "x must be complex")  # a dtype the search never tries
    return x.clone()


@complex_only.register_fake
def _(x):
    torch._check(x.dtype == torch.complex128, lambda: "x must be complex")
    return torch.empty_like(x)  # clone keeps a dense input's strides
'''

LIB += '''

@custom_op("auditv2::half_4d", mutates_args=())
def half_4d(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    q.size(3), k.size(3)  # like CUDA flash attention: 4-D only (an IndexError names no rank)
    torch._check(q.dtype in (torch.float16, torch.bfloat16), lambda: "FlashAttention only support fp16 and bf16 data type")
    return q.clone()


@half_4d.register_fake
def _(q, k):
    b, h, n, e = q.shape
    return q.new_empty((b, h, n, e))


@custom_op("auditv2::four_d", mutates_args=())
def four_d(query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    torch._check(query.dim() == 4, lambda: "Expected query.dim() == 4 to be true, but got false.")
    key.size(3)  # key too, though no error says so (CUDA efficient attention)
    return query.clone()


@four_d.register_fake
def _(query, key):
    return query.new_empty(query.shape)  # any rank


@custom_op("auditv2::gather_rows", mutates_args=())
def gather_rows(data: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    if rows.dtype != torch.int32:  # as fbgemm's CPU kernels say it
        raise RuntimeError(f"expected scalar type Int but found {str(rows.dtype).split('.')[-1].capitalize()}")
    if data.dtype not in (torch.float32, torch.float64):  # AT_DISPATCH on the first tensor
        raise NotImplementedError('"gather_rows_cpu" not implemented for ' + repr("Int"))
    return data[rows.long().clamp(0, max(data.shape[0] - 1, 0))]


@gather_rows.register_fake
def _(data, rows):
    return data.new_empty((*rows.shape, *data.shape[1:]))
'''

LIB += '''

@custom_op("auditv2::strict_rows", mutates_args=())
def strict_rows(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y  # broadcasts: a y of one row is taken


@strict_rows.register_fake
def _(x, y):
    torch._check(x.shape[0] == y.shape[0], lambda: "rows differ")  # demands what the eager kernel does not
    return x.new_empty(x.shape)
'''

HOOK = '''
import torch


def samples_for(op):
    if op == "auditv2::complex_only.default":
        return [((torch.zeros(2, 3, dtype=torch.complex128),), {})]
    if op == "auditv2::flagged.default":  # check left to its default, as OpInfo samples leave arguments
        return [((torch.zeros(3),), {})]
    return []
'''


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("auditv2")
    (d / "auditv2_lib.py").write_text(LIB)
    (d / "auditv2_hook.py").write_text(HOOK)
    sys.path.insert(0, str(d))
    yield d
    sys.path.remove(str(d))


def _main(*argv: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``shapecheck ARGV`` in-process (a command that returns is exit 0)."""
    from shapecheck.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def _cli(*args: str) -> tuple[int, str, str]:
    return _main("audit", *args)


def _records(lib, *extra: str) -> tuple[int, dict]:
    code, out, _ = _cli("--import", str(lib / "auditv2_lib.py"), "--ops", "auditv2::*", "--format", "json", "-j",
                        "1", "--no-cache", *extra)
    return code, json.loads(out)


@pytest.mark.slow
def test_a_specialisation_is_never_a_relation_and_its_other_side_is_not_zero(lib):
    _, doc = _records(lib, "--ops", "auditv2::spec_nonzero*")
    rec = next(r for r in doc["ops"] if r["op"] == "auditv2::spec_nonzero.default")
    spec = [f for f in rec["findings"] if f["class"] == "specialization"]
    assert spec and spec[0]["counterexample"]["x_0"] > 0 and spec[0]["witness"]["x_0"] > 0
    assert not any("x_0 ==" in r["expr"] for r in rec["requires"])


@pytest.mark.slow
def test_a_fake_that_raises_on_every_input_is_a_kernel_error_and_a_missing_parameter_is_found_behind_a_bool(lib):
    _, doc = _records(lib)
    recs = {r["op"]: r for r in doc["ops"]}
    te = recs["auditv2::type_error.default"]
    assert [f["class"] for f in te["findings"]] == ["kernel-error"] and "TypeError" in te["findings"][0]["expr"]
    flagged = recs["auditv2::flagged.default"]
    assert any(f["code"] == "SC042" and f["expr"] == "the fake's signature takes no check" and "check=True" in
               f["message"] for f in flagged["findings"]), flagged["findings"]


@pytest.mark.slow
def test_not_traced_is_never_a_pass_until_the_config_or_baseline_excuses_it(lib, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = _cli("--import", str(lib / "auditv2_lib.py"), "--ops", "auditv2::complex_only*", "-j", "1",
                        "--no-cache")
    assert code == 3 and out.startswith("coverage: 0 of 1 ops traced") and "1 without inputs" in out
    assert "audit: INCONCLUSIVE" in out
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent('''\
        [tool.shapecheck.audit.untraced]
        "auditv2::complex_only.default" = "complex inputs only: the samples hook gives them"
    '''))
    code, out, _ = _cli("--import", str(lib / "auditv2_lib.py"), "--ops", "auditv2::complex_only*", "-j", "1",
                        "--no-cache")
    assert code == 0 and "excused" in out
    (tmp_path / "pyproject.toml").unlink()
    base = tmp_path / "base.json"
    code, _, _ = _cli("--import", str(lib / "auditv2_lib.py"), "--ops", "auditv2::complex_only*", "-j", "1",
                      "--no-cache", "--baseline", str(base))
    assert code == 0 and json.loads(base.read_text())["untraced"][0]["op"] == "auditv2::complex_only.default"
    code, _, _ = _cli("--import", str(lib / "auditv2_lib.py"), "--ops", "auditv2::complex_only*", "-j", "1",
                      "--no-cache", "--baseline", str(base))
    assert code == 0


@pytest.mark.slow
def test_the_samples_hook_gives_inputs_the_search_cannot_reach(lib, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.shapecheck.audit]\nsamples = "auditv2_hook:samples_for"\n')
    code, out, _ = _cli("--import", str(lib / "auditv2_lib.py"), "--ops", "auditv2::complex_only*", "-j", "1",
                        "--no-cache", "--format", "json")
    doc = json.loads(out)
    (rec,) = doc["ops"]
    assert code == 0 and rec["inputs"] == "samples" and rec["example"] == "x=complex128[x_0, x_1]"
    assert rec["eager"]["status"] == "compared" and rec["eager"]["compared"] >= 1
    (tmp_path / "pyproject.toml").write_text('[tool.shapecheck.audit]\nsamples = "no_such_module:f"\n')
    code, _, err = _cli("--import", str(lib / "auditv2_lib.py"), "--ops", "auditv2::complex_only*", "-j", "1")
    assert code == 2 and "samples" in err and "Traceback" not in err


def test_a_device_that_is_not_here_is_inconclusive_never_a_pass():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here")
    code, _, err = _cli("--ops", "aten::mm.default", "--device", "cuda", "-j", "1")
    assert code == 3 and "no CUDA device" in err


@pytest.mark.slow
def test_the_fake_and_the_eager_kernel_agree_on_mm_and_the_formula_is_evidence_not_proof():
    from shapecheck.audit.run import AuditOptions, audit_op

    rec = audit_op("aten::mm.default", None, AuditOptions(cache=False))
    # the finding is the mixed-dtype calls (torch 2.13's fake takes them, the CPU kernel refuses them): mat2 as
    # float64 (self as bfloat16 and mat2 as int8 break the same check: one finding); the sizes agree
    assert sorted(f["expr"].split(" with ")[1] for f in rec["findings"] if f["class"] == "fake-accepts") == [
        "mat2 as float64 (the others stay float32)"]
    assert {f["class"] for f in rec["findings"]} == {"fake-accepts"}
    assert rec["eager"]["status"] == "compared" and rec["eager"]["compared"] >= 5
    assert "evidence, not a proof" in rec["eager"]["evidence"]
    assert "with the op's first inputs" in rec["eager"]["evidence"]  # not the variants' (hunt 37)
    assert rec["kernel_kind"] == "python"


def _aten_sample(n: int = 50) -> list[str]:
    from shapecheck.audit.run import enumerate_ops

    ops = enumerate_ops((), {"aten"}, set())
    step = max(1, len(ops) // n)
    return ops[::step][:n]


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_contract_draft_drafts_50_aten_ops_and_every_example_custom_op_and_each_checks_ok(tmp_path):
    """Issue 22 item 6: each draft loads and ``contract check`` says ok (data-dependent outputs included)."""
    from shapecheck.audit.schema_draft import draft_contract
    from shapecheck.kernel.load import import_modules

    sys.path.insert(0, str(ROOT / "examples" / "custom_ops"))
    try:
        import_modules(["sc_custom_ops"])
    finally:
        sys.path.remove(str(ROOT / "examples" / "custom_ops"))
    from shapecheck.audit.run import enumerate_ops

    custom = enumerate_ops((), {"sc_custom_ops"}, set())
    ops = _aten_sample() + custom
    assert len(ops) >= 50 + 3
    for i, op in enumerate(ops):
        path = tmp_path / f"draft{i}.toml"
        path.write_text(draft_contract(op), encoding="utf-8")
        code, out, err = _main("contract", "check", str(path))
        assert code == 0 and out.startswith("ok:"), (op, out, err)


CRASHER = '''
import os
import signal

import torch
from torch.library import custom_op


@custom_op("auditcrash::boom", mutates_args=())
def boom(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@boom.register_fake
def _(x):
    os.kill(os.getpid(), signal.SIGFPE)  # as a C++ Meta kernel that divides by a zero size does
    return x.new_empty(x.shape)


@custom_op("auditcrash::fine", mutates_args=())
def fine(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@fine.register_fake
def _(x):
    return torch.empty_like(x)  # laid out as clone() lays it out, for a non-contiguous input too
'''


@pytest.mark.slow
def test_a_fake_that_kills_its_process_loses_only_its_own_op(tmp_path):
    """The audit runs its ops in supervised workers: the SIGFPE op is not run (inconclusive), the other is
    audited and compared with its eager kernel."""
    lib = tmp_path / "auditcrash_lib.py"
    lib.write_text(CRASHER, encoding="utf-8")
    code, out, _ = _cli("--import", str(lib), "--ops", "auditcrash::*", "-j", "1", "--no-cache", "--format", "json")
    recs = {r["op"]: r for r in json.loads(out)["ops"]}
    assert code == 3
    assert recs["auditcrash::boom.default"]["status"] == "not-run"
    assert "SIGFPE" in recs["auditcrash::boom.default"]["notes"][0]
    assert recs["auditcrash::fine.default"]["status"] == "clean"
    assert recs["auditcrash::fine.default"]["eager"]["status"] == "compared"


MEMORY_UNSAFE = '''
import os
import signal

import torch
from torch.library import custom_op


def _die_at_zero(x):
    if isinstance(x.shape[0], int) and x.shape[0] == 0:  # at a concrete 0 only: the symbolic trace never sees it
        os.kill(os.getpid(), signal.SIGSEGV)


@custom_op("auditunsafe::rows", mutates_args=())
def rows(x: torch.Tensor) -> torch.Tensor:
    _die_at_zero(x)  # an eager kernel that reads past an empty input
    return x.clone()


@rows.register_fake
def _(x):
    _die_at_zero(x)  # the fake runs the same kernel there (as FakeTensor's fallback does)
    return torch.empty_like(x)


@custom_op("auditunsafe::flagged", mutates_args=())
def flagged(x: torch.Tensor, fast: bool = False) -> torch.Tensor:
    return x.clone()


@flagged.register_fake
def _(x, fast=False):
    if fast:
        os.kill(os.getpid(), signal.SIGSEGV)  # only behind the non-default flag: an argument variant
    return torch.empty_like(x)
'''


@pytest.mark.slow
def test_a_kernel_that_kills_its_process_at_one_point_or_in_one_variant_keeps_what_ran_before(tmp_path):
    """torch's ``_fused_sgd`` segfaults, eager and fake (FakeTensor's fallback runs it), when a grad is empty and
    its param is not, and the whole op was "not run". The fake at a point where the eager kernel died now runs
    in a process of its own: the op is audited, with a note on the point. A fake that dies in an argument variant
    keeps the first inputs' results, inconclusive (never clean), with the stage that died."""
    lib = tmp_path / "auditunsafe_lib.py"
    lib.write_text(MEMORY_UNSAFE, encoding="utf-8")
    code, out, _ = _cli("--import", str(lib), "--ops", "auditunsafe::*", "-j", "1", "--no-cache", "--format", "json")
    recs = {r["op"]: r for r in json.loads(out)["ops"]}
    rows, flagged = recs["auditunsafe::rows.default"], recs["auditunsafe::flagged.default"]
    assert rows["status"] == "clean" and rows["traces"] > 0, rows
    assert rows["eager"]["status"] == "compared" and rows["eager"]["crashes"] >= 1, rows["eager"]
    assert any("both kill their process" in n and "x_0=0" in n and "SIGSEGV" in n for n in rows["notes"]), rows
    assert flagged["status"] == "inconclusive" and flagged["traces"] > 0, flagged
    assert flagged["eager"]["status"] == "compared", flagged["eager"]
    assert any(n.startswith("stopped: the argument variants") and "SIGSEGV" in n for n in flagged["notes"]), flagged
    assert code == 3


@pytest.mark.slow
def test_an_eager_error_naming_dtypes_keeps_the_rank_the_fake_took(lib):
    """The fake takes only 4-D inputs and the eager kernel only half precision, saying "fp16 and bf16" and no
    rank (CUDA flash attention on a 4-D float32 call). The search keeps rank 4 and tries float16, which no
    option of the list pairs with rank 4: the eager kernel then runs and the outputs are compared."""
    _, doc = _records(lib, "--ops", "auditv2::half_4d*")
    rec = next(r for r in doc["ops"] if r["op"] == "auditv2::half_4d.default")
    assert rec["eager"]["status"] == "compared" and rec["eager"]["compared"] > 0, rec["eager"]
    assert rec["example"].startswith("q=float16[q_0, q_1, q_2, q_3]"), rec["example"]


@pytest.mark.slow
def test_a_rank_named_for_one_tensor_is_tried_for_the_tensors_alike(lib):
    """The eager kernel says "query.dim() == 4" and needs a 4-D key as well, while the fake takes any rank.
    The key, of the same rank and dtype as the query in the call, gets rank 4 as its next option: the eager
    kernel then runs and the outputs are compared."""
    _, doc = _records(lib, "--ops", "auditv2::four_d*")
    rec = next(r for r in doc["ops"] if r["op"] == "auditv2::four_d.default")
    assert rec["eager"]["status"] == "compared" and rec["eager"]["compared"] > 0, rec["eager"]
    assert "query=float32[query_0, query_1, query_2, query_3], key=float32[key_0, key_1, key_2, key_3]" \
        in rec["example"], rec["example"]


@pytest.mark.slow
def test_a_dtype_an_error_refuses_leaves_the_first_tensor_of_that_dtype(lib):
    """The eager kernel wants int32 rows ("expected scalar type Int but found Float", naming no argument, on a
    call of two float32 tensors: both try int32) and then refuses int32 data ("not implemented for 'Int'",
    AT_DISPATCH on the first tensor): the data goes back to a float while the rows stay int32."""
    _, doc = _records(lib, "--ops", "auditv2::gather_rows*")
    rec = next(r for r in doc["ops"] if r["op"] == "auditv2::gather_rows.default")
    assert rec["eager"]["status"] == "compared" and rec["eager"]["compared"] > 0, rec["eager"]
    assert rec["example"].startswith("data=float32[") and "rows=int32[" in rec["example"], rec["example"]


@pytest.mark.slow
def test_an_argument_a_sample_leaves_to_its_default_is_varied_too(lib, tmp_path, monkeypatch):
    """The hook's call passes x alone; check=False is its default. The audit passes the default and varies it
    (check=True), where the fake that lacks the parameter raises: found, where this op used to be "not run"
    with KeyError: 'check' (and 58 of 202 OpInfo ops with it: keepdim, dtype, alpha)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.shapecheck.audit]\nsamples = "auditv2_hook:samples_for"\n')
    _, out, _ = _cli("--import", str(lib / "auditv2_lib.py"), "--ops", "auditv2::flagged*", "-j", "1", "--no-cache",
                     "--format", "json")
    (rec,) = json.loads(out)["ops"]
    assert rec["inputs"] == "samples" and rec["status"] != "not-run", rec["notes"]
    # the fake's signature lacks the parameter: one finding that names it, with the variant that showed it
    assert any(f["code"] == "SC042" and f["expr"] == "the fake's signature takes no check" and "with check=True" in
               f["message"] for f in rec["findings"]), rec["findings"]


def test_the_search_reads_an_unpacked_rank_and_a_size_a_dimension_must_have():
    """A fake that unpacks ``N, C, H, W = x.shape`` and asserts its grid's last dim is 2 (grid_sampler's
    decomposition) says so only in Python's words: the search takes rank 4 from the unpacking error and size 2
    from the assertion, and finds a call in a few tries instead of running out of them."""
    import torch

    from shapecheck._torch import core as C
    from shapecheck.audit.candidates import FAKE_TRIES, Search

    lib = torch.library.Library("auditv2_hint", "DEF")  # noqa: TOR901 - the test's own namespace
    lib.define("warp(Tensor x, Tensor grid) -> Tensor")

    @torch.library.register_fake("auditv2_hint::warp", lib=lib)
    def _(x, grid):
        n, c, h, w = x.shape
        gn, gh, gw, two = grid.shape
        assert two == 2, f"grid last dimension must be 2, got {two}"
        return x.new_empty((n, c, gh, gw))

    op = C.resolve_op("auditv2_hint::warp")
    search = Search("auditv2_hint::warp", op, op, None)
    found = search.run()
    assert found.inputs is not None, search.errors
    assert found.inputs.describe().startswith("x=float32[x_0, x_1, x_2, x_3], grid=float32[grid_0, grid_1, grid_2, "
                                              "grid_3]")
    assert dict(found.inputs.dims())["grid_3"] == 2
    assert found.fake_tries < FAKE_TRIES // 4


def test_an_eager_kernel_that_times_out_once_is_not_waited_for_again_on_that_op(monkeypatch):
    """optimum-quanto's CPU unpack blocks on torch's extension-build lock: each eager call waited out the full
    time-out (5 calls, 313 s for a 4-op audit). After one time-out the op's other points get the same result at
    once; a crash (a signal) is not remembered, it may be the inputs'."""
    from types import SimpleNamespace

    from shapecheck.audit import eager as eager_mod
    from shapecheck.audit.eager import TIMED_OUT, EagerResult
    from shapecheck.audit.op import OpRun

    calls = []
    replies = iter([EagerResult(False, "the eager kernel killed its process (SIGSEGV)", crashed=True),
                    EagerResult(False, f"{TIMED_OUT} 60 s", crashed=True), EagerResult(True, "fine")])

    class Stub:
        def call(self, *args, **kwargs):
            calls.append(args)
            return next(replies)

    monkeypatch.setattr(eager_mod, "worker", lambda: Stub())
    run = OpRun("lib::op.default", None, None, SimpleNamespace(differential=False, device="cpu"))
    first, second = run.eager_at(None, {"N": 1}), run.eager_at(None, {"N": 2})
    assert "SIGSEGV" in first.error and second.error.startswith(TIMED_OUT) and len(calls) == 2
    later = [run.eager_at(None, {"N": n}) for n in range(3, 6)]
    assert len(calls) == 2 and all(r.crashed and r.error.startswith(TIMED_OUT) for r in later)


def test_a_fake_that_raises_a_type_error_past_its_rank_check_is_a_kernel_error():
    """torch 2.13 runs baddbmm's decomposition for baddbmm.dtype, binding out_dtype to beta: "batch1 must be a
    3D tensor" below rank 3, a TypeError at it. Every call past the check raises, so the fake cannot run at all
    (it was "no inputs")."""
    import torch

    from shapecheck._torch import core as C
    from shapecheck.audit.candidates import Search

    lib = torch.library.Library("auditv2_past", "DEF")  # noqa: TOR901 - the test's own namespace
    lib.define("scaled(Tensor x, ScalarType out_dtype) -> Tensor")

    @torch.library.register_fake("auditv2_past::scaled", lib=lib)
    def _(x, out_dtype):
        torch._check(x.dim() == 3, lambda: "x must be a 3D tensor")
        return x * out_dtype  # a dtype where a number belongs

    op = C.resolve_op("auditv2_past::scaled")
    found = Search("auditv2_past::scaled", op, op, None).run()
    assert found.inputs is None and found.every_call_error.startswith("TypeError: unsupported operand")
    assert 0 < found.past_checks < found.fake_tries


def test_a_check_whose_message_raises_is_a_failed_check_not_a_kernel_error():
    """istft's complex-dtype check formats ``window.device`` with no window: its AttributeError means "the
    input must be complex", a check the search's inputs failed, so the fake is not called broken."""
    import torch

    from shapecheck._torch import core as C
    from shapecheck.audit.candidates import Search

    lib = torch.library.Library("auditv2_msg", "DEF")  # noqa: TOR901 - the test's own namespace
    lib.define("spec(Tensor x, Tensor? window=None) -> Tensor")

    @torch.library.register_fake("auditv2_msg::spec", lib=lib)
    def _(x, window=None):
        torch._check(x.is_complex(), lambda: f"input and window on {window.device}")
        return x.new_empty(x.shape)

    op = C.resolve_op("auditv2_msg::spec")
    search = Search("auditv2_msg::spec", op, op, None)
    found = search.run()
    assert not found.every_call_error
    assert any(e.startswith("RuntimeError: a check failed (its message raised AttributeError") for e in search.errors)
    # the search goes on to a complex input, which the check takes
    assert found.inputs is not None and found.inputs.args[0][2][3] == "complex64"


def test_the_search_reads_one_element_tensors_and_int_bounds_from_the_errors():
    """torch.ao's quantized_decomposed ops say "Expecting scale tensor to be one element", ".item()" says "a Tensor
    with 9 elements cannot be converted to Scalar" (naming no argument), and a bound on an int argument says
    "group_size must be > 1": the search takes rank 0 and an int above 1 from them (the three ops had no inputs
    after 96 tries; each is found in a few tries now)."""
    import torch

    from shapecheck._torch import core as C
    from shapecheck.audit.candidates import FAKE_TRIES, Search

    lib = torch.library.Library("auditv2_scalar", "DEF")  # noqa: TOR901 - the test's own namespace
    lib.define("deq(Tensor x, Tensor scale, Tensor qmax, int group_size) -> Tensor")

    @torch.library.register_fake("auditv2_scalar::deq", lib=lib)
    def _(x, scale, qmax, group_size):
        assert scale.numel() == 1, f"Expecting scale tensor to be one element, but received : {scale.numel()}"
        if qmax.numel() != 1:
            raise RuntimeError(f"a Tensor with {qmax.numel()} elements cannot be converted to Scalar")
        assert group_size > 1, "group_size must be > 1"
        return x.new_empty(x.shape)

    op = C.resolve_op("auditv2_scalar::deq")
    search = Search("auditv2_scalar::deq", op, op, None)
    found = search.run()
    assert found.inputs is not None, search.errors
    text = found.inputs.describe()
    assert "scale=float32[]" in text and "qmax=float32[]" in text and "group_size=1" not in text, text
    assert found.fake_tries < FAKE_TRIES // 4


def test_a_python_autograd_kernel_is_an_eager_kernel_on_every_device():
    import tests.kernels.library_meta  # noqa: F401 - registers sclibmeta::halved (Autograd and Meta only)
    from shapecheck._torch import audit as CA
    from shapecheck._torch import core as C

    assert CA.has_eager_kernel(C.resolve_op("sclibmeta::halved.default"), "cpu")
    assert not CA.has_eager_kernel(C.resolve_op("aten::_cudnn_rnn.default"), "cpu")  # aten's C++ autograd: no
    # a custom_op's autograd kernel (torch/_library's) redispatches: a CUDA-only op has no cpu kernel
    import torch

    @torch.library.custom_op("auditv2_autograd::cuda_only", mutates_args=(), device_types="cuda",
                             schema="(Tensor x) -> Tensor")
    def cuda_only(x):
        return x.clone()

    assert not CA.has_eager_kernel(C.resolve_op("auditv2_autograd::cuda_only.default"), "cpu")
    assert CA.has_eager_kernel(C.resolve_op("auditv2_autograd::cuda_only.default"), "cuda")


@pytest.mark.slow
def test_an_assert_made_only_where_the_example_is_not_is_required_with_its_premise():
    """torch.ao's fake_quant_per_channel broadcasts its input against the scales in an autograd.Function: in the
    region where zero_points_0 == 0, torch asserts input_0 == 0. That is no demand on inputs like the example's
    (every size 3). The region is a 0/1 side of torch's broadcasting, which is no longer traced symbolically (the
    record says so); the premise mechanism itself is tested on a kernel's own branch in test_audit_edges.py."""
    import torch.ao.quantization.fx._decomposed  # noqa: F401 - registers quantized_decomposed::*

    from shapecheck.audit.run import AuditOptions, audit_op

    rec = audit_op("quantized_decomposed::fake_quant_per_channel.default",
                   options=AuditOptions(cache=False, differential=False, variants=0))
    texts = [r["expr"] for r in rec["requires"]]
    assert "input_0 == 0" not in texts and "scales_0 == 0" not in texts, texts
    assert "zero_points_0 != 0 or input_1 != 1 or input_0 == 0" not in texts, texts
    assert any("0/1 sides of branches in torch's own helpers" in n for n in rec["notes"]), rec["notes"]


@pytest.mark.slow  # over 0.5 s on an idle core
def test_an_equality_the_fake_demands_is_tried_broken_against_the_eager_kernel(lib):
    """The fake demands x_0 == y_0 (an inferred requires); the eager kernel broadcasts a y of one row. A point
    with that equality broken (y_0 = 1, the rest at the example) shows the fake refusing what the eager kernel
    takes: points drawn only within the requires never test it."""
    _, doc = _records(lib, "--ops", "auditv2::strict_rows*", "--variants", "0")
    rec = next(r for r in doc["ops"] if r["op"] == "auditv2::strict_rows.default")
    assert any(r["expr"] in ("x_0 == y_0", "y_0 == x_0") for r in rec["requires"]), rec["requires"]
    rejects = [f for f in rec["findings"] if f["class"] == "fake-rejects"]
    assert rejects and 1 in (rejects[0]["counterexample"].get("x_0"), rejects[0]["counterexample"].get("y_0")), rec


@pytest.mark.slow
def test_an_op_torch_runs_only_at_static_sizes_is_a_kernel_error_not_a_relation():
    """FakeTensor's fallback runs the eager kernel of an op without a meta kernel, at static sizes only: under
    symbolic sizes it raises UnsupportedOperatorException wherever it runs, and strict torch.export fails on a
    dynamic dim (checked: ``aten::_aminmax``, ``aten::histogram.bins_tensor``). That the op also rejects a zero
    size at static sizes made the audit read it as a relation the op demands ("relation-only")."""
    from shapecheck.audit.run import AuditOptions, audit_op

    rec = audit_op("aten::_aminmax.default", None, AuditOptions(cache=False, variants=0))
    assert rec["status"] == "findings", rec
    assert [f["class"] for f in rec["findings"]] == ["kernel-error"], rec["findings"]
    assert rec["findings"][0]["expr"].startswith("UnsupportedOperatorException"), rec["findings"]
    assert not any("UnsupportedOperator" in q["expr"] for q in rec["requires"]), rec["requires"]


CORNER = '''
import torch

LIB = torch.library.Library("auditv2_corner", "DEF")
LIB.define("pool(Tensor x, int[1] kernel_size, int[1] padding=0, bool ceil_mode=False) -> Tensor")


def _pool(x, kernel_size, padding=(0,), ceil_mode=False):
    k, p = kernel_size[0], padding[0]
    return torch.nn.functional.max_pool1d(x, k, k, p, ceil_mode=ceil_mode)


LIB.impl("pool", _pool, "CPU")


@torch.library.register_fake("auditv2_corner::pool", lib=LIB)
def _(x, kernel_size, padding=(0,), ceil_mode=False):
    k, p = kernel_size[0], padding[0]
    n = x.shape[-1]
    out = (n + 2 * p - k + (k - 1 if ceil_mode else 0)) // k + 1
    if ceil_mode and (out - 1) * k >= n + p:  # pooling's ceil_mode correction as torch 2.13 writes it: a guard
        out = out - 1
    return x.new_empty((*x.shape[:-1], out))
'''


@pytest.mark.slow  # over 0.5 s on an idle core
def test_the_flags_are_also_traced_with_the_int_lists_off_their_trivial_values(tmp_path):
    # the ceil_mode correction guards on the size only with a kernel above 1 and a padding above 0: a kernel
    # size the schema gives no default (the search's [1]) goes to 2, a zero padding to 1, with every flag on
    (tmp_path / "auditv2_corner.py").write_text(CORNER)
    code, out, err = _main("audit", "--import", str(tmp_path / "auditv2_corner.py"), "--ops", "auditv2_corner::*",
                           "--format", "json", "-j", "1", "--no-cache")
    (rec,) = json.loads(out)["ops"]
    labels = [v["args"] for v in rec["variants"]]
    corner = "ceil_mode=True, kernel_size=[2], padding=[1]"
    assert corner in labels and "ceil_mode=True" in labels, labels
    found = [f for f in rec["findings"] if corner in f["expr"]]
    assert found and all(f["class"] == "modulo" for f in found), rec["findings"]
    # ceil_mode alone: no guard. The lists varied alone meet checks of the eager kernel this fake lacks (a padding
    # over half the kernel, an output below one): SC041, no guard
    others = [f for f in rec["findings"] if corner not in f["expr"]]
    assert {f["class"] for f in others} <= {"fake-accepts"}, rec["findings"]
    assert "the fake returns where the eager kernel raises, with padding=[1]" in [f["expr"] for f in others]
    assert code == 1, err


def test_a_list_gets_the_length_the_schema_states_and_a_second_search_widens_lists_and_optional_numbers():
    """``int[2] kernel_size`` is two entries; where the first search finds nothing, a second one tries lists of no
    stated length at two and four entries (a pad of even length) and optional numbers present (clamp needs a min
    or a max). Ops the first search serves keep their inputs."""
    import torch

    from shapecheck._torch import core as C
    from shapecheck.audit.candidates import Search, plan_args

    im2col = {a.name: a.options for a in plan_args(C.resolve_op("aten::im2col"))}
    assert im2col["kernel_size"] == [[1, 1]] and im2col["stride"] == [[1, 1]]
    assert {a.name: a.options for a in plan_args(C.resolve_op("aten::reflection_pad2d"))}["padding"] == [[1, 1, 1, 1]]

    lib = torch.library.Library("auditv2_widen", "DEF")  # noqa: TOR901 - the test's own namespace
    lib.define("pad_even(Tensor x, SymInt[] pad) -> Tensor")
    lib.define("bounded(Tensor x, Scalar? lo=None, Scalar? hi=None) -> Tensor")

    @torch.library.register_fake("auditv2_widen::pad_even", lib=lib)
    def _(x, pad):
        torch._check(len(pad) % 2 == 0, lambda: "Length of pad must be even")
        return x.new_empty((*x.shape[:-1], x.shape[-1] + pad[0] + pad[1]))

    @torch.library.register_fake("auditv2_widen::bounded", lib=lib)
    def _(x, lo=None, hi=None):
        torch._check(lo is not None or hi is not None, lambda: "at least one of lo and hi")
        return x.new_empty(x.shape)

    found = {}
    for name in ("auditv2_widen::pad_even", "auditv2_widen::bounded"):
        op = C.resolve_op(name)
        found[name] = Search(name, op, op, None).run().inputs
    assert found["auditv2_widen::pad_even"] is not None
    assert "pad=[pad_0, pad_1]" in found["auditv2_widen::pad_even"].describe()
    assert found["auditv2_widen::bounded"] is not None
    assert "hi=1" in found["auditv2_widen::bounded"].describe() or "lo=1" in found["auditv2_widen::bounded"].describe()
    mm = C.resolve_op("aten::mm")
    assert Search("aten::mm", mm, mm, None).run().inputs.describe().startswith("self=float32[self_0, self_1]")


LAX = '''
import torch

LIB = torch.library.Library("auditv2_lax", "DEF")
LIB.define("lax(Tensor x, int[1] pad=0) -> Tensor")
LIB.define("picky(Tensor x, int[1] pad=0) -> Tensor")


def _lax(x, pad=(0,)):
    if pad[0] >= 1:  # the eager kernel's check, which the fake below lacks
        raise RuntimeError(f"pad must be smaller than 1, but got {pad[0]}")
    return torch.nn.functional.pad(x, (pad[0], pad[0]))


def _picky(x, pad=(0,)):
    if pad[0] >= 1:  # a backend that lacks a case: no check a fake could make
        raise NotImplementedError("\\"picky_cpu\\" not implemented for padded inputs")
    return torch.nn.functional.pad(x, (pad[0], pad[0]))


LIB.impl("lax", _lax, "CPU")
LIB.impl("picky", _picky, "CPU")


@torch.library.register_fake("auditv2_lax::lax", lib=LIB)
def _(x, pad=(0,)):
    return x.new_empty((*x.shape[:-1], x.shape[-1] + 2 * pad[0]))


@torch.library.register_fake("auditv2_lax::picky", lib=LIB)
def _(x, pad=(0,)):
    return x.new_empty((*x.shape[:-1], x.shape[-1] + 2 * pad[0]))
'''


@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_variant_the_eager_kernel_refuses_and_the_fake_returns_is_a_finding(tmp_path):
    # both take the first inputs (pad=[0]); with pad=[1] the eager kernel raises and the fake returns: the fake
    # lacks a check (conv_transpose2d's output_padding below the stride, in torch 2.13). A kernel that merely
    # lacks a case (NotImplementedError) is no check a fake could make
    (tmp_path / "auditv2_lax.py").write_text(LAX)
    code, out, err = _main("audit", "--import", str(tmp_path / "auditv2_lax.py"), "--ops", "auditv2_lax::*",
                           "--format", "json", "-j", "1", "--no-cache")
    recs = {r["op"]: r for r in json.loads(out)["ops"]}
    lax = recs["auditv2_lax::lax.default"]
    (f,) = [f for f in lax["findings"] if f["class"] == "fake-accepts"]
    assert "with pad=[1]" in f["expr"] and "pad must be smaller than 1" in f["message"], lax["findings"]
    picky = recs["auditv2_lax::picky.default"]
    assert not [f for f in picky["findings"] if f["class"] == "fake-accepts"], picky["findings"]
    assert code == 1, err


DIMS = '''
import torch

LIB = torch.library.Library("auditv2_dim", "DEF")
LIB.define("pick(Tensor x, int dim=0) -> Tensor")


def _pick(x, dim=0):
    return x.sum(dim)


LIB.impl("pick", _pick, "CPU")


@torch.library.register_fake("auditv2_dim::pick", lib=LIB)
def _(x, dim=0):
    torch._check(0 <= dim < x.dim(), lambda: f"dim {dim} out of range for a {x.dim()}-d input")
    return x.new_empty([s for i, s in enumerate(x.shape) if i != dim])
'''


@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_variant_the_first_inputs_cannot_take_is_traced_on_inputs_searched_again_around_it(tmp_path):
    # dim=2 of the first inputs' 2-d x: both kernels refuse it; a search with dim held at 2 finds a 3-d x
    (tmp_path / "auditv2_dim.py").write_text(DIMS)
    code, out, err = _main("audit", "--import", str(tmp_path / "auditv2_dim.py"), "--ops", "auditv2_dim::*",
                           "--format", "json", "-j", "1", "--no-cache")
    (rec,) = json.loads(out)["ops"]
    assert rec["example"].startswith("x=float32[x_0, x_1]"), rec["example"]
    variants = {v["args"]: v for v in rec["variants"]}
    assert variants["dim=2, inputs searched again"]["status"] == "traced", variants
    assert variants["dim=2, inputs searched again"]["traces"] >= 1
    assert code in (0, 1), err


@pytest.mark.slow
def test_the_search_gives_an_optional_first_tensor_and_keeps_its_dtype_when_a_dtype_argument_is_refused():
    """torchao's ``choose_qparams_affine(Tensor? input, str mapping_type, SymInt[] block_size, ScalarType
    target_dtype, ...)`` (a hunt's false SC036): "Unsupported dtype: torch.float32" was about target_dtype, but the
    search moved the input off float32, then called the fake with ``input=None`` until its AttributeError read as a
    programming error on every call. The refusal now moves the ScalarType argument the call gave that dtype, and a
    'NoneType' error on a call that left the optional tensor out gives it a tensor next."""
    import torch

    from shapecheck._torch import core as C
    from shapecheck.audit.candidates import Search, plan_args
    from shapecheck.audit.hints import hint

    lib = torch.library.Library("auditv2_optin", "DEF")  # noqa: TOR901 - the test's own namespace
    lib.define("choose(Tensor? input, str mapping_type, SymInt[] block_size, ScalarType target_dtype, "
               "Scalar? quant_min=None, Scalar? quant_max=None, float? eps=None, ScalarType? scale_dtype=None, "
               "ScalarType? zero_point_dtype=None, bool keepdim=False) -> (Tensor, Tensor)")

    @torch.library.register_fake("auditv2_optin::choose", lib=lib)
    def _(input, mapping_type, block_size, target_dtype, quant_min=None, quant_max=None, eps=None, scale_dtype=None,
          zero_point_dtype=None, keepdim=False):
        if target_dtype not in (torch.int8, torch.uint8, torch.int32):
            raise ValueError(f"Unsupported dtype: {target_dtype}")
        assert mapping_type in ("SYMMETRIC", "ASYMMETRIC"), f"Unsupported mapping type: {mapping_type}"
        eps = torch.finfo(input.dtype).eps if eps is None else eps  # 'NoneType' without an input; a float one only
        assert len(block_size) == input.dim(), f"Got input dim:{input.dim()}, block_size: {block_size}"
        shape = [s // b for s, b in zip(input.shape, block_size)]
        return input.new_empty(shape), input.new_empty(shape, dtype=torch.int32)

    op = C.resolve_op("auditv2_optin::choose")
    args = {a.name: a for a in plan_args(op)}
    assert args["input"].options[0] == (2, "float32") and args["input"].options[-1] is None
    # "Unsupported dtype: torch.float32" on a call whose target_dtype is float32: that argument's, not the input's
    combo = tuple({"input": (2, "float32"), "target_dtype": "float32"}.get(a.name, a.options[0])
                  for a in args.values())
    hint(list(args.values()), "ValueError: Unsupported dtype: torch.float32", combo)
    assert args["input"].options[0] == (2, "float32") and args["target_dtype"].options[-1] == "float32"
    search = Search("auditv2_optin::choose", op, op, None)
    found = search.run()
    assert found.inputs is not None and not found.every_call_error, search.errors
    example = found.inputs.describe()
    assert example.startswith("input=float32[") and "mapping_type='" in example, example


@pytest.mark.slow
def test_a_programming_error_the_eager_kernel_raises_too_is_no_inputs_not_a_kernel_error():
    """prims::fft_c2r on a real tensor: the fake and the eager kernel both raise ``KeyError: torch.float32`` (a
    complex-to-real FFT takes complex input). The inputs are wrong, not the fake: no input found (inconclusive),
    never SC036. Without an eager kernel to ask, the same fake is a kernel error as before."""
    from types import SimpleNamespace

    import torch

    from shapecheck._torch import core as C
    from shapecheck.audit.candidates import Search

    lib = torch.library.Library("auditv2_keyerr", "DEF")  # noqa: TOR901 - the test's own namespace
    lib.define("c2r(Tensor x) -> Tensor")
    real_of = {torch.complex128: torch.float64}  # a dtype the search never tries: every call raises

    @torch.library.register_fake("auditv2_keyerr::c2r", lib=lib)
    def _(x):
        return x.new_empty(x.shape, dtype=real_of[x.dtype])

    def eager(inputs):
        return SimpleNamespace(ok=False, error="KeyError: torch.float32", crashed=False)

    op = C.resolve_op("auditv2_keyerr::c2r")
    refused = Search("auditv2_keyerr::c2r", op, op, eager).run()
    assert refused.inputs is None and not refused.every_call_error and refused.eager_refused_too >= 1
    alone = Search("auditv2_keyerr::c2r", op, op, None).run()
    assert alone.inputs is None and alone.every_call_error.startswith("KeyError")

    def checks_sizes(inputs):  # a size check of its own that the search never meets: no word on the fake's error
        return SimpleNamespace(ok=False, error="RuntimeError: rows must come in blocks of 7", crashed=False)

    checked = Search("auditv2_keyerr::c2r", op, op, checks_sizes).run()
    assert checked.every_call_error.startswith("KeyError") and not checked.eager_refused_too


SLOW_FAKE = '''
import pathlib
import time

import torch


@torch.library.custom_op("auditslow::stalls", mutates_args=())
def stalls(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@stalls.register_fake
def _(x):
    pathlib.Path(__file__).with_name("stalls.entered").touch()  # a test's cue that this op is under way
    time.sleep(600)  # a fake that never ends in a CI's time
    return torch.empty_like(x)


@torch.library.custom_op("auditslow::quick", mutates_args=())
def quick(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@quick.register_fake
def _(x):
    return torch.empty_like(x)
'''


@pytest.mark.slow  # it waits out a budget
def test_an_op_past_its_time_budget_is_stopped_and_not_run_and_the_others_are_audited(tmp_path):
    """hunt 36: one op of executorch's channels_last library ran for minutes; the run, killed from outside,
    printed nothing. Past --op-timeout the op's worker is stopped: not run (inconclusive), the rest reported."""
    lib = tmp_path / "auditslow_lib.py"
    lib.write_text(SLOW_FAKE, encoding="utf-8")
    start = time.monotonic()
    code, out, _ = _cli("--import", str(lib), "--ops", "auditslow::*", "-j", "1", "--no-cache", "--format", "json",
                        "--op-timeout", "5")
    assert time.monotonic() - start < 120
    recs = {r["op"]: r for r in json.loads(out)["ops"]}
    stalled, quick = recs["auditslow::stalls.default"], recs["auditslow::quick.default"]
    assert stalled["status"] == "not-run" and any("past its time budget of 5 s (--op-timeout)" in n
                                                  for n in stalled["notes"]), stalled
    assert quick["status"] == "clean" and quick["traces"] > 0, quick
    assert code == 3


LOGGING_EAGER = '''
import os

import torch


def _logged_check(ok, text):
    if not ok:  # as ExecuTorch's ATen-mode kernels do: the C++ check is logged, and the kernel returns anyway
        os.write(2, f"E 00:00:00.000 op_demo.cpp:12] Check failed ({text}): the last dim must be even\\\\n".encode())


def _eager(x):
    _logged_check(x.shape[-1] % 2 == 0, "x.size(-1) % 2 == 0")
    return torch.empty_like(x)


@torch.library.custom_op("auditlog::strict_fake", mutates_args=())
def strict_fake(x: torch.Tensor) -> torch.Tensor:
    return _eager(x)


@strict_fake.register_fake
def _(x):
    torch._check(x.shape[-1] % 2 == 0, lambda: "the last dim must be even")
    return torch.empty_like(x)


@torch.library.custom_op("auditlog::lenient_fake", mutates_args=())
def lenient_fake(x: torch.Tensor) -> torch.Tensor:
    return _eager(x)


@lenient_fake.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("auditlog::logging_fake", mutates_args=())
def logging_fake(x: torch.Tensor) -> torch.Tensor:
    return _eager(x)


@logging_fake.register_fake
def _(x):  # the same logging code on both sides (a C++ kernel at the Meta key runs on fake tensors)
    return _eager(x)
'''


@pytest.mark.slow
def test_an_eager_kernel_that_logs_a_failed_check_and_returns_refuses_the_inputs(tmp_path):
    """hunt 36: ExecuTorch's ATen-mode kernels log "Check failed (...)" on stderr and return an uninitialised
    output; the audit took that for an accepted input (false SC042 where the fake checks the same, and a fake
    that checks nothing passed). The logged failure now counts as the eager kernel's refusal."""
    lib = tmp_path / "auditlog_lib.py"
    lib.write_text(LOGGING_EAGER, encoding="utf-8")
    code, out, _ = _cli("--import", str(lib), "--ops", "auditlog::*", "-j", "1", "--no-cache", "--format", "json",
                        "--variants", "0")
    recs = {r["op"]: r for r in json.loads(out)["ops"]}
    strict, lenient = recs["auditlog::strict_fake.default"], recs["auditlog::lenient_fake.default"]
    assert not [f for f in strict["findings"] if f["class"] == "fake-rejects"], strict["findings"]
    accepts = [f for f in lenient["findings"] if f["class"] == "fake-accepts"]
    assert accepts and "logged a failed check and returned anyway: Check failed (x.size(-1) % 2 == 0)" in \
        json.dumps(accepts[0]), lenient["findings"]
    both = recs["auditlog::logging_fake.default"]
    assert not [f for f in both["findings"] if f["class"] in ("fake-accepts", "fake-rejects")], both["findings"]
    assert code == 1


def test_an_ops_many_cxx_specialisations_are_one_row_of_the_text_report():
    from shapecheck.render.audit import CXX_GROUP, _cxx_grouped

    rec = {"op": "lib::cxx.out"}
    spec = [{"class": "specialization", "expr": f"x_{i}", "message": "the kernel needs the concrete value of x "
             "(its C++ code reads the size as a plain int, as code that is not SymInt-aware does)"}
            for i in range(CXX_GROUP + 2)]
    other = {"class": "fake-accepts", "expr": "the fake returns where the eager kernel raises", "message": ""}
    rows = _cxx_grouped([(rec, f) for f in [other, *spec]])
    assert len(rows) == 2 and rows[0][1] is other
    assert rows[1][1]["expr"].startswith(f"{CXX_GROUP + 2} sizes, each needed as a concrete value") \
        and "x_0, x_1" in rows[1][1]["expr"]
    assert len(_cxx_grouped([(rec, f) for f in spec[:CXX_GROUP]])) == CXX_GROUP  # a few stay one by one


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="the audit's supervised workers need fork")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_run_stopped_with_sigterm_reports_the_ops_done_and_the_rest_not_run(tmp_path, sig):
    """hunt 38: `timeout` (SIGTERM) on an audit printed nothing, and Ctrl-C (SIGINT to the terminal's whole process
    group) printed a KeyboardInterrupt traceback from each worker. The ops done keep their records, the one under
    way and those not reached are not run (inconclusive), and the report is written."""
    import subprocess

    lib = tmp_path / "auditslow_lib.py"
    lib.write_text(SLOW_FAKE, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "shapecheck", "audit", "--import", str(lib), "--ops",
                             "auditslow::*", "-j", "1", "--no-cache", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            start_new_session=True)
    deadline = time.monotonic() + 240  # imports, then quick (first: the ops go in name order) and stalls under way
    while not (tmp_path / "stalls.entered").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)
    os.killpg(proc.pid, getattr(signal, sig))  # as a terminal's Ctrl-C: every process of the group
    out, err = proc.communicate(timeout=120)
    recs = {r["op"]: r for r in json.loads(out)["ops"]}
    assert recs["auditslow::quick.default"]["status"] == "clean", recs
    stalled = recs["auditslow::stalls.default"]
    assert stalled["status"] == "not-run" and any("the run got SIGTERM or SIGINT" in n for n in stalled["notes"]), \
        stalled
    assert "KeyboardInterrupt" not in err and "Traceback" not in err, err
    assert proc.returncode == 3, err
