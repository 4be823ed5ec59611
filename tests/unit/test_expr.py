import pytest
from hypothesis import given
from hypothesis import strategies as st

from shapecheck import expr as E
from shapecheck.errors import ExprError


def test_parses_the_issue_examples():
    n = E.parse("L <= 8 and E == Ev and E in (64, 96, 128)")
    assert E.to_text(n) == "L <= 8 and E == Ev and E in (64, 96, 128)"
    assert E.evaluate(E.parse("(L + 31) // 32 * 32"), {"L": 33}) == 64
    assert E.evaluate(E.parse("min(L, S)"), {"L": 3, "S": 2}) == 2


def test_shapes_bind_against_arguments():
    q = E.TupleE((E.Var("B"), E.Var("H"), E.Var("L"), E.Var("E")))
    out = E.bind(E.parse("query.shape[:-1] + (Ev,)"), {}, {"query": q})
    assert E.to_text(out) == "(B, H, L, Ev)"
    assert E.bind(E.parse("query.shape[-2]"), {}, {"query": q}) == E.Var("L")


def test_case_values_fold():
    n = E.bind(E.parse("mask in ('none', 'bool') and not is_causal and L <= 8"),
               {"mask": E.Const("bool"), "is_causal": E.Const(False)})
    assert E.to_text(n) == "L <= 8"
    assert E.bind(E.parse("mask == 'float' and L <= 8"), {"mask": E.Const("bool")}) == E.FALSE


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')", "L ** 2", "L / 2", "x.size(0)", "lambda: 1", "[L for L in S]",
    "L if S else E", "query.stride", "L[1:2:3]", "1.5 + L", "f(L)", "L @ S", "L << 1",
])
def test_rejects_everything_outside_the_language(text):
    with pytest.raises(ExprError):
        E.parse(text)


def test_type_errors_are_reported():
    with pytest.raises(ExprError):
        E.bind(E.parse("L + 'bool'"), {})
    with pytest.raises(ExprError):
        E.bind(E.parse("(L, S) == 2"), {})


@given(st.integers(-50, 50), st.integers(-50, 50).filter(lambda v: v != 0))
def test_floor_division_and_modulo_follow_python(a, b):
    assert E.evaluate(E.parse("a // b"), {"a": a, "b": b}) == a // b
    assert E.evaluate(E.parse("a % b"), {"a": a, "b": b}) == a % b
