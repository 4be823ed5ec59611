"""metal_ref.select_path / metal_ref.run: both eras' dispatch on boundary inputs, errors, forced paths."""

import pytest
import torch

import metal_ref

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16


def qkv(n_l, n_s, e=64, ev=None, hq=2, hk=None, dtype=F32, rank=4, seed=0):
    gen = torch.Generator().manual_seed(seed)
    lead = {3: (), 4: (1,), 5: (1, 1)}[rank]
    q = torch.randn(*lead, hq, n_l, e, generator=gen).to(dtype)
    k = torch.randn(*lead, hk or hq, n_s, e, generator=gen).to(dtype)
    v = torch.randn(*lead, hk or hq, n_s, ev or e, generator=gen).to(dtype)
    return q, k, v


def mask(n_l, n_s, dtype):
    return torch.ones(n_l, n_s, dtype=torch.bool) if dtype == torch.bool else torch.zeros(n_l, n_s, dtype=dtype)


# (L, S, E, Ev, Hq, Hk, dtype, mask dtype, causal) -> expected path
MARCH_CASES = [
    ((1, 1, 64, 64, 2, 2, F32, None, False), "vector_1pass"),
    ((8, 1023, 128, 128, 2, 2, F16, None, False), "vector_1pass"),
    ((8, 1024, 96, 96, 2, 2, F32, None, False), "vector_2pass"),
    ((9, 1024, 64, 64, 2, 2, F32, None, False), "general"),
    ((8, 7, 64, 64, 2, 2, F32, None, False), "general"),
    ((4, 100, 64, 64, 2, 2, F32, torch.bool, False), "vector_1pass"),
    ((4, 2000, 64, 64, 2, 2, F32, torch.bool, False), "vector_2pass"),
    ((4, 100, 64, 64, 2, 2, F32, F32, False), "general"),
    ((4, 100, 64, 64, 2, 2, F32, None, True), "general"),
    ((4, 100, 256, 256, 2, 2, F32, None, False), "general"),
    ((4, 100, 64, 32, 2, 2, F32, None, False), "general"),
    ((4, 100, 80, 80, 2, 2, F32, None, False), "general"),
    ((4, 1023, 64, 64, 4, 2, F32, None, False), "vector_1pass"),
    ((4, 4096, 64, 64, 4, 2, F32, None, False), "vector_2pass"),
    ((40, 100, 64, 64, 2, 2, F16, None, False), "general"),
    ((4000, 8, 64, 64, 1, 1, F16, None, False), "general"),
]

CURRENT_CASES = [
    ((8, 1023, 128, 128, 2, 2, F32, None, False), "vector_1pass"),
    ((8, 1024, 128, 128, 2, 2, F32, None, False), "vector_2pass"),
    ((4, 100, 256, 256, 2, 2, F16, None, False), "vector_1pass"),
    ((4, 100, 64, 64, 2, 2, F16, F16, False), "vector_1pass"),
    ((4, 100, 64, 64, 2, 2, F16, F32, False), "general"),
    ((4, 100, 64, 64, 2, 2, F32, None, True), "vector_1pass"),
    ((4, 100, 64, 64, 2, 2, F32, torch.bool, True), "general"),
    ((8, 7, 64, 64, 2, 2, F32, None, False), "general"),
    ((9, 1024, 64, 64, 2, 2, F32, None, False), "prefill"),
    ((9, 1, 80, 80, 2, 2, BF16, torch.bool, True), "prefill"),
    ((9, 100, 64, 64, 2, 2, F32, F32, False), "prefill"),
    ((9, 100, 64, 64, 2, 2, F16, F32, False), "general"),
    ((9, 100, 48, 48, 2, 2, F32, None, False), "general"),
    ((9, 100, 64, 32, 2, 2, F32, None, False), "general"),
    ((3068, 8, 24, 24, 1, 1, F16, None, False), "general"),
    ((3069, 8, 24, 24, 1, 1, F16, None, False), "general_chunked"),
    ((3069, 8, 24, 24, 1, 1, BF16, None, False), "general_chunked"),
    ((3069, 8, 24, 24, 1, 1, F32, None, False), "general"),
    ((3069, 8, 64, 64, 1, 1, F16, None, False), "prefill"),
]


def case_inputs(n_l, n_s, e, ev, hq, hk, dtype, mask_dtype, causal):
    q = torch.empty(1, hq, n_l, e, dtype=dtype)
    k = torch.empty(1, hk, n_s, e, dtype=dtype)
    v = torch.empty(1, hk, n_s, ev, dtype=dtype)
    return q, k, v, (None if mask_dtype is None else mask(n_l, n_s, mask_dtype)), causal


