"""Input layouts in ``[[args]]`` (``layout``, ``strides``, ``expand``, ``storage_offset``): loaded and bound per
case, traced with symbolic strides (what the kernel reads of an input's strides is a function of the dims),
and made the same way at concrete sizes for fuzz, ref check (cpu and cuda), replay and export. Four layout
bugs of the public record, each with a fixed twin (tests/kernels/layout_kernels.py): the buggy one fails in
the case whose choice names the layout, the fixed one passes."""

import textwrap

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.contract.load import load_contract
from shapecheck.errors import ContractError
from shapecheck.findings import Verdict
from shapecheck.logic import expr as E
from shapecheck.prove.verify import Options, verify_op
from shapecheck.trace.arguments import layout_at, make_arguments
from tests.conftest import KERNELS

LAYOUT_KERNELS = KERNELS / "layout_kernels.py"


def verify(op, contract, fn, **kw):
    return verify_op(op, contract=str(KERNELS / contract), meta=f"{LAYOUT_KERNELS}:{fn}", options=Options(jobs=1, **kw))


# ---------------------------------------------------------------------------------------------------------
# Four layout bugs, each with its fixed twin


TWINS = [
    # (op, contract, buggy, fixed, rule of the buggy one, the case that names the layout)
    ("sc_layouts::pool2x2", "layout_pool.toml", "pool_contiguous", "pool_fixed", "SC018",
     "memory_format=channels_last"),
    ("sc_layouts::rows", "layout_transposed.toml", "rows_empty_like", "rows_fixed", "SC018", "transposed=true"),
    # its torch._check(scale_a.is_contiguous()) fails for column-major scales at every size from 2, where strict
    # export's run fails too: SC007 there (the contiguity test is torch's C++ code, judged as export judges it)
    ("sc_layouts::scaled_mm", "layout_scales.toml", "scaled_mm_contiguous_scales", "scaled_mm_fixed", "SC007",
     "scale_col_major=true"),
    ("sc_layouts::add_bias", "layout_expanded.toml", "add_bias_bias_strides", "add_bias_fixed", "SC018",
     "broadcast_bias=true"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("op", "contract", "buggy", "fixed", "rule", "case"), TWINS, ids=[t[2] for t in TWINS])
def test_a_layout_bug_fails_in_the_case_of_its_layout_and_its_fixed_twin_passes(op, contract, buggy, fixed, rule,
                                                                                 case):
    bad = verify(op, contract, buggy)
    assert bad.verdict == Verdict.FAIL
    assert {v.case for v in bad.violations} == {case}, [(v.code, v.case) for v in bad.violations]
    v = next(v for v in bad.violations if v.code == rule)
    # a real counterexample: none of the dims the finding reads is 1, where layouts coincide (a raise names none:
    # the scales' dims)
    dims = v.dims or ("M", "G")
    assert all(v.counterexample[d] >= 2 for d in dims), (dims, v.counterexample)
    good = verify(op, contract, fixed)
    assert good.verdict == Verdict.PASS and not good.violations
    assert {p.status for c in good.cases for p in c.paths} == {"proved"}


@pytest.mark.slow
def test_the_buggy_strides_are_torchs_at_the_counterexample():
    r = verify("sc_layouts::pool2x2", "layout_pool.toml", "pool_contiguous")
    (v,) = r.violations
    n, c, h, w = (v.counterexample[k] for k in "NCHW")
    real = torch.empty((n, c, h // 2, w // 2), memory_format=torch.channels_last).stride()
    fake = torch.empty((n, c, h // 2, w // 2)).stride()
    assert f"has strides {fake}" in v.message and f"gives {real}" in v.message and "like x (channels_last)" in v.message


# ---------------------------------------------------------------------------------------------------------
# The traced input's strides are functions of the dims


BASE = """
schema = 1
op = "sc_layouts::probe"

[dims]
M = {{ min = 1, max = 1024 }}
K = {{ min = 1, max = 1024 }}
LD = {{ min = 1, max = 4096 }}
O = {{ min = 0, max = 64 }}

[domain]
requires = ["LD >= K"]

[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "(M, K)"
{layout}

[[paths]]
id = "any"
when = "true"
outputs = [{outputs}]
"""


def probe(tmp_path, layout, outputs, kernel):
    (tmp_path / "c.toml").write_text(BASE.format(layout=layout, outputs=outputs))
    (tmp_path / "k.py").write_text(textwrap.dedent(kernel))
    return verify_op("sc_layouts::probe", contract=str(tmp_path / "c.toml"), meta=f"{tmp_path / 'k.py'}:kernel",
                     options=Options(jobs=1))


@pytest.mark.parametrize(("layout", "outputs", "verdict"), [
    ('strides = "(LD, 1)"', '"(LD, 1)"', Verdict.PASS),       # a padded leading dimension, read by the kernel
    ('strides = "(LD, 1)"', '"(K, 1)"', Verdict.FAIL),
    ('layout = "(1, 0)"', '"(1, M)"', Verdict.PASS),          # column-major
    ('', '"(K, 1)"', Verdict.PASS),                           # contiguous, the default
    ('storage_offset = "O"\nstrides = "(LD, 1)"', '"(LD, 1)"', Verdict.PASS),
    # broadcast as torch.Tensor.expand makes it: stride 0 where the size grows, the layout's stride where it stays 1
    ('expand = [0]', '"(K if M == 1 else 0, 1)"', Verdict.PASS),
    ('expand = [0]', '"(0, 1)"', Verdict.FAIL),
])
def test_a_kernel_that_reads_its_inputs_strides_sees_them_in_the_dims(tmp_path, layout, outputs, verdict):
    r = probe(tmp_path, layout, outputs, """
        def kernel(x):
            return x.new_empty(x.stride())
    """)
    assert r.verdict == verdict, [v.message for v in r.violations]
    if verdict == Verdict.FAIL:
        assert {v.code for v in r.violations} == {"SC002"}


def test_the_storage_offset_is_symbolic(tmp_path):
    r = probe(tmp_path, 'storage_offset = "O + M"', '"(O + M,)"', """
        def kernel(x):
            return x.new_empty((x.storage_offset(),))
    """)
    assert r.verdict == Verdict.PASS, [v.message for v in r.violations]


NAMED = [("channels_last", 4, torch.channels_last), ("channels_last_3d", 5, torch.channels_last_3d),
         ("contiguous", 3, torch.contiguous_format)]


def _layout_contract(dims, name, extra=""):
    return f"""
schema = 1
op = "x::y"
[dims]
{chr(10).join(f'{d} = {{ min = 0, max = 8 }}' for d in dims)}
[[args]]
name = "x"
kind = "tensor"
dtype = "float32"
shape = "({', '.join(dims)},)"
layout = "{name}"
{extra}
[[paths]]
id = "any"
when = "true"
outputs = ["unspecified"]
"""


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(NAMED), st.data())
def test_a_named_layout_has_torchs_strides_at_every_size(named, data):
    name, rank, fmt = named
    sizes = data.draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank))
    dims = [f"D{i}" for i in range(rank)]
    case = next(iter(_load(_layout_contract(dims, name)).cases()))
    point = dict(zip(dims, sizes))
    want = torch.empty(sizes, memory_format=fmt).stride()
    strides, offset = layout_at(case.arg("x"), point)
    assert (strides or torch.empty(sizes).stride()) == want and offset == 0


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NAMED), st.data())
def test_an_expanded_layout_has_the_strides_torchs_expand_gives_at_every_size(named, data):
    """``expand``: the layout's tensor with size 1 at the broadcast dims, expanded as ``torch.Tensor.expand``
    does: stride 0 where the size grows (0 or 2 and more), the layout's own stride where it stays 1."""
    name, rank, fmt = named
    sizes = data.draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank))
    expand = sorted(data.draw(st.sets(st.integers(0, rank - 1), min_size=1)))
    dims = [f"D{i}" for i in range(rank)]
    case = next(iter(_load(_layout_contract(dims, name, f"expand = {expand}")).cases()))
    base = [1 if i in expand else n for i, n in enumerate(sizes)]
    want = torch.empty(base, memory_format=fmt).expand(sizes).stride()
    strides, _ = layout_at(case.arg("x"), dict(zip(dims, sizes)))
    assert strides == want


