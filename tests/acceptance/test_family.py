"""The SDPA contract family of issue 6: the contracts of five attention ops load, the installed torch 2.13 meta
kernels give the verdicts documented in docs/findings.md (with and without the contracts' suppressions), and
mutant kernels written here fail with SC002 while guard-free kernels written from the runtime pass."""

import logging
import re
import textwrap
from functools import cache

import pytest
import torch

from shapecheck.contract import suppressions
from shapecheck.contract.load import load_contract
from shapecheck.contract.model import bind_case
from shapecheck.findings import Verdict
from shapecheck.logic import expr as E
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import ROOT

CONTRACTS = ROOT / "contracts" / "aten"
FINDINGS = ROOT / "docs" / "findings.md"
DIMS = ("B", "H", "Hk", "L", "S", "E", "Ev")

FLASH = "aten::_scaled_dot_product_flash_attention"
EFFICIENT = "aten::_scaled_dot_product_efficient_attention"
CUDNN = "aten::_scaled_dot_product_cudnn_attention"
CPU = "aten::_scaled_dot_product_flash_attention_for_cpu"
OVERRIDEABLE = "aten::_scaled_dot_product_fused_attention_overrideable"

# op -> (cases, path ids, verdict without suppressions); every meta kernel but the XPU one accepts inputs the
# runtime rejects (SC021, finding F7)
FAMILY = {
    FLASH: (12, ("fa2", "fa2-debug-mask"), Verdict.FAIL),
    EFFICIENT: (24, ("cutlass-lse", "cutlass-no-lse", "cutlass-chunked-no-lse"), Verdict.FAIL),
    CUDNN: (16, ("cudnn-stats", "cudnn-no-stats"), Verdict.FAIL),
    CPU: (24, ("cpu-flash",), Verdict.FAIL),
    OVERRIDEABLE: (9, ("xpu-onednn",), Verdict.FAIL),
}


def contract_file(op):
    return CONTRACTS / f"{op.partition('::')[2]}.toml"


@pytest.fixture(scope="module", autouse=True)
def quiet_fake_tensor():
    """FakeTensor logs every data-dependent guard as an ERROR with a traceback; formatting them costs seconds."""
    logger = logging.getLogger("torch._subclasses.fake_tensor")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


def without_suppressions(text: str) -> str:
    """The contract's TOML minus its [[suppress]] tables."""
    out, inside = [], False
    for line in text.splitlines():
        if re.match(r"^\s*\[\[\s*suppress\s*\]\]", line):
            inside = True
            continue
        if re.match(r"^\s*\[", line):
            inside = False
        if not inside:
            out.append(line)
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def stripped_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("stripped")
    for op in FAMILY:
        (d / contract_file(op).name).write_text(without_suppressions(contract_file(op).read_text()))
    return d


@cache
def _stripped_report(op, directory):
    return verify_op(op, contract=str(directory / contract_file(op).name))


@pytest.fixture(scope="module")
def stripped(stripped_dir):
    """op -> the installed kernel's report against the contract without its suppressions (one run per op)."""
    return lambda op: _stripped_report(op, stripped_dir)


def by_expr(report, code):
    out = {}
    for v in report.violations:
        if v.code == code:
            out.setdefault(v.expr, v)
    return out


# ---------------------------------------------------------------------------------------------------------
# The contracts


@pytest.mark.parametrize("op", list(FAMILY))
def test_each_contract_loads_with_its_dims_cases_and_paths(op):
    c = load_contract(contract_file(op))
    cases, paths, _ = FAMILY[op]
    assert c.op == op
    assert c.dim_names == DIMS and all(d.dynamic and d.min == 1 for d in c.dims)
    assert sum(1 for _ in c.cases()) == cases
    assert tuple(p.id for p in c.paths) == paths
    schema = getattr(torch.ops.aten, op.partition("::")[2]).default._schema
    # every argument of the op, in its order; every path names every return
    assert [a.name for a in c.args] == [a.name for a in schema.arguments]
    assert all(len(p.outputs) == len(schema.returns) for p in c.paths)
    assert c.guard_free


