"""Strategies built from contracts: every example is inside the contract's domain (checked with the contract's
own predicate, bound afresh), paths' preconditions hold when asked for, boundary values are drawn, sizes stay
within the bound, and Hypothesis's health checks stay quiet (none is suppressed here)."""

import os
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest
import torch
from hypothesis import given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from shapecheck.contract.load import load_contract
from shapecheck.contract.model import bind_case
from shapecheck.logic import expr as E
from shapecheck.search.strategies import (
    DEFAULT_MAX_ELEMENTS,
    cases,
    compiled,
    fast_holds,
    holds,
    inputs,
    largest_tensor,
    parse_example,
)
from tests.conftest import SDPA_CONTRACT

SDPA = load_contract(SDPA_CONTRACT)

# A contract for another op, written here so that nothing below depends on the SDPA contract's specifics.
TOY_TOML = """
schema = 1
op = "aten::mm"
[dims]
M = { min = 1, max = 100000 }
K = { min = 1, max = 100000 }
N = { min = 1, max = 100000 }
[choices]
dtype = ["float32", "bfloat16"]
[domain]
requires = ["K % 8 == 0", "N <= M"]
[[args]]
name = "self"
kind = "tensor"
dtype = "dtype"
shape = "(M, K)"
[[args]]
name = "mat2"
kind = "tensor"
dtype = "dtype"
shape = "(K, N)"
[[paths]]
id = "small"
when = "M <= 16 and K <= 96"
outputs = ["(M, N)"]
[[paths]]
id = "large"
when = "not (M <= 16 and K <= 96)"
outputs = ["(M, N)"]
"""


def toy_contract_file() -> Path:
    """One fixed path (the tests name it in replay commands), written atomically: pytest-xdist's workers import
    this module at once, and a reader must never see another worker's half-written file."""
    path = Path(tempfile.gettempdir()) / "shapecheck-test-toy-mm.toml"
    if not path.exists() or path.read_text() != TOY_TOML:
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".toml", delete=False) as f:
            f.write(TOY_TOML)
        os.replace(f.name, path)
    return path


TOY = load_contract(toy_contract_file())


def assert_in_domain(contract, ex, when=None):
    """The contract's own predicate, with the case bound afresh from its choices (not the strategy's copy)."""
    case = bind_case(contract, ex.case.values)
    assert case is not None, f"{ex} is an excluded case"
    values = ex.values
    for d in case.dims:
        dim = contract.dim(d.name)
        assert dim.min <= values[d.name] <= dim.max, ex
    assert E.evaluate(case.domain, values) is True, ex
    if when is not None:
        (path,) = [p for p in case.paths if f"{p.id}@{p.era}" == when]
        assert E.evaluate(path.when, values) is True, (ex, E.to_text(path.when))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(cases(SDPA))
def test_sdpa_examples_satisfy_the_contract_domain(ex):
    assert_in_domain(SDPA, ex)
    assert largest_tensor(ex) <= DEFAULT_MAX_ELEMENTS


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(cases(TOY, max_elements=4096, max_side=32))
def test_toy_examples_satisfy_the_contract_domain(ex):
    assert_in_domain(TOY, ex)
    v = ex.values
    assert v["K"] % 8 == 0 and v["N"] <= v["M"]
    assert v["M"] * v["K"] <= 4096 and v["K"] * v["N"] <= 4096 and v["M"] * v["N"] <= 4096
    assert max(v.values()) <= 97  # max_side, raised to just above the constants 16 and 96


@pytest.mark.slow
@pytest.mark.parametrize("path", ["vector-2pass@2026-03", "vector-2pass@current", "general-chunked@current",
                                  "mpp@current", "vector-1pass@current"])
def test_examples_aimed_at_a_path_satisfy_its_precondition(path):
    seen_cases = set()

    @settings(max_examples=40, deadline=None)
    @given(cases(SDPA, path=path))
    def check(ex):
        assert_in_domain(SDPA, ex, when=path)
        assert largest_tensor(ex) <= DEFAULT_MAX_ELEMENTS
        seen_cases.add(ex.case.id)

    check()
    assert len(seen_cases) > 1  # not one case over and over


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(cases(TOY, path="small", max_elements=10_000))
def test_toy_path_examples_satisfy_its_precondition(ex):
    assert_in_domain(TOY, ex, when="small@default")


