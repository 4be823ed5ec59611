"""A trace's fake inputs: made as FakeTensorMode's constructor rule makes them, without its dispatch
(``_torch.layout.fake_empty``), and sized by unbacked symbols that say they are positive only where the dim's
least value is at least 1 (``_torch.core.TraceEnv.size``)."""

import pytest
import torch

from shapecheck._torch import core as C
from shapecheck._torch.backed import BackedRun
from shapecheck._torch.layout import fake_empty, strided_empty


def _same(a, b):
    assert type(a) is type(b)
    assert a.shape == b.shape and a.stride() == b.stride() and a.dtype == b.dtype and a.device == b.device
    assert a.storage_offset() == b.storage_offset()
    assert a.untyped_storage().nbytes() == b.untyped_storage().nbytes()
    assert a.fake_mode is b.fake_mode
    for fmt in (torch.contiguous_format, torch.channels_last, torch.channels_last_3d):
        if fmt is torch.contiguous_format or a.dim() == (4 if fmt is torch.channels_last else 5):
            assert _answer(a, fmt) == _answer(b, fmt)


def _answer(t, fmt):
    try:
        return t.is_contiguous(memory_format=fmt)
    except C.GuardError:  # undecidable on unbacked sizes: both must say so
        return "data-dependent"


@pytest.mark.parametrize("lo", [0, 1, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool])
def test_a_fake_input_is_the_tensor_the_modes_constructor_makes(lo, dtype):
    with C.TraceEnv() as env:
        u = [env.size(lo, 2**31 - 1) for _ in range(5)]
        for shape in (u, u[:4], u[:1], [], [u[0], 3, u[1]], [0, u[0]], [u[0] * u[1], 2 * u[2] + 1]):
            made = fake_empty(env.mode, shape, dtype)
            _same(made, torch.empty(shape, dtype=dtype))  # through the mode's dispatch
            assert isinstance(env.tensor(shape, {torch.float32: "float32", torch.float16: "float16",
                                                 torch.int64: "int64", torch.bool: "bool"}[dtype]),
                              torch._subclasses.fake_tensor.FakeTensor)


def test_static_and_backed_inputs_are_the_same_tensors_too():
    with C.static_fake_mode() as mode:
        for shape in ([2, 3, 4, 5], [0, 7], [1], []):
            _same(strided_empty(shape, torch.float32, mode=mode), torch.empty(shape))
    run = BackedRun(C.Own.of(frozenset()))
    n, h = run.ranged("N", 4, 2, 64), run.ranged("H", 5, 2, 64)
    with C.quiet_torch_logging(), run.mode:
        _same(strided_empty([n, h, 3], torch.float32, mode=run.mode), torch.empty([n, h, 3]))


def test_a_size_is_a_positive_symbol_only_where_its_least_value_is_at_least_1():
    with C.TraceEnv() as env:
        from_0, from_1, from_2 = env.size(0, 100), env.size(1, 100), env.size(2, 100)
        assert C.symbol_of(from_0).is_positive is None
        assert C.symbol_of(from_1).is_positive and C.symbol_of(from_2).is_positive
        assert all(C.symbol_of(s).is_integer for s in (from_0, from_1, from_2))
        # a contiguous input's strides: Max(1, u) where u may be 0, u itself where it may not
        assert "Max" in str(env.tensor([from_1, from_0, from_1], "float32").stride()[0])
        assert "Max" not in str(env.tensor([from_0, from_1, from_2], "float32").stride()[0])
        # torch still knows 1 is a value of a size from 1: nothing decides u == 1 for it
        assert env.shape_env.var_to_range[C.symbol_of(from_1)].lower == 1
        with pytest.raises(C.GuardError):
            bool(from_1 == 1)


@pytest.mark.slow
def test_the_zero_size_trap_is_still_seen_where_a_dim_starts_at_0(tmp_path):
    """A kernel that divides by a size fails from 0 and passes from 1: the symbol's sign is never assumed."""
    from shapecheck.findings import Verdict
    from shapecheck.prove.verify import Options, verify_op

    kernel = tmp_path / "k.py"
    kernel.write_text("import torch\n\n\ndef per_row(x):\n"
                      "    n, d = x.shape\n"
                      "    torch._check(n != 0, lambda: 'empty')\n"
                      "    return x.new_empty((n, d))\n")
    for lo, verdict in ((0, Verdict.FAIL), (1, Verdict.PASS)):
        contract = tmp_path / f"c{lo}.toml"
        contract.write_text(f'schema = 1\nop = "sc_test::per_row"\n[dims]\nN = {{ min = {lo}, max = 4096 }}\n'
                            'D = { min = 1, max = 4096 }\n[[args]]\nname = "x"\nkind = "tensor"\n'
                            'dtype = "float32"\nshape = "(N, D)"\n[[paths]]\nid = "rows"\nwhen = "true"\n'
                            'outputs = ["(N, D)"]\n')
        report = verify_op("sc_test::per_row", contract=str(contract), meta=f"{kernel}:per_row",
                           options=Options(jobs=1))
        assert report.verdict is verdict, (lo, report.violations)
