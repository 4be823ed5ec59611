import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.logic import expr as E
from shapecheck.logic.solver import Bounds, Outcome, Sat, Solver


def solver():
    return Solver([Bounds("L", 1, 2**31 - 1), Bounds("S", 1, 2**31 - 1), Bounds("k", -7, 7)])


def test_proves_and_refutes_with_a_real_counterexample():
    s = solver()
    assert s.implies([E.parse("L <= 8")], E.parse("L < 9")).outcome == Outcome.PROVED
    r = s.implies([], E.parse("L <= 8"))
    assert r.outcome == Outcome.REFUTED and r.model["L"] > 8


def test_small_model_is_readable():
    m = solver().small_model([E.parse("not (L <= 8)")])
    assert m["L"] == 9 and m["S"] == 1


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.integers(-40, 40), st.integers(-7, 7).filter(lambda v: v != 0))
def test_floor_semantics_match_python_for_negative_operands(a, k):
    s = solver()
    expr = E.parse(f"({a}) // k == {a // k} and ({a}) % k == {a % k}")
    r = s.satisfiable([E.parse(f"k == {k}"), E.negate(expr)])
    assert r.sat is Sat.UNSAT


def test_extreme_values():
    s = solver()
    assert s.extreme([E.parse("L <= 8")], "L", lowest=False) == 8
    assert s.extreme([E.parse("S >= 1024")], "S", lowest=True) == 1024


_ATOMS = ["a + b >= {n}", "a * b == {n}", "b - a >= {n}", "(a + {n}) % 3 == 1", "a // 2 != {n}", "c >= a",
          "max(a, b) == {n}", "min(b, c) < {n}"]


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_ATOMS), st.integers(0, 9)), min_size=1, max_size=3),
       st.booleans())
def test_small_model_is_the_least_model_and_does_not_depend_on_history(atoms, warm):
    """Against brute force on a small box: the least model in (a, b, c) order, or None when there is none,
    the same whether or not the solver answered other queries first."""
    conds = [E.parse(a.format(n=n)) for a, n in atoms]
    s = Solver([Bounds("a", 1, 9), Bounds("b", 1, 9), Bounds("c", 0, 4)])
    if warm:  # unrelated queries first: z3's own models would change, the least model must not
        s.satisfiable([E.parse("a * b == 12")])
        s.small_model([E.parse("a + b + c == 15")])
    box = [(a, b, c) for a in range(1, 10) for b in range(1, 10) for c in range(0, 5)]
    sat = [p for p in box if all(E.evaluate(cond, dict(zip("abc", p))) for cond in conds)]
    got = s.small_model(conds)
    if not sat:
        assert got is None
    else:
        assert (got["a"], got["b"], got["c"]) == min(sat)
        lo = min(p[1] for p in sat)
        hi = max(p[1] for p in sat)
        assert s.extreme(conds, "b", lowest=True) == lo and s.extreme(conds, "b", lowest=False) == hi


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 5), st.integers(0, 4), st.booleans())
def test_the_least_and_greatest_values_far_from_the_bounds(n, k, r, lowest):
    """The descent walks away from the bound in growing steps before it bisects: the optimum is the same as a
    scan's, wherever it lies in a range of 2**31."""
    top = 2**31 - 1
    s = Solver([Bounds("x", 1, top), Bounds("y", 1, top)])
    conds = [E.parse(f"x >= {n}" if lowest else f"x <= {top - n}"), E.parse(f"x % {k + 1} != {r % (k + 1)}"),
             E.parse("y != x")]
    scan = range(n, n + 20) if lowest else range(top - n, top - n - 20, -1)
    want = next(v for v in scan if v % (k + 1) != r % (k + 1))
    assert s.extreme(conds, "x", lowest=lowest) == want
    if lowest:
        m = s.small_model(conds)
        assert (m["x"], m["y"]) == (want, 1 if want != 1 else 2)


@pytest.mark.slow
def test_export_example_sizes_take_few_solver_queries():
    """Export's example sizes (one per domain of the SDPA-MPS contract, asked by every case's export-style run):
    every pair of Dims apart in one query, and each dim's least value found a few steps from its bound (about 600
    queries before, 165 now)."""
    from shapecheck.kernel.load import load_op_contract
    from shapecheck.prove.export import equal_classes, example_sizes, export_dims
    from shapecheck.prove.verify import make_solver

    contract = load_op_contract("aten::_scaled_dot_product_attention_math_for_mps")
    solver = make_solver(contract, 2000)
    seen, examples = set(), []
    for case in contract.cases():
        key = (case.domain, case.dims)
        if key in seen:
            continue
        seen.add(key)
        classes = equal_classes(case, solver)
        specs = export_dims(case, solver, classes, modulo=True)
        examples.append(example_sizes(case, solver, classes, tuple(sorted({sp.base for sp in specs.values()
                                                                             if sp.base})), specs))
    assert examples[0] == {"H": 2, "Hk": 2, "L": 3, "S": 4, "E": 5, "Ev": 6}
    assert all(len(set(ex.values())) >= len(ex) - 1 for ex in examples) and len(examples) == 4
    assert solver.queries < 250


