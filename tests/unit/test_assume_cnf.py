"""A region's facts reach torch one by one, and none too large for torch's conjunctive normal form (a hunt: a
region of torch 2.4's flash-attention decomposition, a negated disjunction of conjunctions, hung verify in sympy's
to_cnf; 12 such terms take 12 s, each one more doubles it)."""

import pytest
import sympy
import torch

from shapecheck._torch import core as C
from shapecheck.logic import expr as E
from shapecheck.logic.simplify import conjuncts, relations


def _big(n: int) -> E.Node:
    return E.Or(tuple(E.And((E.Cmp("==", E.Var(f"d{2 * i}"), E.Const(i + 1)),
                             E.Cmp("<=", E.Var(f"d{2 * i + 1}"), E.Const(i + 3)))) for i in range(n)))


def test_a_negated_disjunction_is_its_negated_parts_and_atoms_are_counted():
    parts = conjuncts(E.Not(_big(3)))
    assert len(parts) == 3 and all(relations(p) == 2 for p in parts)
    assert relations(_big(12)) == 24 and conjuncts(E.Var("x")) == [E.Var("x")]


@pytest.mark.slow
def test_facts_too_large_for_torchs_normal_form_are_left_out_and_the_rest_are_kept(monkeypatch):
    checked = []
    real = torch._check

    def record(cond, *args, **kwargs):
        checked.append(cond)
        return real(cond, *args, **kwargs)

    monkeypatch.setattr(torch, "_check", record)
    with C.TraceEnv() as env:
        values = {f"d{i}": env.size(0, 1000) for i in range(24)}
        C.assume(E.Not(_big(12)), values)  # 12 facts of 2 comparisons each: all handed over
        assert len(checked) == 12
        checked.clear()
        C.assume(_big(12), values)  # one fact of 24 comparisons: left out (the trace knows less, never more)
        assert checked == []
        C.assume(E.Cmp("<=", E.Var("d0"), E.Const(500)), values)
        assert len(checked) == 1 and C.symbol_of(values["d0"]) in env.shape_env.var_to_range
        form = sympy.Or(*[sympy.Eq(sympy.Symbol(f"d{i}", integer=True), i) for i in range(9)])
        checked.clear()
        C.assume_form(form, values)  # torch's own form of a fact: the same bound
        assert checked == []
