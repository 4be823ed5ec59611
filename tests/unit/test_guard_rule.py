"""The rule of a guard a fake run (fuzz, ref check) installed: a dim pinned to a value is SC003, a branch on
an expression of dims (parity included) is SC001, as verify names them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from shapecheck.logic import expr as E
from shapecheck.rules import RuleCode
from shapecheck.runtime.check import guard_rule


@pytest.mark.parametrize("text, rule", [
    ("N == 3", RuleCode.VALUE_SPECIALIZATION),
    ("3 == N", RuleCode.VALUE_SPECIALIZATION),
    ("N % 2 == 1", RuleCode.GUARD_ON_DYNAMIC_DIM),
    ("N // 4 == 2", RuleCode.GUARD_ON_DYNAMIC_DIM),
    ("N > 8", RuleCode.GUARD_ON_DYNAMIC_DIM),
    ("N == M", RuleCode.GUARD_ON_DYNAMIC_DIM),
])
def test_a_value_is_a_dim_pinned_and_anything_else_a_branch(text, rule):
    g = SimpleNamespace(origin="", assertion=False)
    assert guard_rule(g, E.parse(text)) is rule


def test_torch_helpers_and_asserts_keep_their_own_rules():
    node = E.parse("N == 3")
    assert guard_rule(SimpleNamespace(origin="torch/_refs", assertion=False), node) is RuleCode.GUARD_IN_TORCH_HELPER
    assert guard_rule(SimpleNamespace(origin="", assertion=True), node) is RuleCode.ASSERT_NARROWS_RANGE
