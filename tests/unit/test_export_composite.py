"""An input size over several dims (``S1 + S2``, ``C * r * r``) gets a Dim of its own in the export-style run
(SC022) and in --confirm-export, as a user gives such an axis to torch.export; the kernel's guards relate it to
the other dims. Held at the example's value, such a size fixed the dims' sum, and a false SC022 followed with a
counterexample the kernel never guards (hunt 33: split_with_sizes, view)."""

import pytest

from shapecheck.contract.load import load_contract
from shapecheck.findings import Verdict
from shapecheck.logic import expr as E
from shapecheck.prove import composite as X
from shapecheck.prove.verify import Options, make_solver, verify_op
from shapecheck.rules import RuleCode

SPLIT = '''schema = 1
op = "aten::split_with_sizes"
[dims]
S1 = { min = 1 }
S2 = { min = 1 }
A1 = { min = 1 }
[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(S1 + S2, A1)"
[[args]]
name = "split_sizes"
kind = "ints"
value = ["S1", "S2"]
[[args]]
name = "dim"
kind = "int"
value = 0
[[paths]]
id = "only"
when = "true"
outputs = ["(S1, A1)", "(S2, A1)"]
'''

VIEW = '''schema = 1
op = "aten::view"
[dims]
N = { min = 1 }
C = { min = 1, max = 65536 }
r = { min = 1, max = 4096 }
H = { min = 1 }
W = { min = 1 }
[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(N, C * r * r, H, W)"
[[args]]
name = "size"
kind = "ints"
value = "(N, C, r, r, H, W)"
[[paths]]
id = "only"
when = "true"
outputs = ["(N, C, r, r, H, W)"]
'''

NARROW = '''schema = 1
op = "aten::narrow"
[dims]
S = { min = 1 }
T = { min = 1 }
A1 = { min = 1 }
[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(S + T, A1)"
[[args]]
name = "dim"
kind = "int"
value = 0
[[args]]
name = "start"
kind = "int"
value = "S"
[[args]]
name = "length"
kind = "int"
value = "T"
[[paths]]
id = "only"
when = "true"
outputs = ["(T, A1)"]
'''


def test_an_axis_of_several_dims_gets_a_dim_from_its_least_value(tmp_path):
    path = tmp_path / "narrow.toml"
    path.write_text(NARROW)
    contract = load_contract(path)
    [case] = list(contract.cases())
    solver = make_solver(contract, 10_000)
    self_arg = next(a for a in case.args if a.name == "self")
    bounds = X.composite_bounds(case, solver, {"S", "T", "A1"})
    big = 2 * (2**31 - 1)  # S + T at the dims' greatest
    assert X.composite_axes(self_arg, {"S": 2, "T": 3, "A1": 4}, {"S", "T", "A1"}, {"S", "T", "A1"}, bounds) \
        == {0: ("self_size0", 4, big)}  # S + T with S, T from 2: a Dim from 2 fails export on start + length <= size
    assert X.composite_axes(self_arg, {"S": 2, "T": 3, "A1": 4}, {"A1"}, set(), bounds) == {}  # S, T static
    assert X.composite_axes(self_arg, {"S": 2, "T": 3, "A1": 4}, {"S", "T"}, {"self_size0"}) \
        == {0: ("self_size0_", 2, X.COMPOSITE_MAX)}  # never a contract dim's name
    named: dict = {}
    X.composite_axes(self_arg, {"S": 2, "T": 3, "A1": 4}, {"S", "T"}, set(), None, named)
    assert X.composite_axes(self_arg, {"S": 2, "T": 3, "A1": 4}, {"S", "T"}, set(), None, named)[0][0] == "self_size0"
    assert list(named) == ["S + T"]  # the same size on another input of the call: the same Dim
    assert E.to_text(self_arg.shape.items[0]) == "S + T"


@pytest.mark.slow
@pytest.mark.parametrize("op, text", [("aten::split_with_sizes", SPLIT), ("aten::view", VIEW),
                                      ("aten::narrow", NARROW)])
def test_an_axis_of_several_dims_passes_where_strict_export_with_its_own_dim_succeeds(tmp_path, op, text):
    path = tmp_path / "c.toml"
    path.write_text(text)
    r = verify_op(op, contract=str(path), options=Options(jobs=1, confirm_export=True))
    assert r.verdict == Verdict.PASS, [(v.code, v.expr) for v in r.violations]
    assert not any(v.code is RuleCode.GUARD_IN_TORCH_HELPER for v in r.violations)
    [c] = r.cases
    assert c.export.ran and c.export.succeeded and c.export.agrees, c.export.message