@pytest.mark.slow
def test_sizes_lean_towards_one_range_ends_and_the_constants_of_conditions():
    from shapecheck.search.strategies import Plan, SizeBound

    # the mechanism, deterministically: every case's per-dim preferred values hold 1 and each constant's
    # neighbourhood from the domain and the paths' conditions
    plan = Plan(SDPA, SizeBound())
    preferred = defaultdict(set)
    for i in range(len(plan.case_list)):
        for name, values in plan.case_plan(i).preferred.items():
            preferred[name].update(values)
    assert {1, 8, 9} <= preferred["L"] and {3068, 3069} <= preferred["L"]
    assert {1023, 1024, 4095, 4096} <= preferred["S"] and {64, 96, 128, 256} <= preferred["E"]
    assert all(1 in values for values in preferred.values())

    # and draws reach them (which neighbour of a constant appears depends on Hypothesis's own choices)
    seen = defaultdict(set)

    @seed(0)
    @settings(max_examples=400, database=None, deadline=None)
    @given(cases(SDPA))
    def collect(ex):
        for k, v in ex.dims:
            seen[k].add(v)

    collect()
    hits = sum(bool(seen[k] & ({v for v in preferred[k] if v > 2})) for k in ("L", "S", "E"))
    assert hits >= 2, dict(seen)


@pytest.mark.slow
def test_guard_constants_from_verify_are_drawn():
    seen = set()

    @seed(1)
    @settings(max_examples=150, database=None, deadline=None)
    @given(cases(TOY, constants=["N <= 40", "output 0 = (M, N)"]))
    def collect(ex):
        seen.add(ex.values["N"])

    collect()
    assert {39, 40, 41} & seen


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(inputs(SDPA))
def test_inputs_are_tensors_of_the_contract_shapes_and_dtypes(inp):
    ex = inp.example
    for a in ex.case.args:
        value = inp.arguments[a.name]
        if not a.present or a.kind == "none":
            assert value is None
        elif a.kind == "tensor":
            assert isinstance(value, torch.Tensor) and value.device.type == "cpu"
            assert tuple(value.shape) == E.evaluate(a.shape, ex.values)
            assert str(value.dtype) == f"torch.{a.dtype}"
        else:
            assert value == a.value


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(cases(SDPA), st.randoms(use_true_random=False))
def test_compiled_expressions_agree_with_expr_evaluate(ex, rnd):
    # at the example and at an arbitrary point, which need not be in the domain
    points = [ex.values, {d: rnd.choice([1, 2, 7, 8, 9, 1023, 1024, 4096, rnd.randint(1, 300)]) for d in ex.values}]
    for values in points:
        for p in ex.case.paths:
            assert fast_holds(p.when, values) == holds(p.when, values)
            for o in p.outputs:
                if o is not None:
                    assert compiled(o)(values) == E.evaluate(o, values)
        assert fast_holds(ex.case.domain, values) == holds(ex.case.domain, values)


@settings(max_examples=30, deadline=None)
@given(cases(SDPA))
def test_example_text_reads_back(ex):
    back = parse_example(SDPA, ex.text())
    assert back.case.id == ex.case.id and back.dims == ex.dims and back.seed == ex.seed


def test_parse_example_rejects_points_outside_the_domain_and_unknown_cases():
    case = "rank=4,mask=none,is_causal=false,dtype=float32,enable_gqa=false"
    ok = parse_example(SDPA, f"{case};B=1,H=2,Hk=2,L=3,S=4,E=5,Ev=6;seed=7")
    assert ok.values["Ev"] == 6 and ok.seed == 7
    with pytest.raises(ValueError, match="domain"):
        parse_example(SDPA, f"{case};B=1,H=2,Hk=1,L=3,S=4,E=5,Ev=6")  # Hk == H without enable_gqa
    with pytest.raises(ValueError, match="missing"):
        parse_example(SDPA, f"{case};B=1,H=2,Hk=2,L=3,S=4,E=5")
    with pytest.raises(ValueError, match="cases"):
        parse_example(SDPA, "rank=4;B=1,H=2,Hk=2,L=3,S=4,E=5,Ev=6")  # many cases match
    with pytest.raises(ValueError, match="outside its range"):
        parse_example(SDPA, f"{case};B=0,H=2,Hk=2,L=3,S=4,E=5,Ev=6")
    # a dim (or a choice) given twice is refused, not read as its last value
    with pytest.raises(ValueError, match="L given twice"):
        parse_example(SDPA, f"{case};B=1,H=2,Hk=2,L=3,S=4,E=5,Ev=6,L=9")
    with pytest.raises(ValueError, match="rank given twice"):
        parse_example(SDPA, f"rank=4,{case};B=1,H=2,Hk=2,L=3,S=4,E=5,Ev=6")


def test_bad_arguments_raise_invalid_argument():
    with pytest.raises(InvalidArgument, match="no such path"):
        cases(SDPA, path="decode")
    with pytest.raises(InvalidArgument, match="several eras"):
        cases(SDPA, path="vector-1pass")
    with pytest.raises(InvalidArgument, match="max_elements"):
        cases(SDPA, max_elements=0)

    # a path out of reach within the bound is an error, not an empty strategy
    @settings(max_examples=5, deadline=None)
    @given(cases(SDPA, path="vector-2pass@2026-03", max_elements=1000))
    def draw(ex):
        pass

    with pytest.raises(InvalidArgument, match="within max_elements=1000"):
        draw()