def test_the_runtime_shapes_are_in_the_contracts():
    """Spot values of the obligations, bound for one case each: what the runtime source says."""
    point = dict(B=2, H=8, Hk=2, L=33, S=300, E=64, Ev=64)

    def outputs(op, values, path):
        case = bind_case(load_contract(contract_file(op)), values)
        p = next(p for p in case.paths if p.id == path)
        return [None if o is None else E.evaluate(o, point) for o in p.outputs]

    flash = outputs(FLASH, dict(dtype="float16", is_causal=False, mode="debug"), "fa2-debug-mask")
    assert flash == [(2, 8, 33, 64), (2, 8, 33), None, None, 33, 300, (2,), (), (2, 8, 128, 384)]
    eff = dict(dtype="float16", is_causal=False, compute_log_sumexp=True, attn_bias="none")
    assert outputs(EFFICIENT, eff, "cutlass-lse") == [(2, 8, 33, 64), (2, 8, 64), (), ()]
    eff["compute_log_sumexp"] = False
    assert outputs(EFFICIENT, eff, "cutlass-no-lse")[1] == (2, 8, 0)
    cudnn = outputs(CUDNN, dict(dtype="bfloat16", is_causal=True, compute_log_sumexp=True, attn_bias="none"),
                    "cudnn-stats")
    assert cudnn[:2] == [(2, 8, 33, 64), (2, 8, 33, 1)] and cudnn[4:8] == [33, 300, (), ()]
    assert outputs(CPU, dict(dtype="bfloat16", is_causal=False, mask="float-2d"), "cpu-flash") == [
        (2, 8, 33, 64), (2, 8, 33)]
    assert outputs(OVERRIDEABLE, dict(dtype="float32", is_causal=False, attn_bias="float"), "xpu-onednn")[4:8] == [
        33, 300, (), ()]


# ---------------------------------------------------------------------------------------------------------
# The installed kernels, without the suppressions: exactly the documented findings


@pytest.mark.parametrize("op", list(FAMILY))
def test_installed_kernel_verdict_without_suppressions(op, stripped):
    r = stripped(op)
    assert r.verdict == FAMILY[op][2]
    assert len(r.cases) == FAMILY[op][0] and not any(c.skipped for c in r.cases)


def shape_findings(r):
    """The findings other than SC021 (finding F7, test_finding_F7_rejected_inputs)."""
    return [v for v in r.violations if v.code != "SC021"]


def test_flash_finding_F1_debug_mask(stripped):
    r = stripped(FLASH)
    assert {v.code for v in shape_findings(r)} == {"SC001", "SC002"}
    assert all("mode=debug" in v.case for v in shape_findings(r))

    guards = by_expr(r, "SC001")
    assert set(guards) == {"E > 64", "S <= 128", "S <= 256"}
    e64 = guards["E > 64"]
    assert e64.counterexample == dict(B=1, H=1, Hk=1, L=1, S=1, E=8, Ev=8)
    assert e64.witness["E"] > 64 and "to [72, 256]" in e64.restricts
    assert e64.location.file.endswith("_meta_registrations.py") and "head_dim > 64" in e64.location.text
    assert guards["S <= 128"].counterexample["S"] == 129 and "max_seqlen_batch_k <= 128" in guards["S <= 128"].location.text
    assert guards["S <= 256"].counterexample["S"] == 257

    shapes = by_expr(r, "SC002")
    want = "contract (B, H, (L + 127) // 128 * 128, (S + 127) // 128 * 128)"
    assert set(shapes) == {f"output 8 = (B, H, L, {x}), {want}"
                           for x in ("128", "256", "-(-L // 128)", "-(-L // 256)")}
    v128 = shapes[f"output 8 = (B, H, L, 128), {want}"]
    assert v128.path == "fa2-debug-mask"
    assert v128.counterexample == dict(B=1, H=1, Hk=1, L=1, S=1, E=72, Ev=72)
    assert "is (1, 1, 1, 128)" in v128.message and "says (1, 1, 128, 128)" in v128.message
    assert shapes[f"output 8 = (B, H, L, 256), {want}"].counterexample["S"] == 129
    # S > 256: the meta's last dim is ceil(L / blocksize_c), a length computed from the query length
    assert shapes[f"output 8 = (B, H, L, -(-L // 128)), {want}"].counterexample["S"] == 257


@pytest.mark.parametrize("op", [CUDNN, OVERRIDEABLE])
def test_findings_F2_F3_guard_on_E_equals_Ev(op, stripped):
    r = stripped(op)
    # the guard is in torch's helper alloc_with_matching_layout: SC022 (issue 22), located at the kernel's call
    guards = [v for v in shape_findings(r) if v.code == "SC022"]
    assert {(v.code, v.expr) for v in guards} == {("SC022", "E == Ev")}
    assert len(guards) == FAMILY[op][0]  # every case, the later ones stopped at the shared first guard
    v = guards[0]
    assert v.dims == ("E", "Ev") and "alloc_with_matching_layout(" in v.location.text
    assert v.counterexample["E"] != v.counterexample["Ev"] and v.witness["E"] == v.witness["Ev"]
    first = r.cases[0]
    assert first.meta_paths == 2
    # both leaves prove every output, except output 1 where the runtime returns None (F5, F6: SC019)
    refuted = {p.path for p in first.paths if p.status == "refuted"}
    assert all(p.status in ("proved", "refuted", "unreachable") for p in first.paths)
    assert refuted == {v.path for v in r.violations if v.code == "SC019" and v.case == first.case}


