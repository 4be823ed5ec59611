"""The engine on contracts other than SDPA: a toy op with a padded output, ceil division, scalar outputs."""

import pytest

from shapecheck.contract.load import load_contract
from shapecheck.findings import Verdict
from shapecheck.kernel.load import function_kernel
from shapecheck.prove.verify import Options, verify_contract

CONTRACT = """schema = 1
op = "mylib::pad_rows"
[dims]
N = { min = 1, max = 100000 }
D = { min = 1, max = 4096 }
[choices]
block = [16, 32]
[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(N, D)"
[[args]]
name = "block"
kind = "int"
value = "block"
[[paths]]
id = "only"
when = "true"
outputs = ["((N + block - 1) // block * block, D)", "N"]
"""

KERNELS = """import math
import torch

def with_ceil(x, block):
    rows = math.ceil(x.size(0) / block) * block
    return x.new_empty((rows, x.size(1))), x.size(0)

def with_floor_div(x, block):
    return x.new_empty(((x.size(0) + block - 1) // block * block, x.size(1))), x.size(0)

def forgets_padding(x, block):
    return x.new_empty(x.shape), x.size(0)

def wrong_scalar(x, block):
    return x.new_empty(((x.size(0) + block - 1) // block * block, x.size(1))), x.size(1)

def branches_on_block_multiple(x, block):
    if x.size(0) % block == 0:
        return x.new_empty(x.shape), x.size(0)
    return x.new_empty(((x.size(0) // block + 1) * block, x.size(1))), x.size(0)
"""


def _verify(tmp_path, fn):
    c = tmp_path / "pad.toml"
    c.write_text(CONTRACT)
    k = tmp_path / "kernels.py"
    k.write_text(KERNELS)
    return verify_contract(load_contract(c), function_kernel(f"{k}", f"{fn}"), Options())


@pytest.mark.slow
def test_ceil_division_is_translated_exactly(tmp_path):
    assert _verify(tmp_path, "with_ceil").verdict == Verdict.PASS
    assert _verify(tmp_path, "with_floor_div").verdict == Verdict.PASS


@pytest.mark.slow
def test_missing_padding_and_wrong_scalar_output(tmp_path):
    r = _verify(tmp_path, "forgets_padding")
    assert r.verdict == Verdict.FAIL and {v.code for v in r.violations} == {"SC002"}
    assert any(v.counterexample["N"] % 16 for v in r.violations)
    r = _verify(tmp_path, "wrong_scalar")
    assert r.verdict == Verdict.FAIL and any("output 1" in v.expr for v in r.violations)


@pytest.mark.slow
def test_guard_on_a_dim_modulo_a_choice(tmp_path):
    r = _verify(tmp_path, "branches_on_block_multiple")
    assert r.verdict == Verdict.FAIL
    v = next(v for v in r.violations if v.code == "SC001")
    assert v.dims == ("N",) and v.counterexample["N"] % 16 != 0
    # both branches give the padded shape, so the fix is to drop the branch
    assert "path-independent" in v.fix


def test_a_path_no_input_reaches_is_reported_but_does_not_fail(tmp_path):
    c = tmp_path / "pad.toml"
    c.write_text(CONTRACT + '''
[[paths]]
id = "never"
when = "N > 8 and N < 5"
outputs = ["(N, D)", "N"]
''')
    k = tmp_path / "kernels.py"
    k.write_text(KERNELS)
    r = verify_contract(load_contract(c), function_kernel(f"{k}", "with_ceil"), Options())
    assert r.verdict == Verdict.PASS
    (v,) = [v for v in r.violations if v.code == "SC006"]
    assert v.path == "never" and "N > 8" in v.expr
    assert all(dict((p.path, p.status) for p in case.paths)["never"] == "unreachable" for case in r.cases)
    # the symbolic outputs, as the kernel computed them (ceil translated exactly)
    assert [c.outputs for c in r.cases] == [(("(16 * -(-N // 16), D)", "N"),), (("(32 * -(-N // 32), D)", "N"),)]


@pytest.mark.slow
def test_truncated_exploration_without_a_finding_is_inconclusive(tmp_path):
    """Guards on a static dim are explored, not reported; if the bound stops exploration, nothing is proved
    beyond it, so the verdict is inconclusive, never pass."""
    c = tmp_path / "pad.toml"
    c.write_text(CONTRACT.replace("D = { min = 1, max = 4096 }", "D = { min = 1, max = 4096, dynamic = false }"))
    k = tmp_path / "kernels.py"
    k.write_text(KERNELS + '''

def branches_on_static_dim(x, block):
    for i in range(1, 6):
        if x.size(1) == i:
            break
    return x.new_empty(((x.size(0) + block - 1) // block * block, x.size(1))), x.size(0)
''')
    kernel = function_kernel(f"{k}", "branches_on_static_dim")
    assert verify_contract(load_contract(c), kernel, Options()).verdict == Verdict.PASS
    r = verify_contract(load_contract(c), kernel, Options(max_traces=3))
    assert r.verdict == Verdict.INCONCLUSIVE and r.exit_code == 3
    v = next(v for v in r.violations if v.code == "SC005")
    assert "trace bound" in v.message and v.counterexample["D"] >= 2


SIZE_CONTRACT = """schema = 1
op = "aten::new_empty"
[dims]
B = { min = 1 }
L = { min = 1, max = 65536 }
[choices]
dtype = ["float32", "bfloat16"]
[[args]]
name = "self"
kind = "tensor"
dtype = "dtype"
shape = "(B, L)"
[[args]]
name = "size"
kind = "ints"
value = "(B, 2 * L + 1)"
[[paths]]
id = "only"
when = "true"
outputs = ["(B, 2 * L + 1)"]
"""

