"""Output tables in contracts: dtype (SC017), layout (SC018), None outputs (SC019) and data-dependent sizes
(SC020). Each rule has a test kernel that breaks it and a fixed twin that passes; the layouts are checked
against torch's own strides and ``is_contiguous``."""

import importlib
import itertools

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.contract.load import load_contract
from shapecheck.contract.outputs import dense_strides
from shapecheck.errors import ContractError
from shapecheck.findings import Verdict
from shapecheck.logic import expr as E
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import KERNELS

ATTN = KERNELS / "output_kernels.toml"
OP = "sc_outputs::attn"


def verify(fn, contract=ATTN, op=OP, **kw):
    return verify_op(op, contract=str(contract), meta=f"{KERNELS / 'output_kernels.py'}:{fn}",
                     options=Options(jobs=1, **kw))


def codes(report):
    return {v.code for v in report.violations if not v.suppressed}


@pytest.mark.slow
def test_the_fixed_kernel_passes_every_output_table():
    r = verify("fixed")
    assert r.verdict == Verdict.PASS and not r.violations
    assert {p.status for c in r.cases for p in c.paths} == {"proved"}


@pytest.mark.slow
def test_sc018_a_contiguous_fake_for_a_transposed_output_with_batch_and_heads_at_least_2():
    r = verify("contiguous_out")
    assert r.verdict == Verdict.FAIL and codes(r) == {"SC018"}
    v = r.violations[0]
    assert v.path == "any" and "dim order (0, 2, 1, 3)" in v.expr
    cx = v.counterexample
    assert cx["B"] >= 2 and cx["H"] >= 2 and cx["L"] >= 2
    # the strides in the message are torch's at the counterexample
    b, h, seq, e = cx["B"], cx["H"], cx["L"], cx["E"]
    fake = torch.empty((b, h, seq, e)).stride()
    real = torch.empty((b, seq, h, e)).transpose(1, 2).stride()
    assert fake != real and f"has strides {fake}" in v.message and f"gives {real}" in v.message


@pytest.mark.slow
def test_sc017_a_wrong_dtype_for_one_input_dtype():
    r = verify("lse_always_float32")
    assert codes(r) == {"SC017"}
    (v,) = r.violations
    assert v.case == "dtype=float64" and v.expr == "output 1 dtype float32, contract float64"
    assert [c.verdict for c in r.cases] == [Verdict.PASS, Verdict.PASS, Verdict.FAIL]


@pytest.mark.slow
def test_sc019_a_tensor_where_the_runtime_returns_none():
    r = verify("debug_tensor")
    assert codes(r) == {"SC019"}
    assert r.violations[0].expr == "output 2: a tensor (0,), runtime None"


@pytest.mark.slow
def test_sc019_none_where_the_runtime_returns_a_tensor(tmp_path):
    text = ATTN.read_text().replace('  "none",\n]', '  { shape = "(0,)", dtype = "dtype" },\n]')
    assert text != ATTN.read_text()
    (tmp_path / "c.toml").write_text(text)
    r = verify("fixed", contract=tmp_path / "c.toml")
    assert codes(r) == {"SC019"} and r.violations[0].expr == "output 2: None, runtime a tensor"


@pytest.mark.slow
def test_a_plain_shape_where_the_kernel_returns_none_is_sc019(tmp_path):
    text = ATTN.read_text().replace('  "none",\n]', '  "(0,)",\n]')
    (tmp_path / "c.toml").write_text(text)
    assert codes(verify("fixed", contract=tmp_path / "c.toml")) == {"SC019"}


# ---------------------------------------------------------------------------------------------------------
# Layouts: torch's rules for sizes 0 and 1


ROW = '''schema = 1
op = "sc_outputs::row"

[dims]
B = {{ min = 1, max = 64 }}
E = {{ min = 1, max = 64 }}

[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(B, E)"

[[paths]]
id = "any"
when = "true"
outputs = [{{ shape = "(B, 1, E)", {layout} }}]
'''