def test_efficient_padded_logsumexp_is_proved(stripped):
    """The meta's math.ceil(L / 32) * 32 is translated exactly and equals the contract's (L + 31) // 32 * 32."""
    r = stripped(EFFICIENT)
    assert {(v.code, v.path) for v in shape_findings(r)} == {("SC019", "cutlass-chunked-no-lse")}  # F4
    for c in r.cases:
        statuses = {p.path: p.status for p in c.paths}
        assert statuses["cutlass-lse"] in ("proved", "unreachable")
        assert statuses["cutlass-no-lse"] in ("proved", "unreachable")
    assert any(p.path == "cutlass-lse" and p.status == "proved" for c in r.cases for p in c.paths)


@pytest.mark.parametrize("op, path, expr", [
    (EFFICIENT, "cutlass-chunked-no-lse", "output 1: a tensor (B, H, 0), runtime None"),
    (CUDNN, "cudnn-no-stats", "output 1: a tensor (B, H, L, 1), runtime None"),
    (OVERRIDEABLE, "xpu-onednn", "output 1: a tensor (B, H, L), runtime None"),
])
def test_findings_F4_F6_a_tensor_where_the_runtime_returns_none(op, path, expr, stripped):
    found = [v for v in stripped(op).violations if v.code == "SC019"]
    assert found and {(v.path, v.expr) for v in found} == {(path, expr)}
    if op == EFFICIENT:  # the chunked runtime: B > 65535, every case without compute_log_sumexp
        assert len(found) == 12 and all(v.counterexample["B"] == 65536 for v in found)


def test_flash_for_cpu_passes_guard_free(stripped):
    r = stripped(CPU)
    assert not shape_findings(r) and all(c.traces == 1 and c.meta_paths == 1 for c in r.cases)


# op -> {[[rejects]] id: its counterexample's dims that are not 1}
F7 = {
    FLASH: {"gqa-heads": {"Hk": 2}, "value-head-dim": {"Ev": 2}, "head-dim-multiple-of-8": {},
            "head-dim-at-most-256": {"E": 257}},
    EFFICIENT: {"heads-equal": {"Hk": 2}, "head-dim-alignment": {}, "bias-alignment": {}},
    CUDNN: {"gqa-heads": {"Hk": 2}, "head-dim-multiple-of-8": {}},
    CPU: {"same-head-size": {"Ev": 2}},
}


@pytest.mark.parametrize("op", list(F7))
def test_finding_F7_rejected_inputs(op, stripped):
    """Each runtime check of the family is a [[rejects]] region the meta kernel accepts, in every case it
    lies in, with the least point of the region as counterexample; cudnn's E, Ev <= 256 is a dispatcher limit."""
    r = stripped(op)
    found = [v for v in r.violations if v.code == "SC021"]
    assert {str(v.path).removeprefix("rejects.") for v in found} == set(F7[op])
    for v in found:
        rid = str(v.path).removeprefix("rejects.")
        want = {d: 1 for d in DIMS if d in v.counterexample} | F7[op][rid]
        assert v.counterexample == want, (rid, v.case, v.counterexample)
    assert "head-dim-at-most-256" not in {v.path for v in found if op == CUDNN}


@pytest.mark.parametrize("op", list(FAMILY))
def test_suppressions_cover_the_findings_and_each_matches(op, stripped):
    shipped = load_contract(contract_file(op))
    marked = suppressions.apply(shipped.suppressions, stripped(op).violations)
    assert all(v.suppressed for v in marked)
    findings = FINDINGS.read_text()
    for s in shipped.suppressions:
        assert any(v.suppressed == s.reason for v in marked), f"stale suppression: {s.reason}"
        ref = re.search(r"\b([FG]\d)\b", s.reason)
        assert ref and "docs/findings.md" in s.reason, s.reason
        assert f"## {ref.group(1)}. " in findings or f"- **{ref.group(1)}. " in findings
        assert s.expires == "2027-11-30"


@pytest.mark.parametrize("op", [EFFICIENT, CPU, OVERRIDEABLE])
def test_shipped_contract_passes_end_to_end(op):
    r = verify_op(op)
    assert r.verdict == Verdict.PASS
    assert not [v for v in r.violations if not v.suppressed]