@pytest.mark.parametrize(("case", "expected"), MARCH_CASES)
def test_select_path_march(case, expected):
    q, k, v, m, causal = case_inputs(*case)
    assert metal_ref.select_path(q, k, v, m, causal, era="2026-03") == expected
    assert metal_ref.select_path(q, k, v, m, causal, era="2026-03", has_mpp=True) == expected


@pytest.mark.parametrize(("case", "expected"), CURRENT_CASES)
def test_select_path_current(case, expected):
    q, k, v, m, causal = case_inputs(*case)
    assert metal_ref.select_path(q, k, v, m, causal, era="current") == expected


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ((9, 100, 64, 64, 2, 2, F16, None, False), "mpp"),
        ((9, 100, 256, 256, 2, 2, BF16, torch.bool, True), "mpp"),
        ((9, 100, 64, 64, 2, 2, F32, None, False), "prefill"),
        ((9, 100, 80, 80, 2, 2, F16, None, False), "prefill"),
        ((8, 100, 64, 64, 2, 2, F16, None, False), "vector_1pass"),
    ],
)
def test_select_path_current_with_mpp(case, expected):
    q, k, v, m, causal = case_inputs(*case)
    assert metal_ref.select_path(q, k, v, m, causal, era="current", has_mpp=True) == expected


def test_disable_prefill_falls_back_to_the_graph():
    q, k, v, m, causal = case_inputs(9, 100, 64, 64, 2, 2, F16, None, False)
    assert metal_ref.select_path(q, k, v, era="current", has_mpp=True, disable_prefill=True) == "general"


def test_select_path_reads_dims_like_ensure_4d():
    for rank in (3, 5):
        q, k, v = qkv(4, 1024, rank=rank)
        assert metal_ref.select_path(q, k, v) == "vector_2pass"