KERNEL = '''
def row(x):
    # (B, E, 1) transposed: a size-1 middle dim with stride 1 instead of E
    return x.new_empty((x.shape[0], x.shape[1], 1)).transpose(1, 2)
'''


@pytest.mark.parametrize("layout, verdict", [
    ('layout = "contiguous"', Verdict.PASS),  # the default comparison: significant strides
    ('layout = "contiguous", layout_match = "dense"', Verdict.PASS),  # its older name
    ('layout = "contiguous", layout_match = "exact"', Verdict.FAIL),
    ('layout = "(0, 2, 1)", layout_match = "exact"', Verdict.PASS),
    ('strides = "(E, 1, 1)", layout_match = "exact"', Verdict.PASS),
    ('strides = "(E, E, 1)", layout_match = "exact"', Verdict.FAIL),
    ('strides = "(E, 1, 2)"', Verdict.FAIL),  # dim 2 has size E: its stride counts
])
def test_significant_and_exact_comparisons_follow_torch(tmp_path, layout, verdict):
    (tmp_path / "row.toml").write_text(ROW.format(layout=layout))
    (tmp_path / "row.py").write_text(KERNEL)
    r = verify_op("sc_outputs::row", contract=str(tmp_path / "row.toml"), meta=f"{tmp_path / 'row.py'}:row",
                  options=Options(jobs=1))
    assert r.verdict == verdict, [v.message for v in r.violations]
    if verdict == Verdict.FAIL:
        assert codes(r) == {"SC018"} and r.violations[0].counterexample["E"] >= 2
        # only the size-1 dim's stride differs under exact: the fix says so, and says nothing of transposes
        size1 = layout.startswith('layout = "contiguous"') or "(E, E, 1)" in layout
        assert ("differ only where dim 1 has size 1" in r.violations[0].fix) == size1
        assert ("transpose" in r.violations[0].fix) == (not size1)
    # torch agrees: the tensor is contiguous by is_contiguous (size-1 strides do not count), not stride-exact
    t = torch.empty((3, 5, 1)).transpose(1, 2)
    assert t.is_contiguous() and t.stride() != torch.empty((3, 1, 5)).stride()


@pytest.mark.parametrize("layout, verdict", [
    ('layout = "contiguous"', "pass"),  # the default comparison: significant strides
    ('layout = "contiguous", layout_match = "exact"', "fail"),
])
@pytest.mark.slow
def test_fuzz_compares_an_output_table_as_verify_does(tmp_path, layout, verdict):
    """fuzz's check of an output table (no runtime reference for a --meta kernel of a new op): a size-1 dim's
    stride counts only under ``exact`` (it counted under the default too, a false SC018)."""
    from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op

    (tmp_path / "row.toml").write_text(ROW.format(layout=layout))
    (tmp_path / "row.py").write_text(KERNEL)
    r = fuzz_op("sc_outputs::row", contract=str(tmp_path / "row.toml"), meta=f"{tmp_path / 'row.py'}:row",
                options=FuzzOptions(examples=20, seed=0, verify_examples=False))
    assert r.verdict == verdict, r.failures
    if verdict == "fail":
        assert r.failures[0].code == "SC018" and r.failures[0].dims["E"] >= 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=4), st.data())
def test_dense_strides_are_torch_strides_of_a_permuted_allocation(sizes, data):
    """A dim order's strides, as the contract computes them, are the strides torch gives
    empty(shape in that order).permute(back), sizes 0 and 1 included."""
    order = data.draw(st.permutations(range(len(sizes))))
    names = [f"d{i}" for i in range(len(sizes))]
    want = dense_strides(tuple(E.Var(n) for n in names), tuple(order), {})
    point = dict(zip(names, sizes))
    back = [order.index(i) for i in range(len(sizes))]
    real = torch.empty([sizes[d] for d in order]).permute(back)
    assert tuple(real.shape) == tuple(sizes)
    assert tuple(E.evaluate(s, point) for s in want) == real.stride()


# ---------------------------------------------------------------------------------------------------------
# Data-dependent sizes (custom ops through the dispatcher, as --import registers them)