# ---------------------------------------------------------------------------------------------------------
# Kernels written here: mutants fail with SC002, runtime-faithful rewrites pass

# Every factory call names the query's device, as torch's meta kernels do: a Python meta kernel runs in the
# Meta slot under torch.export, where torch.empty(SymInts) without a device reaches the CPU kernel and fails
# (SymIntArrayRef expected to contain only concrete integers), as torch.export itself fails with it.
KERNELS = '''
import torch


def _lse(query):
    return torch.empty(query.size(0), query.size(1), query.size(2), dtype=torch.float32, device=query.device)


def _u64(query):
    return (torch.empty(2, dtype=torch.uint64, device=query.device),
            torch.empty((), dtype=torch.uint64, device=query.device))


def flash_max_q_is_S(query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False, scale=None):
    B, H, L, E = query.shape
    S = key.size(2)
    return (torch.empty_like(query), _lse(query), None, None, S, S, *_u64(query), torch.empty(0, dtype=query.dtype, device=query.device))


def flash_runtime(query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False, scale=None):
    B, H, L, E = query.shape
    S = key.size(2)
    # mha_fwd's TORCH_CHECKs
    torch._check(E % 8 == 0, lambda: "head_size must be a multiple of 8")
    torch._check(E <= 256, lambda: "FlashAttention forward only supports head dimension at most 256")
    torch._check(H % key.size(1) == 0, lambda: "Number of heads in key/value must divide number of heads in query")
    torch._check(value.size(3) == E, lambda: "v must have shape")
    debug = torch.empty(B, H, (L + 127) // 128 * 128, (S + 127) // 128 * 128, dtype=query.dtype, device=query.device) \
        if return_debug_mask else torch.empty(0, dtype=query.dtype, device=query.device)
    return (torch.empty(B, H, L, value.size(3), dtype=query.dtype, device=query.device), _lse(query), None, None, L, S, *_u64(query), debug)


def _efficient(query, value, compute_log_sumexp, pad):
    B, H, L, E = query.shape
    lse = torch.empty(B, H, pad(L) if compute_log_sumexp else 0, dtype=torch.float32, device=query.device)
    return (torch.empty(B, L, H, value.size(3), dtype=query.dtype, device=query.device).transpose(1, 2), lse, torch.empty((), dtype=torch.int64, device=query.device),
            torch.empty((), dtype=torch.int64, device=query.device))


def efficient_pad16(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False, scale=None):
    return _efficient(query, value, compute_log_sumexp, lambda L: (L + 15) // 16 * 16)


def efficient_unpadded(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False, scale=None):
    return _efficient(query, value, compute_log_sumexp, lambda L: L)


def efficient_runtime(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False, scale=None):
    align = 4 if query.dtype == torch.float32 else 8
    torch._check(key.size(1) == query.size(1))
    torch._check(query.size(3) % align == 0)
    if attn_bias is not None:
        torch._check(key.size(2) % align == 0)
    return _efficient(query, value, compute_log_sumexp, lambda L: (L + 31) // 32 * 32)


def _cudnn(query, key, value, stats):
    B, H, L, E = query.shape
    return (torch.empty(B, H, L, value.size(3), dtype=query.dtype, device=query.device), stats, None, None, L, key.size(2),
            torch.empty((), dtype=torch.int64, device=query.device), torch.empty((), dtype=torch.int64, device=query.device), None)


def cudnn_stats_3d(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False,
                   return_debug_mask=False, scale=None):
    return _cudnn(query, key, value, _lse(query))


def cudnn_runtime(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False,
                  return_debug_mask=False, scale=None):
    B, H, L, E = query.shape
    torch._check(H % key.size(1) == 0)
    torch._check(E % 8 == 0)
    torch._check(value.size(3) % 8 == 0)
    stats = torch.empty(B, H, L, 1, dtype=torch.float32, device=query.device) if compute_log_sumexp else None
    return _cudnn(query, key, value, stats)


def cpu_lse_not_transposed(query, key, value, dropout_p=0.0, is_causal=False, attn_mask=None, scale=None):
    B, H, L, E = query.shape
    return torch.empty_like(query), torch.empty(B, L, H, dtype=torch.float32, device=query.device)


def overrideable_max_k_is_L(query, key, value, attn_bias=None, dropout_p=0.0, is_causal=False,
                            return_debug_mask=False, scale=None):
    B, H, L, E = query.shape
    return (torch.empty(B, H, L, value.size(3), device=query.device), None, None, None, L, L,
            torch.empty((), dtype=torch.int64, device=query.device), torch.empty((), dtype=torch.int64, device=query.device), None)
'''


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    path = tmp_path_factory.mktemp("kernels") / "family_kernels.py"
    path.write_text(textwrap.dedent(KERNELS))
    return path


