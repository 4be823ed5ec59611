"""Property: for any small valid input, run() output 0 equals the float64 math reference."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metal_ref


@st.composite
def attention_inputs(draw):
    era = draw(st.sampled_from(metal_ref.ERAS))
    n_l = draw(st.integers(1, 12))
    n_s = draw(st.integers(1, 300))
    e = draw(st.sampled_from([64, 96, 128] if era == "2026-03" else [32, 64, 80, 128]))
    hk = draw(st.integers(1, 2))
    hq = hk * draw(st.integers(1, 2))
    rank = draw(st.sampled_from([3, 4, 5]))
    n_b = 1 if rank == 3 else draw(st.integers(1, 2))
    lead = {3: (), 4: (n_b,), 5: (n_b, 1)}[rank]
    seed = draw(st.integers(0, 2**16))
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(*lead, hq, n_l, e, generator=gen)
    k = torch.randn(*lead, hk, n_s, e, generator=gen)
    v = torch.randn(*lead, hk, n_s, e, generator=gen)
    mask = None
    if draw(st.booleans()):
        mask = torch.rand(n_l, n_s, generator=gen) > 0.5
        mask[:, draw(st.integers(0, n_s - 1))] = True
    causal = mask is None and draw(st.booleans())
    return era, q, k, v, mask, causal


@pytest.mark.slow  # over 0.5 s on an idle core
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(attention_inputs())
def test_run_output0_equals_math_reference(inputs):
    era, q, k, v, mask, causal = inputs
    out0, _ = metal_ref.run(q, k, v, mask, is_causal=causal, era=era, enable_gqa=True)
    path = metal_ref.select_path(q, k, v, mask, causal, era=era)
    # The MPSGraph path adds a bool mask as 1/0 instead of masking.
    ref_mask = mask.float() if path == "general" and mask is not None else mask
    ref = metal_ref.math_reference(q, k, v, ref_mask, causal)
    assert out0.shape == q.shape
    torch.testing.assert_close(out0.double(), ref, atol=1e-5, rtol=1e-5)