@pytest.fixture(scope="module")
def filter_ops():
    return importlib.import_module("tests.kernels.filter_ops")


def test_sc020_a_fake_whose_size_excludes_0_and_1(filter_ops):
    r = verify_op("sc_filter::keep_positive", contract=str(KERNELS / "filter_ops.toml"), options=Options(jobs=1))
    assert r.verdict == Verdict.FAIL and codes(r) == {"SC020"}
    (v,) = r.violations
    assert v.counterexample["n"] in (0, 1) and v.counterexample["N"] >= v.counterexample["n"]
    assert "[2, inf]" in v.message and v.location.file.endswith("filter_ops.py")
    # the runtime really returns that size: 0 rows kept
    x = torch.full((v.counterexample["N"], v.counterexample["D"]), -1.0)
    assert filter_ops.keep_positive(x).shape[0] == v.counterexample["n"] == 0


def test_sc020_the_fixed_twin_passes(filter_ops):
    r = verify_op("sc_filter::keep_positive_fixed", contract=str(KERNELS / "filter_ops_fixed.toml"),
                  options=Options(jobs=1))
    assert r.verdict == Verdict.PASS and not r.violations and not r.cases[0].notes


def test_a_range_wider_than_the_runtimes_is_a_note_not_a_failure(filter_ops, tmp_path):
    text = (KERNELS / "filter_ops_fixed.toml").read_text().replace('max = "N"', 'max = "N // 2"')
    (tmp_path / "half.toml").write_text(text)
    r = verify_op("sc_filter::keep_positive_fixed", contract=str(tmp_path / "half.toml"), options=Options(jobs=1))
    assert r.verdict == Verdict.PASS
    assert any("wider than the runtime's [0, N // 2]" in n for n in r.cases[0].notes)


def test_a_data_dependent_size_the_contract_does_not_name_is_inconclusive(filter_ops, tmp_path):
    text = (KERNELS / "filter_ops_fixed.toml").read_text()
    plain = text.replace('{ shape = "(n, D)", sizes = { n = { min = "0", max = "N" } }, dtype = "float32", '
                         'layout = "contiguous" }', '{ shape = "(N, D)", layout = "contiguous" }')
    assert plain != text
    (tmp_path / "plain.toml").write_text(plain)
    r = verify_op("sc_filter::keep_positive_fixed", contract=str(tmp_path / "plain.toml"), options=Options(jobs=1))
    assert r.verdict == Verdict.INCONCLUSIVE and codes(r) == {"SC005"}
    assert "data-dependent size" in r.violations[0].message


# ---------------------------------------------------------------------------------------------------------
# Loading


@pytest.mark.parametrize("entry, key, message", [
    ('{ shape = "(B, H, L, E)", layout = "(0, 1, 1, 3)" }', "layout", "a dim order"),
    ('{ shape = "(B, H, L, E)", layout = "like dtype" }', "layout", "'like' needs a tensor argument"),
    ('{ shape = "(B, H, L, E)", layout = "contiguous", strides = "(1, 1, 1, 1)" }', "outputs[0]", "not both"),
    ('{ shape = "(B, H, L, E)", dtype = "float99" }', "dtype", "unknown dtype 'float99': did you mean"),
    ('{ shape = "(B, H, L, E)", dtype = "L" }', "dtype", "expected a dtype fixed by the choices"),
    ('{ shape = "(B, H, L, E)", layout_match = "loose" }', "layout_match", "expected one of significant, exact, dense"),
    ('{ shape = "(B, H, L, E)", sizes = { n = { min = "0", max = "L" } } }', "sizes.n", "not used in the shape"),
    ('{ shape = "(B, H, L, E)", strides = "(1, 1)" }', "strides", "expected 4 strides"),
    ('{ shape = "(B, H, L, E)", colour = "red" }', "colour", "unknown key"),
])
def test_a_malformed_output_table_names_its_key(tmp_path, entry, key, message):
    text = ATTN.read_text().replace('{ shape = "(B, H, L, E)", dtype = "dtype", layout = "(0, 2, 1, 3)" }', entry)
    (tmp_path / "bad.toml").write_text(text)
    with pytest.raises(ContractError) as err:
        load_contract(tmp_path / "bad.toml")
    assert "paths.any.outputs[0]" in str(err.value) and key in str(err.value) and message in str(err.value)