SIZE_KERNELS = """
def passes_size_on(self, size):
    return self.new_empty(size)

def caps_the_size(self, size):
    if size[1] > 1024:
        return self.new_empty([size[0], 1024])
    return self.new_empty(size)

def needs_the_int(self, size):
    return self.new_empty([size[0], int(size[1])])
"""


@pytest.mark.slow
def test_int_list_arguments_built_from_dims_are_symbolic(tmp_path):
    """An ints argument given by dims (a SymInt[] such as new_empty's size) reaches the kernel as SymInts:
    the installed op passes, a branch on it is a guard on L, int() on it a specialisation."""
    from shapecheck.kernel.load import installed_kernel
    from shapecheck.runtime.fuzz import FuzzOptions, prepare, run

    (tmp_path / "c.toml").write_text(SIZE_CONTRACT)
    (tmp_path / "k.py").write_text(SIZE_KERNELS)
    c = load_contract(tmp_path / "c.toml")
    assert all(a.expr is not None for case in c.cases() for a in case.args if a.name == "size")
    assert verify_contract(c, installed_kernel(c.op)).verdict == Verdict.PASS
    assert verify_contract(c, function_kernel(f"{tmp_path / 'k.py'}", "passes_size_on")).verdict == Verdict.PASS
    capped = verify_contract(c, function_kernel(f"{tmp_path / 'k.py'}", "caps_the_size"))
    guard = next(v for v in capped.violations if v.code == "SC001")
    assert capped.verdict == Verdict.FAIL and guard.dims == ("L",)
    assert 2 * guard.counterexample["L"] + 1 <= 1024 < 2 * guard.witness["L"] + 1
    assert any(v.code == "SC002" for v in capped.violations)
    spec = verify_contract(c, function_kernel(f"{tmp_path / 'k.py'}", "needs_the_int"))
    assert spec.verdict == Verdict.FAIL and {v.code for v in spec.violations} == {"SC003"}
    fuzzed = run(prepare(c, installed_kernel(c.op), FuzzOptions(examples=10, seed=1)))
    assert fuzzed.examples >= 10 and fuzzed.verdict == "pass" and not fuzzed.failures


def test_only_int_arguments_may_use_dims(tmp_path):
    import pytest

    from shapecheck.errors import ContractError

    for kind, value, key in (("float", '"L * 1"', "args.size.value"), ("ints", '"L"', "args.size.value")):
        text = SIZE_CONTRACT.replace('kind = "ints"\nvalue = "(B, 2 * L + 1)"', f'kind = "{kind}"\nvalue = {value}')
        (tmp_path / "c.toml").write_text(text)
        with pytest.raises(ContractError) as err:
            load_contract(tmp_path / "c.toml")
        assert f"c.toml: [{key}]" in str(err.value)


@pytest.mark.slow
def test_confirm_export_says_when_export_never_reaches_the_candidate(tmp_path):
    """new_empty's fake implementation is torch's own: exporting it says nothing about a --meta candidate,
    and the report must not count that as agreement."""
    (tmp_path / "c.toml").write_text(SIZE_CONTRACT)
    (tmp_path / "k.py").write_text(SIZE_KERNELS)
    c = load_contract(tmp_path / "c.toml")
    r = verify_contract(c, function_kernel(f"{tmp_path / 'k.py'}", "caps_the_size"),
                        Options(confirm_export=True, cases=("float32",)))
    ex = r.cases[0].export
    assert ex is not None and not ex.ran and ex.agrees is None and "never called the candidate" in ex.message


ROWS_CONTRACT = """schema = 1
op = "mylib::rows"
[dims]
N = { min = 1, max = MAX }
D = { min = 1 }
[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(N, D)"
[[paths]]
id = "only"
when = "true"
outputs = ["(N, D)"]
"""

ROWS_KERNELS = """import torch

def via_sqrt(x):
    return x.new_empty((torch.sym_int(torch.sym_sqrt(x.size(0) * x.size(0))), x.size(1)))

def via_sqrt_off(x):
    return x.new_empty((torch.sym_int(torch.sym_sqrt(x.size(0) * x.size(0) + 7)), x.size(1)))
"""


@pytest.mark.slow
def test_untranslated_output_sizes_are_proved_by_exhaustion_when_their_dims_take_few_values(tmp_path):
    """int(sqrt(N * N)) is outside the contract language. With N in [1, 64] it is checked at every N (and D
    by z3): a proof. With N unbounded it stays inconclusive; a wrong one is refuted either way."""
    (tmp_path / "k.py").write_text(ROWS_KERNELS)
    verdicts = {}
    for top in (64, 2**31 - 1):
        (tmp_path / "c.toml").write_text(ROWS_CONTRACT.replace("MAX", str(top)))
        c = load_contract(tmp_path / "c.toml")
        for fn in ("via_sqrt", "via_sqrt_off"):
            r = verify_contract(c, function_kernel(f"{tmp_path / 'k.py'}", f"{fn}"))
            verdicts[top, fn] = r.verdict
            if fn == "via_sqrt_off":
                v = next(v for v in r.violations if v.code == "SC002")
                n = v.counterexample["N"]
                assert int((n * n + 7) ** 0.5) != n
    assert verdicts[64, "via_sqrt"] == Verdict.PASS
    assert verdicts[2**31 - 1, "via_sqrt"] == Verdict.INCONCLUSIVE
    assert verdicts[64, "via_sqrt_off"] == verdicts[2**31 - 1, "via_sqrt_off"] == Verdict.FAIL