@pytest.mark.parametrize("era", metal_ref.ERAS)
@pytest.mark.parametrize(("n_l", "n_s", "e"), [(1, 1023, 64), (8, 1024, 96), (9, 64, 128), (4, 4096, 128)])
def test_run_matches_math_reference(era, n_l, n_s, e):
    q, k, v = qkv(n_l, n_s, e)
    out0, _ = metal_ref.run(q, k, v, era=era)
    torch.testing.assert_close(out0.double(), metal_ref.math_reference(q, k, v), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("path", ["vector_1pass", "vector_2pass", "general", "prefill", "mpp"])
def test_forced_paths_agree(path):
    q, k, v = qkv(4, 300, 64)
    auto, _ = metal_ref.run(q, k, v, era="current")
    forced, _ = metal_ref.run(q, k, v, era="current", path=path)
    torch.testing.assert_close(forced, auto, atol=1e-6, rtol=1e-5)


def test_second_outputs_per_path():
    q, k, v = qkv(4, 1024, 64, dtype=F16)
    shapes = {}
    for path in ("vector_1pass", "vector_2pass", "general", "prefill"):
        out0, out1 = metal_ref.run(q, k, v, path=path, era="current")
        assert out0.shape == q.shape
        shapes[path] = (tuple(out1.shape), out1.dtype, out1 is out0)
    assert shapes == {
        "vector_1pass": ((1, 2, 4, 1024), F16, False),
        "vector_2pass": ((1, 2, 4, 32, 64), F16, False),
        "general": ((1, 2, 4, 1024), F16, False),
        "prefill": ((1, 2, 4, 64), F16, True),
    }


def test_dropout_is_rejected_now_and_ignored_in_march():
    q, k, v = qkv(4, 100)
    with pytest.raises(NotImplementedError, match="dropout"):
        metal_ref.run(q, k, v, dropout_p=0.1, era="current")
    with_dropout, _ = metal_ref.run(q, k, v, dropout_p=0.5, era="2026-03")
    without, _ = metal_ref.run(q, k, v, era="2026-03")
    assert torch.equal(with_dropout, without)


@pytest.mark.parametrize(
    ("dtypes", "match"),
    [
        ((torch.int32, torch.int32, torch.int32), "does not support dtype"),
        ((torch.float64, torch.float64, torch.float64), "float32, float16 and bfloat16"),
        ((F32, F16, F32), "share one dtype"),
    ],
)
def test_bad_dtypes_raise_type_error(dtypes, match):
    q, k, v = (torch.ones(1, 2, 4, 64, dtype=dt) for dt in dtypes)
    with pytest.raises(TypeError, match=match):
        metal_ref.run(q, k, v)
    with pytest.raises(TypeError, match=match):
        metal_ref.select_path(q, k, v)


def test_bad_arguments_raise_value_error():
    q, k, v = qkv(4, 100)
    with pytest.raises(ValueError, match="era="):
        metal_ref.run(q, k, v, era="2025-12")
    with pytest.raises(ValueError, match="path="):
        metal_ref.run(q, k, v, path="flash")
    with pytest.raises(ValueError, match="at least 3 dims"):
        metal_ref.run(q[0, 0], k[0, 0], v[0, 0])
    with pytest.raises(ValueError, match="cannot be expanded"):
        metal_ref.run(q, k, v, torch.ones(3, 100, dtype=torch.bool))
    q3, k3, v3 = qkv(4, 100, hq=3, hk=2)
    with pytest.raises(ValueError, match="divisible"):
        metal_ref.run(q3, k3, v3, era="current")


def test_march_gqa_needs_the_call_site_repeat_on_the_1pass_path():
    q, k, v = qkv(4, 100, hq=4, hk=2)
    with pytest.raises(NotImplementedError, match="gqa_factor=1"):
        metal_ref.run(q, k, v, era="2026-03")
    out0, _ = metal_ref.run(q, k, v, era="2026-03", enable_gqa=True)
    torch.testing.assert_close(out0.double(), metal_ref.math_reference(q, k, v), atol=1e-5, rtol=1e-5)
    current, _ = metal_ref.run(q, k, v, era="current")
    torch.testing.assert_close(current, out0, atol=1e-6, rtol=1e-5)


def test_march_2pass_gqa_uses_the_real_factor():
    q, k, v = qkv(2, 1500, hq=4, hk=2)
    assert metal_ref.select_path(q, k, v, era="2026-03") == "vector_2pass"
    out0, _ = metal_ref.run(q, k, v, era="2026-03")
    torch.testing.assert_close(out0.double(), metal_ref.math_reference(q, k, v), atol=1e-5, rtol=1e-5)


def test_march_vector_kernels_take_only_bool_masks_and_no_causal():
    q, k, v = qkv(4, 100)
    with pytest.raises(ValueError, match="bool"):
        metal_ref.run(q, k, v, torch.zeros(4, 100), era="2026-03", path="vector_1pass")
    with pytest.raises(ValueError, match="causal"):
        metal_ref.run(q, k, v, is_causal=True, era="2026-03", path="vector_2pass")


def test_march_mask_bug_switch_changes_the_1pass_reads():
    q, k, v = qkv(4, 4, hq=1)
    m = torch.tensor([[1, 0, 0, 1], [0, 1, 1, 1], [1, 1, 0, 1], [1, 0, 1, 0]], dtype=torch.bool)
    fixed, _ = metal_ref.run(q, k, v, m, era="2026-03")
    buggy, _ = metal_ref.run(q, k, v, m, era="2026-03", march_mask_bug=True)
    torch.testing.assert_close(fixed.double(), metal_ref.math_reference(q, k, v, m), atol=1e-5, rtol=1e-5)
    assert not torch.allclose(fixed, buggy)
    now, _ = metal_ref.run(q, k, v, m, era="current", march_mask_bug=True)
    assert torch.equal(now, fixed)


@pytest.mark.parametrize(("era", "path", "check"), [
    ("2026-03", "vector_1pass", torch.isnan),
    ("2026-03", "vector_2pass", lambda t: t == 0),
    ("current", "prefill", lambda t: t == 0),
])
def test_fully_masked_row_quirks(era, path, check):
    n_s = 1500 if path == "vector_2pass" else 40
    n_l = 9 if path == "prefill" else 4
    q, k, v = qkv(n_l, n_s)
    m = torch.ones(n_l, n_s, dtype=torch.bool)
    m[2] = False
    assert metal_ref.select_path(q, k, v, m, era=era) == path
    out0, _ = metal_ref.run(q, k, v, m, era=era)
    assert check(out0[:, :, 2]).all()
    assert torch.isfinite(out0[:, :, [0, 1, 3]]).all()


def test_general_fully_masked_float_row_is_zero():
    q, k, v = qkv(4, 40)
    m = torch.zeros(4, 40)
    m[1] = float("-inf")
    assert metal_ref.select_path(q, k, v, m, era="2026-03") == "general"
    out0, _ = metal_ref.run(q, k, v, m, era="2026-03")
    assert (out0[:, :, 1] == 0).all()