def test_output_tables_bind_per_case():
    c = load_contract(ATTN)
    specs = {case.id: case.paths[0].specs for case in c.cases()}
    assert [specs[f"dtype={d}"][1].dtype for d in ("float16", "float32", "float64")] == ["float32", "float32",
                                                                                     "float64"]
    out = specs["dtype=float16"][0]
    assert out.dtype == "float16" and out.layout == "dim order (0, 2, 1, 3)"
    assert [E.evaluate(s, dict(B=2, H=3, L=5, E=7)) for s in out.strides] == [105, 7, 21, 1]
    assert specs["dtype=float16"][2].absent and c.cases().__next__().paths[0].outputs[2] is None
    assert list(itertools.islice(c.cases(), 1))[0].paths[0].outputs[0] == E.parse("(B, H, L, E)")


# ---------------------------------------------------------------------------------------------------------
# The shipped CPU flash contract against the real CPU kernel (the runtime this machine has)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("sizes", [dict(B=1, H=1, L=1, S=1, E=8), dict(B=2, H=3, L=5, S=7, E=8),
                                   dict(B=3, H=2, L=1, S=4, E=16)])
def test_cpu_flash_contract_states_the_real_kernels_dtypes_and_strides(dtype, sizes):
    from shapecheck.contract.model import bind_case
    from tests.conftest import ROOT

    c = load_contract(ROOT / "contracts" / "aten" / "_scaled_dot_product_flash_attention_for_cpu.toml")
    case = bind_case(c, dict(dtype=dtype, is_causal=False, mask="none"))
    point = dict(sizes, Hk=sizes["H"], Ev=sizes["E"])
    t = getattr(torch, dtype)
    q = torch.randn(point["B"], point["H"], point["L"], point["E"]).to(t)
    k = torch.randn(point["B"], point["H"], point["S"], point["E"]).to(t)
    outs = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, k.clone())
    for spec, real in zip(case.paths[0].specs, outs):
        assert tuple(real.shape) == E.evaluate(spec.shape, point)
        assert str(real.dtype) == f"torch.{spec.dtype}"
        assert real.stride() == tuple(E.evaluate(s, point) for s in spec.strides)


IM2COL = '''schema = 1
op = "sc_outputs::cols"

[dims]
C = {{ min = 1, max = 64 }}

[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(C,)"

[[paths]]
id = "any"
when = "true"
outputs = [{{ shape = "(1, C, 1)", layout = "contiguous"{match} }}]
'''


@pytest.mark.parametrize("match, verdict", [("", Verdict.PASS), (', layout_match = "exact"', Verdict.FAIL)])
def test_a_stride_that_differs_only_at_a_size_1_dim_is_no_transpose(tmp_path, match, verdict):
    # an im2col-like fake: shape (1, C, 1) with strides (C, 1, 2) where torch.empty gives (C, 1, 1)
    (tmp_path / "c.toml").write_text(IM2COL.format(match=match))
    (tmp_path / "c.py").write_text("def cols(x):\n    return x.new_empty_strided((1, x.shape[0], 1), (x.shape[0], 1, 2))\n")
    r = verify_op("sc_outputs::cols", contract=str(tmp_path / "c.toml"), meta=f"{tmp_path / 'c.py'}:cols",
                  options=Options(jobs=1))
    assert r.verdict == verdict, [v.message for v in r.violations]
    if verdict == Verdict.FAIL:
        (v,) = r.violations
        assert v.code == "SC018" and "differ only where dim 2 has size 1" in v.fix and "transpose" not in v.fix
    # Inductor's assert_size_stride compares the same way: a size-1 dim's stride is never read
    t = torch.empty_strided((1, 4, 1), (4, 1, 2))
    torch._C._dynamo.guards.assert_size_stride(t, (1, 4, 1), (4, 1, 1))
    with pytest.raises(AssertionError):
        torch._C._dynamo.guards.assert_size_stride(torch.empty_strided((1, 4, 2), (8, 1, 4)), (1, 4, 2), (8, 2, 1))


