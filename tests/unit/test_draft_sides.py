"""``contract draft`` traces both sides of a kernel's branches on its sizes (``audit/draft_sides.py``): a
guard_or_false that torch answered and went on (torch's broadcasting asks ``A0 == 1``), and a guard the sample
sizes decide. Each side becomes a path with its conditions, or one formula where z3 proves it equal to every
side's output (``max(A0, B0)``); a requires found on one side holds everywhere only where the other sides imply
it. The drafts of broadcasting ops verify on their own kernels as written."""

import tomllib

import pytest

from shapecheck.audit.draft_outputs import Traced
from shapecheck.audit.draft_sides import Leaf, _one_formula, _shared_requires
from shapecheck.audit.schema_draft import draft_contract
from shapecheck.contract.load import load_contract
from shapecheck.kernel.load import installed_kernel
from shapecheck.logic import expr as E
from shapecheck.prove.verify import Options, verify_contract

SKELETON = """schema = 1
op = "aten::add.Tensor"
[dims]
A0 = { min = 1 }
B0 = { min = 1 }
C0 = { min = 1 }
[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(A0,)"
[[args]]
name = "other"
kind = "tensor"
dtype = "float32"
shape = "(B0,)"
[[paths]]
id = "p"
when = "True"
outputs = ["(A0,)"]
"""


@pytest.fixture
def contract(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(SKELETON)
    return load_contract(path)


def _leaf(conds: list[str], shape: str, requires: tuple[str, ...] = ()) -> Leaf:
    t = Traced(outputs=[shape], tables=[{"dtype": "float32"}], requires=[(r, "why") for r in requires])
    return Leaf([E.parse(c) for c in conds], t)


def test_sides_whose_outputs_one_max_formula_gives_become_one_leaf(contract):
    leaves = [_leaf(["A0 != 1"], "(A0,)"), _leaf(["A0 == 1"], "(B0,)")]
    (one,) = _one_formula(leaves, contract, [E.parse("A0 == B0 or A0 == 1 or B0 == 1")])
    assert one.traced.outputs == ["(max(A0, B0),)"] and one.conds == []


def test_sides_no_formula_joins_stay_apart(contract):
    # without the broadcast relation, max(A0, B0) is not A0 where A0 != 1 (B0 may be larger): not proved
    leaves = [_leaf(["A0 != 1"], "(A0,)"), _leaf(["A0 == 1"], "(B0,)")]
    assert _one_formula(leaves, contract, []) == leaves
    # squeeze's sides differ in rank: never one formula
    ranks = [_leaf(["A0 != 1"], "(A0, B0)"), _leaf(["A0 == 1"], "(B0,)")]
    assert _one_formula(ranks, contract, []) == ranks


def test_a_requires_of_one_side_holds_everywhere_only_where_the_others_imply_it(contract):
    # where.self: B0 vs C0 is asked only where A0 == 1; where A0 != 1 the A-B and A-C relations imply it
    ab, ac, bc = "A0 == B0 or A0 == 1 or B0 == 1", "A0 == C0 or A0 == 1 or C0 == 1", "B0 == C0 or B0 == 1 or C0 == 1"
    leaves = [_leaf(["A0 != 1"], "(A0,)", (ab, ac)), _leaf(["A0 == 1"], "(B0,)", (bc,))]
    assert {r for r, _ in _shared_requires(leaves, contract)} == {ab, ac, bc}
    # a requires the other side neither states nor implies holds only on its own side
    odd = [_leaf(["A0 != 1"], "(A0,)", ("B0 <= 4",)), _leaf(["A0 == 1"], "(B0,)")]
    assert [r for r, _ in _shared_requires(odd, contract)] == ["A0 == 1 or B0 <= 4"]
    # one its own side's conditions say is no requires at all
    assert _shared_requires([_leaf(["A0 == 1"], "(B0,)", ("A0 == 1",)), _leaf(["A0 != 1"], "(A0,)")], contract) == []


@pytest.mark.slow
@pytest.mark.parametrize("op", ["aten::add.Tensor", "aten::maximum"])
def test_a_broadcasting_ops_draft_is_one_formula_and_verifies_as_written(tmp_path, op):
    text = draft_contract(op)
    data = tomllib.loads(text)
    assert [p["outputs"][0]["shape"] for p in data["paths"]] == ["(max(A0, B0), max(A1, B1))"], text
    path = tmp_path / "draft.toml"
    path.write_text(text)
    report = verify_contract(load_contract(path), installed_kernel(op), Options(jobs=1))
    assert report.verdict.value == "pass", [v.message for v in report.violations]


@pytest.mark.slow
def test_a_three_way_broadcast_states_every_pair():
    """where(cond, self, other): the sample side asks A-B and A-C; the side where A0 == 1 asks B-C, which the
    others imply where A0 != 1: the draft demands all three pairs (it used to miss B-C, and verify then found
    SC007 where cond has a 1 and self and other differ)."""
    text = draft_contract("aten::where.self")
    assert "--max-traces 512" in text  # verify's default of 64 traces stops short of its sides (it passes with 512)
    requires = tomllib.loads(text)["domain"]["requires"]
    for x, y in (("A", "B"), ("A", "C"), ("B", "C")):
        for d in "01":
            assert f"{x}{d} == {y}{d} or {x}{d} == 1 or {y}{d} == 1" in requires, requires
    assert not any(r.startswith("not ") for r in requires), requires


@pytest.mark.slow
def test_a_broadcast_relation_loses_the_side_the_kernel_refuses():
    """expand broadcasts a size 1 up, never a size down: its draft demanded ``A0 == size0 or A0 == 1 or
    size0 == 1``, which admits A0 = 2, size0 = 1, where both kernels raise. Each side is tried alone."""
    requires = tomllib.loads(draft_contract("aten::expand"))["domain"]["requires"]
    assert "A0 == size0 or A0 == 1" in requires and "A1 == size1 or A1 == 1" in requires, requires
    # add broadcasts either way: both sides stay
    requires = tomllib.loads(draft_contract("aten::add.Tensor"))["domain"]["requires"]
    assert "A0 == B0 or A0 == 1 or B0 == 1" in requires, requires