# ---------------------------------------------------------------------------------------------------------
# Spelling, strategies and the budget


def test_im2col_output_is_proved_whatever_the_spelling():
    """Issue 22: aten::im2col's output (kernel 3, stride 2, padding 0) as torch traces it, against the
    contract's formula in three spellings. z3 alone times out on the product of floors (SC005 after 132 s at a
    60 s timeout); in normal form both sides are one term."""
    s = Solver([Bounds("N", 1, 64), Bounds("C", 1, 1024), Bounds("H", 1, 4096), Bounds("W", 1, 4096)], timeout_ms=2000)
    domain = [E.parse("H >= 3"), E.parse("W >= 3")]
    traced = "(H - 1) // 2 * ((W - 1) // 2)"
    for ho, wo in [("(H - 3) // 2 + 1", "(W - 3) // 2 + 1"), ("(H - 3 + 2) // 2", "(W - 3 + 2) // 2"),
                   ("-((2 - H) // 2)", "(W + 2 - 3) // 2")]:
        claim = E.parse(f"{traced} == ({ho}) * ({wo})")
        assert s.implies(domain, claim).outcome == Outcome.PROVED
        assert s.implies(domain, E.parse(f"{traced} == ({ho}) * ({wo}) + 1")).outcome == Outcome.REFUTED


def _answered_by(s: Solver, conds: list[str]) -> tuple[str, str]:
    with s._scope([E.parse(c) for c in conds]) as a:
        return str(a.result), a.way


def test_common_obligations_are_answered_by_the_quick_strategy():
    s = Solver([Bounds("H", 1, 2**31 - 1), Bounds("W", 1, 2**31 - 1)])
    assert _answered_by(s, ["H + 2 >= 3", "not ((H + 2 - 3) // 2 + 1 >= 1)"]) == ("unsat", "quick")
    assert _answered_by(s, ["(H + 7) // 8 * 8 < H"]) == ("unsat", "quick")
    assert _answered_by(s, ["H % 4 == 3", "W == H // 4"]) == ("sat", "quick")


def test_a_definition_among_the_premises_is_taken_by_the_fresh_solver():
    """The incremental solver times out on this nonlinear fact; a solver given the whole query solves the
    equality first (no sympy involved: this Solver has no simplifier)."""
    s = Solver([Bounds(n, 1, 4096) for n in ("Ci", "Co", "PH", "PW")], timeout_ms=3000)
    assert _answered_by(s, ["Ci == Co * PH * PW", "Ci % (PH * PW) != 0"]) == ("unsat", "fresh")
    assert s.implies([E.parse("Ci == Co * PH * PW")], E.parse("Ci % (PH * PW) == 0")).outcome == Outcome.PROVED


@pytest.mark.slow
def test_one_question_shares_one_budget_and_unknown_is_never_a_pass(monkeypatch):
    """A fact z3 cannot settle (no cubes add up to a cube): every strategy of the question draws on the same
    timeout, and the answer is UNKNOWN. The budget is read through the checks' own timeouts, not the clock."""
    from shapecheck.logic import solver as S

    given: list[int] = []
    real = S._Session._check

    def check(self, s, slice_ms=None):
        given.append(self._left_ms() if slice_ms is None else min(self._left_ms(), slice_ms))
        return real(self, s, slice_ms)

    monkeypatch.setattr(S._Session, "_check", check)
    s = Solver([Bounds(n, 1, 10**6) for n in "abc"], timeout_ms=600)
    r = s.implies([], E.parse("a * a * a + b * b * b != c * c * c"))
    assert r.outcome == Outcome.UNKNOWN and r.reason
    assert len(given) == 3 and sum(given) <= 600 + 50  # quick, fresh, general; the last one gets what is left
    assert given[0] <= 100 and given[1] <= 120


@pytest.mark.slow
def test_a_cheap_unknown_is_not_cached_as_the_answer():
    from shapecheck.logic.solver import CHEAP, CachedSolver

    s = CachedSolver([Bounds(n, 1, 10**6) for n in "abc"], timeout_ms=400)
    q = [E.parse("a * a * a + b * b * b == c * c * c")]
    assert s._satisfiable(q, CHEAP).sat is Sat.UNKNOWN
    before = s.queries
    assert s._satisfiable(q, ("general",)).sat is Sat.UNKNOWN and s.queries == before + 1  # asked again
    assert s.satisfiable(q).sat is Sat.UNKNOWN and s.queries == before + 1  # the general unknown is kept