@pytest.mark.slow
def test_every_output_table_key_the_docs_name_takes_alternatives(tmp_path):
    """docs/contracts.md: shape, dtype, layout and strides may each be a list of {when, value} alternatives
    (shape was refused: 'expected a string, found an array')."""
    text = ATTN.read_text().replace(
        '{ shape = "(B, H, L, E)", dtype = "dtype", layout = "(0, 2, 1, 3)" }',
        '{ shape = [{ when = "dtype == \'float64\'", value = "(B, H, L, E)" }, { value = "(B, H, L, E)" }], '
        'dtype = [{ when = "dtype == \'float16\'", value = "float16" }, { value = "dtype" }], '
        'layout = [{ when = "dtype == \'float64\'", value = "(0, 2, 1, 3)" }, { value = "(0, 2, 1, 3)" }] }').replace(
        '{ shape = "(B, H, L)", dtype = "\'float64\' if dtype == \'float64\' else \'float32\'", layout = "contiguous" }',
        '{ shape = "(B, H, L)", dtype = "\'float64\' if dtype == \'float64\' else \'float32\'", '
        'strides = [{ when = "dtype == \'float16\'", value = "(H * L, L, 1)" }, { value = "(H * L, L, 1)" }] }')
    assert text.count("when =") == ATTN.read_text().count("when =") + 4
    (tmp_path / "alt.toml").write_text(text)
    r = verify("fixed", contract=tmp_path / "alt.toml")
    assert r.verdict == Verdict.PASS and {p.status for c in r.cases for p in c.paths} == {"proved"}
    r = verify("contiguous_out", contract=tmp_path / "alt.toml")
    assert codes(r) == {"SC018"}


# ---------------------------------------------------------------------------------------------------------
# strides that are the same products of the output's sizes are equal without z3, whatever the sizes' form


def test_strides_as_products_of_the_outputs_sizes_compare_factor_by_factor():
    from shapecheck.logic import expr as E
    from shapecheck.prove.outputs import _product

    ho = "min((H + 1) // 2 + 1, (H + 2) // 2)"  # a let such as pooling's Ho, the same on both sides
    sizes = tuple(E.parse(x) for x in ("N", "C", ho, "W // 2"))
    torch_cl = E.parse(f"C * max(1, {ho}) * max(1, W // 2)")  # torch's channels_last stride 0 (max: sizes 0)
    contract_cl = E.parse(f"{ho} * (W // 2) * C")
    assert _product(torch_cl, {}) is None  # not a product of names: z3 would be asked
    assert _product(torch_cl, {}, sizes, True) == _product(contract_cl, {}, sizes, True) == (1, ("#1", "#2", "#3"))
    # exact comparison: max(size, 1) differs from the size where it is 0, so the shortcut does not apply
    assert _product(torch_cl, {}, sizes, False) != _product(contract_cl, {}, sizes, False)
    # a different product stays different (a channels_last stride 1 against a contiguous one)
    assert _product(E.Const(1), {}, sizes, True) != _product(E.parse(f"{ho} * (W // 2)"), {}, sizes, True)


def _min_0(tmp_path, op):
    text = (KERNELS / "filter_ops.toml").read_text().replace("N = { min = 1", "N = { min = 0")
    path = tmp_path / f"{op}.toml"
    path.write_text(text.replace('op = "sc_filter::keep_positive"', f'op = "sc_filter::{op}"'))
    return str(path)