def _load(text, tmp=[]):  # noqa: B006 - one scratch folder per process
    from pathlib import Path

    from tests.conftest import scratch

    if not tmp:
        tmp.append(Path(scratch("shapecheck-layouts-")))
    path = tmp[0] / f"c{len(list(tmp[0].iterdir()))}.toml"
    path.write_text(text)
    return load_contract(path)


# ---------------------------------------------------------------------------------------------------------
# Every command makes its inputs in the contract's layout


def test_inputs_are_made_in_their_layout_on_every_device():
    contract = load_contract(KERNELS / "layout_scales.toml")
    case = next(c for c in contract.cases() if c.values["scale_col_major"])
    dims = {"M": 3, "K": 5, "N": 2, "G": 4}
    want = {"a": (5, 1), "b": (1, 5), "scale_a": (1, 3)}
    for device in ("cpu", "meta"):
        args = make_arguments(case, dims, 0, device)
        assert {k: args[k].stride() for k in want} == want, device
    from shapecheck._torch.core import static_fake_mode

    with static_fake_mode():
        fake = make_arguments(case, dims, 0, None)
    assert {k: fake[k].stride() for k in want} == want
    # the values are drawn once: cpu tensors of the same seed are equal, whatever the layout
    again = make_arguments(case, dims, 0, "cpu")
    assert torch.equal(again["scale_a"], make_arguments(case, dims, 0, "cpu")["scale_a"])


