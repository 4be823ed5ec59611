"""Size arithmetic made exact before z3: float true division of sizes inside floor/ceil/int and round-up helpers
(translate._quotient), and obligations simplified with the contract's own equalities (simplify.py)."""

import functools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck._torch import core as C
from shapecheck._torch import translate as T
from shapecheck.findings import Verdict
from shapecheck.logic import expr as E
from shapecheck.logic.solver import Bounds, Outcome, Solver
from shapecheck.prove.premises import simplified
from shapecheck.prove.verify import verify_op
from tests.conftest import KERNELS

HELPERS = KERNELS / "size_helpers.py"


def round_up(x, y):
    return ((x + y - 1) // y) * y


def traced(build):
    """torch's expression for ``build(K, S)`` over unbacked sizes, translated, with K and S as dim names."""
    with C.TraceEnv() as env:
        k, s = env.size(1, 2**40), env.size(0, 2**40)
        out = build(k, s)
        return T.to_node(out.node.expr, {C.symbol_of(k): "K", C.symbol_of(s): "S"})


ROUND_UP = traced(lambda k, s: s == round_up(k / 128, 4))
CEIL_SUM = traced(lambda k, s: s == math.ceil(k / 3 + 2))
FLOOR_NESTED = traced(lambda k, s: s <= math.floor((k / 6 + 1) / 5))
INT_PRODUCT = traced(lambda k, s: s == __import__("torch").sym_int(4.0 * (k / 8)))  # int() would guard


def test_round_up_of_a_true_division_is_integer_arithmetic():
    assert E.to_text(ROUND_UP) == "S == (K + 384) // 512 * 4"


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 2**40), st.integers(-3, 3))
def test_translations_agree_with_pythons_float_arithmetic(k, delta):
    """Exact: the translated expression and Python's own float computation agree at every size tried (below
    2**53, where Python's floats are exact enough; docs/how-it-works.md)."""
    cases = [(ROUND_UP, round_up(k / 128, 4), "=="), (CEIL_SUM, math.ceil(k / 3 + 2), "=="),
             (FLOOR_NESTED, math.floor((k / 6 + 1) / 5), "<="), (INT_PRODUCT, int(4.0 * (k / 8)), "==")]
    for node, value, op in cases:
        s = max(0, value + delta)
        want = s == value if op == "==" else s <= value
        assert E.evaluate(node, {"K": k, "S": s}) is want, (E.to_text(node), k, s)


def test_a_float_that_is_not_an_exact_quotient_stays_untranslated():
    """0.1 is a 53-bit fraction (its products with a size round); 0.5 is 1 / 2 and translates exactly."""
    import pytest
    import torch

    with pytest.raises(T.Unsupported):
        traced(lambda k, s: s == torch.sym_float(k) * 0.1)
    traced(lambda k, s: s == torch.sym_float(k) * 0.5)


@pytest.mark.slow
def test_round_up_check_is_proved_and_a_wrong_one_refuted():
    """torch's _scaled_grouped_mm writes round_up(K / 128, 4): proved against the contract (SC005 before), and
    the same check with 64-column blocks is SC004 at a real point."""
    contract = str(KERNELS / "size_helpers.toml")
    ok = verify_op("sctest::scaled_rows", contract=contract, meta=f"{HELPERS}:scales_round_up")
    assert ok.verdict == Verdict.PASS
    bad = verify_op("sctest::scaled_rows", contract=contract, meta=f"{HELPERS}:scales_round_up_wrong")
    (v,) = bad.violations
    k, l4 = v.counterexample["K"], v.counterexample["L4"]
    assert v.code == "SC004" and l4 == (k + 384) // 512 * 4 and l4 != round_up(k / 64, 4)


# ---------------------------------------------------------------------------------------------------------
# Simplification with the contract's equalities


def test_modulo_by_a_product_follows_from_the_requires():
    """z3 alone says unknown (nonlinear); substituting Ci == Co * PH * PW proves it at once."""
    solver = Solver([Bounds(n, 1, 2**31 - 1) for n in ("Ci", "Co", "PH", "PW")], timeout_ms=2000, simplify=simplified)
    requires = E.parse("Ci == Co * PH * PW")
    assert solver.implies([requires], E.parse("Ci % (PH * PW) == 0")).outcome is Outcome.PROVED
    assert solver.implies([requires], E.parse("Ci // (PH * PW) == Co")).outcome is Outcome.PROVED
    refuted = solver.implies([requires], E.parse("Ci % (PH * PH) == 0"))
    assert refuted.outcome is Outcome.REFUTED
    m = refuted.model
    assert m["Ci"] == m["Co"] * m["PH"] * m["PW"] and m["Ci"] % (m["PH"] * m["PH"]) != 0


def test_simplified_is_the_claim_under_the_definitions_and_none_without_them():
    premises = [E.parse("Ci == Co * PH * PW and H >= 1")]
    assert simplified(premises, E.parse("Ci % (PH * PW) == 0")) == E.TRUE
    assert simplified([E.parse("H >= 1")], E.parse("H % 2 == 0"), full=False) is None


SHUFFLE = [E.parse("Ci == Co * PH * PW")]
CLAIMS = [E.parse(t) for t in ("Ci % (PH * PW) == 0", "Ci // PH // PW == Co + c", "(Ci + c) % PH == 0",
                                "Ci // (PH * c * c + 1) >= Co")]


@functools.cache
def simplified_claims():
    return [(claim, simplified(SHUFFLE, claim)) for claim in CLAIMS]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.integers(1, 50), st.integers(1, 50), st.integers(1, 50), st.integers(-5, 5))
def test_simplification_keeps_the_claims_value_wherever_the_premises_hold(co, ph, pw, c):
    point = {"Co": co, "PH": ph, "PW": pw, "Ci": co * ph * pw, "c": c}
    pairs = simplified_claims()
    assert any(alt is not None for _, alt in pairs)
    for claim, alt in pairs:
        if alt is not None:
            assert E.evaluate(alt, point) == E.evaluate(claim, point), E.to_text(claim)


@pytest.mark.slow  # over 5 s (pytest --durations, 2026-12-02)
def test_pixel_shuffle_check_over_four_dynamic_dims_is_proved():
    contract = str(KERNELS / "shuffle_channels.toml")
    ok = verify_op("sctest::shuffle_channels", contract=contract, meta=f"{HELPERS}:unshuffle_channels")
    assert ok.verdict == Verdict.PASS and not ok.violations
    bad = verify_op("sctest::shuffle_channels", contract=contract, meta=f"{HELPERS}:unshuffle_channels_wrong")
    (v,) = bad.violations
    p = v.counterexample
    assert v.code == "SC004" and p["Ci"] % (p["PH"] * p["PW"]) == 0 and p["Ci"] % (p["PH"] ** 2) != 0


def test_known_divisibility_settles_what_follows_from_it():
    """With H % Hk == 0 required, (H // Hk) * Hk == H holds: H is Hk times an integer."""
    solver = Solver([Bounds(n, 1, 2**31 - 1) for n in ("H", "Hk")], timeout_ms=2000, simplify=simplified)
    requires = E.parse("H % Hk == 0")
    assert simplified([requires], E.parse("H // Hk * Hk == H"), full=False) == E.TRUE
    assert solver.implies([requires], E.parse("H // Hk * Hk == H")).outcome is Outcome.PROVED
    assert simplified([requires], E.parse("H // Hk >= 2"), full=False) is None  # depends on the multiple