def test_a_plain_size_where_the_runtimes_range_is_that_one_value_passes(filter_ops, tmp_path):
    """Hunt 42: nonzero's fake returns a plain size of 0 for an empty input, where the runtime's n in [0, A * B] is
    0 too; the transposed input's trace reached it, and SC020 said "not a data-dependent size" (exit 1)."""
    r = verify_op("aten::nonzero", contract=str(KERNELS / "nonzero_transposed.toml"), options=Options(jobs=1))
    assert r.verdict == Verdict.PASS and not r.violations, r.violations
    r = verify_op("sc_filter::keep_positive_empty", contract=_min_0(tmp_path, "keep_positive_empty"),
                  options=Options(jobs=1))
    assert r.verdict == Verdict.PASS and not r.violations, r.violations


def test_a_plain_size_on_a_fallbacks_other_side_where_the_runtime_varies_is_sc020_at_its_far_end(filter_ops, tmp_path):
    """The fake says no row is kept for N <= 1 (a ``guard_or_false`` the trace answered False): right at N = 0, wrong
    at N = 1, the side's far end, where the runtime keeps 0 or 1 rows."""
    from shapecheck.rules import PLAIN_SIZE_FIX

    r = verify_op("sc_filter::keep_positive_one_row", contract=_min_0(tmp_path, "keep_positive_one_row"),
                  options=Options(jobs=1))
    assert r.verdict == Verdict.FAIL and codes(r) == {"SC020"}
    (v,) = r.violations
    assert v.counterexample["N"] == 1 and v.location.line == _line(filter_ops, "if guard_or_false(x.shape[0] <= 1):")
    assert v.fix == PLAIN_SIZE_FIX
    x = torch.ones(1, v.counterexample["D"])
    assert filter_ops.keep_positive_one_row(x).shape[0] == 1  # the runtime keeps the row
    with torch._subclasses.fake_tensor.FakeTensorMode():
        assert filter_ops.keep_positive_one_row(torch.ones(1, v.counterexample["D"])).shape[0] == 0  # the fake says 0


def _line(module, text):
    import inspect

    lines = inspect.getsource(module).splitlines()
    return next(i for i, t in enumerate(lines, 1) if t.strip() == text)


@pytest.mark.slow  # over 0.5 s on an idle core
def test_sc018_says_a_layout_written_as_strides_once():
    """hunt 42: "contract strides (1, A) (1, A)"."""
    r = verify_op("aten::diagonal_scatter", contract=str(KERNELS / "diagonal_scatter_strides.toml"),
                  meta=f"{KERNELS / 'diagonal_scatter_kernels.py'}:dense_output", options=Options(jobs=1))
    texts = {v.expr for v in r.violations if v.code.value == "SC018"}
    assert "output 0 strides (B, 1), contract strides (1, A)" in texts, texts


@pytest.mark.slow  # strict exports
def test_confirm_export_gives_an_input_size_written_as_a_formula_2_or_more():
    """hunt 42: diagonal_scatter's src of length min(A, B - off) was 1 at export's example, so export specialised it
    and the program took a src of length 1 alone, while --confirm-export said it agreed."""
    r = verify_op("aten::diagonal_scatter", contract=str(KERNELS / "diagonal_scatter_strides.toml"),
                  options=Options(jobs=1, confirm_export=True, cases=("dtype=float32,off=2,dd=01,lay=contig",
                                                                       "dtype=float32,off=-1,dd=10,lay=contig")))
    for case in r.cases:
        x = case.export
        assert x.ran and x.succeeded and x.agrees, (case.case, x.message)
        a, b = x.example["A"], x.example["B"]
        length = min(a, b - 2) if "off=2" in case.case else min(b - 1, a)  # the contract's L (dd=01, dd=10)
        assert length >= 2, (case.case, x.example)


@pytest.mark.slow  # strict exports
def test_the_point_the_exported_program_refuses_names_the_cases_dims_only():
    """hunt 42: a rank-3 case's note named N=0, a dim only the rank-4 and rank-5 cases have."""
    r = verify_op("aten::pixel_unshuffle", contract=str(KERNELS / "pixel_unshuffle_ranks.toml"),
                  options=Options(jobs=1, confirm_export=True, cases=("dtype=float32,r=2,rank=3",)))
    [case] = r.cases
    x = case.export
    assert x.succeeded and x.refuses is not None and set(x.refuses) == {"C", "H", "W"}, x.refuses