def test_an_expanded_input_with_a_storage_offset_is_a_view_of_its_storage(tmp_path):
    contract = _load(BASE.format(layout='expand = [0]\nstorage_offset = "O"', outputs='"unspecified"'))
    case = next(iter(contract.cases()))
    args = make_arguments(case, {"M": 3, "K": 4, "LD": 4, "O": 2}, 1, "cpu")
    x = args["x"]
    assert x.shape == (3, 4) and x.stride() == (0, 1) and x.storage_offset() == 2
    assert torch.equal(x[0], x[2])  # broadcast: one row of values


def test_the_eager_reference_builds_the_layout_on_its_device(monkeypatch):
    """``ref check --device cuda`` makes inputs on the device in the contract's layout (a ``.to`` of the cpu
    tensors would make an expanded input dense and drop its offset). No GPU here: the device is meta."""
    from shapecheck.runtime.reference import EagerReference

    contract = load_contract(KERNELS / "layout_expanded.toml")
    case = next(c for c in contract.cases() if c.values["broadcast_bias"])
    ref = EagerReference.__new__(EagerReference)
    ref.device = "meta"
    args = ref.arguments(case, {"B": 2, "L": 3, "D": 4}, 0)
    assert args["bias"].device.type == "meta" and args["bias"].stride() == (0, 0, 1)


# ---------------------------------------------------------------------------------------------------------
# Loading: every mistake names its key


@pytest.mark.parametrize(("layout", "key", "message"), [
    ('layout = "channel_last"', "args.x.layout", "expected 'contiguous', 'channels_last'"),
    ('layout = "channels_last"', "args.x.layout", "channels_last needs a tensor of rank 4"),
    ('layout = "(0, 1, 2)"', "args.x.layout", "a dim order of 3 dims for a shape of rank 2"),
    ('layout = "contiguous"\nstrides = "(K, 1)"', "args.x", "give 'layout' or 'strides', not both"),
    ('strides = "(K,)"', "args.x.strides", "expected 2 strides"),
    ('strides = "(K, -1)"', "args.x.strides", "a stride must be a non-negative integer"),
    ('strides = "(K - M, 1)"', "args.x.strides", "is -1 at"),
    ('expand = [2]', "args.x.expand", "expand names dims [2]"),
    ('expand = [0, 0]', "args.x.expand", "a dim appears twice"),
    ('storage_offset = "-1"', "args.x.storage_offset", "non-negative"),
])
def test_a_malformed_layout_names_its_key(layout, key, message):
    with pytest.raises(ContractError) as err:
        _load(BASE.format(layout=layout, outputs='"unspecified"'))
    assert f"[{key}" in str(err.value) and message in str(err.value), str(err.value)


def test_a_choice_of_layouts_takes_names_only():
    text = BASE.format(layout='layout = "fmt"', outputs='"unspecified"').replace(
        "[domain]", '[choices]\nfmt = ["contiguous", "(1, 0)"]\n\n[domain]')
    with pytest.raises(ContractError) as err:
        _load(text)
    assert "[args.x.layout]" in str(err.value) and "select by a choice" in str(err.value)


def test_like_an_input_with_explicit_strides_is_refused():
    with pytest.raises(ContractError) as err:
        _load(BASE.format(layout='strides = "(LD, 1)"', outputs='{ shape = "(M, K)", layout = "like x" }'))
    assert "outputs[0].layout" in str(err.value) and "explicit strides (LD, 1)" in str(err.value)


def test_like_follows_the_inputs_dim_order():
    c = _load(BASE.format(layout='layout = "(1, 0)"', outputs='{ shape = "(M, 2 * K)", layout = "like x" }'))
    spec = next(iter(c.cases())).paths[0].specs[0]
    assert [E.to_text(s) for s in spec.strides] == ["1", "M"] and spec.layout == "like x (dim order (1, 0))"


# ---------------------------------------------------------------------------------------------------------
# fuzz op draws every example in its case's layout


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_fuzz_runs_the_eager_kernel_on_channels_last_inputs_and_finds_a_contiguous_fake(tmp_path):
    from shapecheck.runtime.fuzz import FuzzOptions, fuzz_op

    contract = tmp_path / "pool.toml"
    text = (KERNELS.parent.parent / "contracts" / "aten" / "avg_pool2d.toml").read_text()
    contract.write_text(text.replace("ceil_mode = [false, true]", "ceil_mode = [false]"))
    (tmp_path / "k.py").write_text(textwrap.dedent("""
        def kernel(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
                   divisor_override=None):
            n, c, h, w = self.shape
            k, s, p = kernel_size[0], (stride or kernel_size)[0], padding[0]
            return self.new_empty((n, c, (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1))
    """))
    opts = FuzzOptions(examples=40, seed=3, verify_examples=False)
    r = fuzz_op("aten::avg_pool2d", contract=str(contract), meta=f"{tmp_path / 'k.py'}:kernel", options=opts)
    assert r.verdict == "fail"
    (f,) = r.failures
    assert f.code == "SC015" and "memory_format=channels_last" in f.case and "strides" in f.message
    installed = fuzz_op("aten::avg_pool2d", contract=str(contract), options=opts)
    assert installed.verdict == "pass", [x.message for x in installed.failures]