def test_spellings_of_one_size_are_proved_without_asking_z3():
    s = Solver([Bounds("H", 1, 4096), Bounds("W", 1, 4096)])
    r = s.implies([E.parse("H >= 3")], E.parse("(H - 3) // 2 + 1 == -((2 - H) // 2)"))
    assert r.outcome == Outcome.PROVED and s.queries == 0
    assert s.satisfiable([E.parse("W >= 1"), E.parse("2 * H == 3")]).sat is Sat.UNSAT and s.queries == 0
    assert s.implies([], E.parse("(H - 3) // 2 + 1 == (H - 2) // 2")).outcome == Outcome.REFUTED  # not one size
    assert s.queries > 0


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(k=st.integers(1, 9), lo=st.integers(1, 50), span=st.integers(0, 200))
def test_a_cached_extreme_is_the_extreme_and_asks_z3_once(k, lo, span):
    """export's Dim ranges ask every case for each dim's least and greatest value over its domain, and the
    domain repeats across cases: the cache answers the repeat without z3, with the plain solver's value."""
    from shapecheck.logic.solver import CachedSolver

    dims = [Bounds("a", lo, lo + span), Bounds("b", 1, 10**6)]
    conds = [E.parse(f"a % {k} == 0"), E.parse("b >= a")]
    plain, cached = Solver(dims), CachedSolver(dims)
    for name in "ab":
        for lowest in (True, False):
            want = plain.extreme(conds, name, lowest)
            assert cached.extreme(conds, name, lowest) == want
            before = cached.queries
            assert cached.extreme(list(conds), name, lowest) == want
            assert cached.queries == before or want is None  # no answer (an empty domain) is asked again
    empty = not any(v % k == 0 for v in range(lo, lo + span + 1))
    assert (plain.extreme(conds, "a", True) is None) == empty
    if not empty:
        assert plain.extreme(conds, "a", True) == next(v for v in range(lo, lo + span + 1) if v % k == 0)


def test_each_session_has_a_z3_context_of_its_own():
    """z3's global context made a session's search depend on the terms earlier sessions had made (a nonlinear
    domain's probe ran to its timeout on the second verify in one process: bench/bench_repeat.py)."""
    import z3

    dims = [Bounds("Ci", 1, 2**31 - 1), Bounds("Co", 1, 2**31 - 1), Bounds("P", 1, 64)]
    a, b = Solver(dims), Solver(dims)
    assert a.ctx is not b.ctx and z3.main_ctx() not in (a.ctx, b.ctx)
    assert all(v.ctx is a.ctx for v in a.vars.values())
    domain = E.Cmp("==", E.Var("Ci"), E.Arith("*", E.Var("Co"), E.Var("P")))
    # every kind of node converts in the session's context (an And of constants, a boolean and an int constant)
    assert a.implies([domain, E.And((E.TRUE, E.TRUE))], E.Cmp(">=", E.Var("Ci"), E.Var("Co"))).outcome is Outcome.PROVED
    assert b.extreme([domain, E.Cmp("==", E.Var("P"), E.Const(3))], "Ci", lowest=True) == 3
    assert a.satisfiable([domain, E.Cmp("==", E.Var("Ci"), E.Const(7)), E.Cmp(">", E.Var("P"), E.Const(1))]).model == \
        {"Ci": 7, "Co": 1, "P": 7}


def test_export_example_sizes_keep_an_input_formula_apart_from_the_dims(tmp_path):
    """hunt 59: _fft_c2r's input ``(B, L // 2 + 1)`` got the example B = 2, L = 3, where the formula equals B, and
    --confirm-export quoted export's "B and self_size1 must always be equal", an artifact of the example."""
    from shapecheck.contract.load import load_contract
    from shapecheck.prove.export import equal_classes, example_sizes
    from shapecheck.prove.verify import make_solver

    path = tmp_path / "c.toml"
    path.write_text('schema = 1\nop = "aten::neg"\n\n[dims]\nB = { min = 1, max = 64 }\nL = { min = 1, max = 64 }\n\n'
                    '[[args]]\nname = "self"\nkind = "tensor"\ndtype = "float32"\nshape = "(B, L // 2 + 1)"\n\n'
                    '[[paths]]\nid = "p"\nwhen = "true"\noutputs = ["(B, L // 2 + 1)"]\n')
    contract = load_contract(str(path))
    solver = make_solver(contract, 2000)
    (case,) = contract.cases()
    ex = example_sizes(case, solver, equal_classes(case, solver))
    assert ex is not None and ex["B"] >= 2 and ex["L"] // 2 + 1 >= 2
    assert len({ex["B"], ex["L"], ex["L"] // 2 + 1}) == 3, ex