def run(op, kernels, fn, contract=None, cases=()):
    return verify_op(op, contract=None if contract is None else str(contract), meta=f"{kernels}:{fn}",
                     options=Options(cases=cases))


def only_sc002(report):
    """The mutant's SC002 findings, once the findings every kernel written like torch's meta has are set aside:
    a tensor output 1 where the runtime returns None (SC019: efficient's chunked path, cuDNN without stats),
    and SC021, suppressed (the mutants, like torch's kernels, accept what the runtime rejects: finding F7)."""
    assert report.verdict == Verdict.FAIL
    assert all(v.suppressed for v in report.violations if v.code == "SC021")
    found = [v for v in shape_findings(report)
             if not (v.code == "SC019" and v.path in ("cutlass-chunked-no-lse", "cudnn-no-stats"))]
    assert {v.code for v in found} == {"SC002"}, [(v.code, v.expr) for v in found]
    return found


def test_flash_mutant_max_q_is_S(kernels):
    vs = only_sc002(run(FLASH, kernels, "flash_max_q_is_S", cases=("mode=eval",)))
    v = vs[0]
    assert v.path == "fa2" and v.expr == "output 4 = S, contract L"
    assert v.counterexample["L"] != v.counterexample["S"]


def test_flash_runtime_kernel_passes_the_contract_without_suppressions(kernels, stripped_dir):
    r = run(FLASH, kernels, "flash_runtime", contract=stripped_dir / contract_file(FLASH).name)
    assert r.verdict == Verdict.PASS and not r.violations
    assert all(c.traces == 1 for c in r.cases)  # guard-free


@pytest.mark.parametrize("fn", ["efficient_pad16", "efficient_unpadded"])
def test_efficient_mutants_of_the_lse_padding(kernels, fn):
    vs = only_sc002(run(EFFICIENT, kernels, fn, cases=("dtype=float16,is_causal=false",)))
    assert {v.path for v in vs} == {"cutlass-lse"}
    v = vs[0]
    L = v.counterexample["L"]
    got = (L + 15) // 16 * 16 if fn == "efficient_pad16" else L
    assert got != (L + 31) // 32 * 32 and "contract (B, H, (L + 31) // 32 * 32)" in v.expr


def test_efficient_runtime_kernel_proves_the_padded_lse(kernels, stripped_dir):
    """Written with // the same obligation is proved, as the meta kernel's math.ceil is. Like the meta kernel,
    it returns an empty log_sumexp where the chunked runtime (B > 65535) returns None (F4): branching on B
    would be a guard."""
    r = run(EFFICIENT, kernels, "efficient_runtime", contract=stripped_dir / contract_file(EFFICIENT).name)
    assert {(v.code, v.path) for v in r.violations} == {("SC019", "cutlass-chunked-no-lse")}
    statuses = {p.path: p.status for c in r.cases for p in c.paths if p.status != "unreachable"}
    assert statuses == {"cutlass-lse": "proved", "cutlass-no-lse": "proved", "cutlass-chunked-no-lse": "refuted"}


def test_cudnn_mutant_with_3d_stats(kernels):
    vs = only_sc002(run(CUDNN, kernels, "cudnn_stats_3d", cases=("dtype=float16,is_causal=false",)))
    assert {v.path for v in vs} == {"cudnn-stats"}  # output 1 is None on cudnn-no-stats (SC019, set aside)
    assert "contract (B, H, L, 1)" in vs[0].expr and "rank 3" in vs[0].message


def test_cudnn_runtime_kernel_passes_without_the_guard(kernels, stripped_dir):
    r = run(CUDNN, kernels, "cudnn_runtime", contract=stripped_dir / contract_file(CUDNN).name)
    assert r.verdict == Verdict.PASS and not r.violations


def test_cpu_mutant_logsumexp_not_transposed(kernels):
    vs = only_sc002(run(CPU, kernels, "cpu_lse_not_transposed", cases=("dtype=float32,is_causal=false",)))
    v = vs[0]
    assert v.expr == "output 1 = (B, L, H), contract (B, H, L)"
    assert v.counterexample["L"] != v.counterexample["H"]


def test_overrideable_mutant_max_k_is_L(kernels):
    vs = only_sc002(run(OVERRIDEABLE, kernels, "overrideable_max_k_is_L", cases=("dtype=float32",)))
    assert {v.expr for v in vs} == {"output 5 = L, contract S"}
    assert vs[0].counterexample["L"] != vs[0].counterexample["S"]
