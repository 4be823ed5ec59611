"""--confirm-export's "the program kept the guard" names the guard whose check the exported program raised: the
point on a guard's other side keeps every other guard finding on the example's side (hunt 53: the program's
``A == C`` check, raised at A = B = C = 2, was quoted as the kept ``B // 2 + 1 == A``, which the program does not
keep)."""

from __future__ import annotations

from shapecheck.findings import Finding
from shapecheck.logic import expr as E
from shapecheck.rules import RuleCode


def _guard(text):
    return Finding(code=RuleCode.GUARD_IN_TORCH_HELPER, case="", expr=text, counterexample={}, message="",
                   node=E.parse(text), dims=tuple(sorted(E.free_names(E.parse(text)))))


def test_a_kept_guard_is_credited_only_where_its_own_other_side_raises(tmp_path):
    from shapecheck.contract.load import load_contract
    from shapecheck.logic.solver import Bounds, Solver
    from shapecheck.prove.export_why import _kept_as_runtime_check, _pins

    path = tmp_path / "abs.toml"
    path.write_text('''schema = 1
op = "aten::abs"
[dims]
A = { min = 1, max = 64 }
B = { min = 1, max = 64 }
C = { min = 1, max = 64 }
[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(A, B, C)"
[[paths]]
id = "p"
when = "true"
outputs = ["(A, B, C)"]
''', encoding="utf-8")
    contract = load_contract(path)
    case = next(iter(contract.cases()))
    solver = Solver([Bounds(d, 1, 64) for d in "ABC"])
    ge2 = [E.Cmp(">=", E.Var(d), E.Const(2)) for d in "ABC"]
    kept, not_kept = _guard("A != C"), _guard("B // 2 + 1 != A")
    example = {"A": 2, "B": 3, "C": 4}  # both hold there

    def run_at(point):  # the exported program keeps A != C alone
        return "AssertionError: Guard failed: size()[0] != size()[2]" if point["A"] == point["C"] else ""

    found = [kept, not_kept]
    assert "Guard failed" in _kept_as_runtime_check(case, kept, solver, ge2, run_at, example,
                                                    _pins(kept, found, example))
    assert _kept_as_runtime_check(case, not_kept, solver, ge2, run_at, example, _pins(not_kept, found, example)) == ""