def test_an_axis_linear_in_one_dynamic_dim_once_static_dims_are_bound_keeps_no_dim_of_its_own(tmp_path):
    """``C * r`` with r static is ``2 * C``: a Dim of its own there fails strict export ("F = 2*C", checked), so
    it is left to the derived-Dim path, as before."""
    path = tmp_path / "c.toml"
    path.write_text(VIEW.replace('r = { min = 1, max = 4096 }', 'r = 2').replace("C * r * r", "C * r"))
    contract = load_contract(path)
    [case] = list(contract.cases())
    self_arg = next(a for a in case.args if a.name == "self")
    sizes = {"N": 2, "C": 3, "r": 2, "H": 5, "W": 6}
    assert X.composite_axes(self_arg, sizes, {"N", "C", "H", "W"}, set()) == {}
    assert X.composite_axes(self_arg, sizes, {"N", "C", "r", "H", "W"}, set())[1][:2] == ("self_size1", 2)


ADD = SPLIT.split("[[args]]")[0].replace('op = "aten::split_with_sizes"', 'op = "aten::add.Tensor"') + '''[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(S1 + S2, A1)"
[[args]]
name = "other"
kind = "tensor"
dtype = "float32"
shape = "(S1 + S2, A1)"
[[paths]]
id = "only"
when = "true"
outputs = ["(S1 + S2, A1)"]
'''

CAT_AT_MOST_4 = '''schema = 1
op = "aten::cat"
[dims]
S1 = { min = 1, max = 4 }
S2 = { min = 1, max = 4 }
T = { min = 1 }
C = { min = 1 }
[[args]]
name = "tensors"
kind = "tensors"
length = 2
shapes = ["(S1 + S2, C)", "(T, C)"]
dtype = "float32"
[[args]]
name = "dim"
kind = "int"
value = 0
[[paths]]
id = "only"
when = "true"
outputs = ["(S1 + S2 + T, C)"]
'''

NEVER_TAKEN = '''
def cat_branch(tensors, dim=0):
    a, b = tensors
    if a.shape[0] > 8:  # S1 + S2 is at most 8: never taken
        return a.new_empty((a.shape[0] + b.shape[0] + 1, a.shape[1]))
    return a.new_empty((a.shape[0] + b.shape[0], a.shape[1]))
'''


@pytest.mark.slow
@pytest.mark.parametrize("op, text, meta", [("aten::add.Tensor", ADD, None),
                                            ("aten::cat", CAT_AT_MOST_4, "cat_branch")])
def test_one_dim_per_composite_size_with_its_greatest_value_as_a_user_gives_it(tmp_path, op, text, meta):
    """hunt 35: the same size on two inputs had two Dims (export: "other_size0 = self_size0"), and a composite
    Dim no max (export refused a branch on S1 + S2 > 8 that no input of S1, S2 <= 4 takes)."""
    path = tmp_path / "c.toml"
    path.write_text(text)
    kernel = None
    if meta:
        (tmp_path / "k.py").write_text(NEVER_TAKEN)
        kernel = f"{tmp_path / 'k.py'}:{meta}"
    r = verify_op(op, contract=str(path), meta=kernel, options=Options(jobs=1, confirm_export=True))
    [c] = r.cases
    assert r.verdict == Verdict.PASS and c.export.succeeded and c.export.agrees, c.export.message


@pytest.mark.slow
def test_a_relation_no_dim_can_state_is_explained(tmp_path):
    """hunt 35: view from (H * H, A): export relates the size's own Dim by self_size0 = H**2, which no Dim states;
    the pass stands, explained (it was 'not explained', exit 3)."""
    path = tmp_path / "c.toml"
    path.write_text(VIEW.replace("C * r * r", "C * C").replace('value = "(N, C, r, r, H, W)"', 'value = "(N, C, C, H, W)"')
                    .replace('outputs = ["(N, C, r, r, H, W)"]', 'outputs = ["(N, C, C, H, W)"]'))
    r = verify_op("aten::view", contract=str(path), options=Options(jobs=1, confirm_export=True))
    [c] = r.cases
    assert r.verdict == Verdict.PASS and c.export.succeeded is False
    assert c.export.explanation.startswith("export cannot express this contract") and "C**2" in c.export.explanation
