"""``verify op OP --show-obligations`` (issue 21 item 3): each case's obligations are built as a list of typed
``Obligation`` records, then discharged, and the command prints them per case: what is proved, its premises,
the kernel line, the contract key and how each ended."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from tests.conftest import ROOT

EXAMPLES = "tests/golden/examples"


def verify(*args: str) -> tuple[int, str]:
    from shapecheck.cli.main import main

    out = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(["verify", "op", "aten::new_empty", "--contract", f"{EXAMPLES}/new_empty.toml", "-j", "1", *args])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    return code, out.getvalue()


@pytest.mark.slow
def test_obligations_are_listed_per_case_with_premises_line_and_status(monkeypatch):
    monkeypatch.chdir(ROOT)
    kernel = f"{EXAMPLES}/sc004_assert_narrows_range.py:kernel"
    code, out = verify("--meta", kernel, "--show-obligations", "--format", "json")
    assert code == 1
    [case] = json.loads(out)["cases"]
    obs = case["obligations"]
    by_kind = {o["kind"]: o for o in obs}
    assert set(by_kind) == {"assert", "output"}
    a = by_kind["assert"]
    assert a["what"] == "assert N <= 4096" and a["status"] == "refuted"
    assert a["line"].endswith("sc004_assert_narrows_range.py:6") and a["contract"] == "domain"
    o = by_kind["output"]
    assert o["what"] == "output 0 = (N,) on path only" and o["status"] == "proved"
    assert o["line"].endswith("sc004_assert_narrows_range.py:7")  # the return statement
    assert o["contract"] == "paths.only.outputs[0]"
    assert all(isinstance(p, str) for p in o["premises"])
    # the same obligations in text, after the findings
    code, text = verify("--meta", kernel, "--show-obligations")
    assert code == 1
    block = text[text.index("obligations of case dtype=float32 (2):"):]
    assert "[refuted] assert: assert N <= 4096" in block
    assert "kernel:   tests/golden/examples/sc004_assert_narrows_range.py:6    contract: domain" in block
    assert "[proved] output: output 0 = (N,) on path only" in block


@pytest.mark.slow
def test_without_the_option_nothing_is_listed(monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out = verify("--meta", f"{EXAMPLES}/sc004_assert_narrows_range.py:kernel", "--format", "json")
    assert code == 1
    assert "obligations" not in json.loads(out)["cases"][0]


def test_a_leaf_s_obligations_are_built_before_any_is_discharged():
    """The list is made from the trace alone (no solver): asserts, range refinements, replacements, in the
    order they are discharged, each with its kernel line and contract key."""
    from shapecheck.contract.load import load_contract
    from shapecheck.logic import expr as E
    from shapecheck.prove.obligations import Kind, Leaf, leaf_obligation_list
    from shapecheck.trace.run import Assert, Finished

    contract = load_contract(ROOT / EXAMPLES / "new_empty.toml")
    [case] = list(contract.cases())
    n = E.Var("N")
    check = E.Cmp("<=", n, E.Const(4096))
    trace = Finished(asserts=(Assert(check, "N <= 4096", None),), refinements=(("N", 1, 64),),
                     replacements=(("N", E.Const(8), "8"),))
    obs = leaf_obligation_list(case, Leaf([E.Cmp(">", n, E.Const(2))], trace))
    assert [o.kind for o in obs] == [Kind.ASSERT, Kind.RANGE, Kind.REPLACEMENT]
    assert [o.what for o in obs] == ["assert N <= 4096", "range N >= 1 and N <= 64 (refined by tracing)",
                                     "N == 8 (replaced by tracing)"]
    assert [o.key for o in obs] == ["domain", "dims.N", "dims.N"]
    assert all(o.premises[-1] == E.Cmp(">", n, E.Const(2)) for o in obs)


@pytest.mark.slow
def test_a_guard_on_a_dynamic_dim_is_an_obligation_refuted_where_exploration_splits_it(monkeypatch):
    """The guard ``N <= 8`` must be decided by its region (the contract is guard-free): exploration finds
    points on both sides, so the obligation is refuted (SC001), and each side's output obligation carries
    the side as its premise."""
    monkeypatch.chdir(ROOT)
    code, out = verify("--meta", f"{EXAMPLES}/sc001_guard_on_dynamic_dim.py:kernel", "--show-obligations",
                       "--format", "json")
    assert code == 1
    [case] = json.loads(out)["cases"]
    guards = [o for o in case["obligations"] if o["kind"] == "guard"]
    assert [(g["what"], g["status"], g["contract"]) for g in guards] == [
        ("guard N <= 8 is decided by the region", "refuted", "dims.N")]
    assert guards[0]["line"].endswith("sc001_guard_on_dynamic_dim.py:6")
    outputs = [o for o in case["obligations"] if o["kind"] == "output"]
    assert sorted(tuple(o["premises"]) for o in outputs) == [("N <= 8",), ("N > 8",)]
    assert {o["status"] for o in outputs} == {"proved"}


@pytest.mark.slow
def test_a_value_the_kernel_needs_is_an_obligation(monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out = verify("--meta", f"{EXAMPLES}/sc003_value_specialization.py:kernel", "--show-obligations",
                       "--format", "json")
    assert code == 1
    [case] = json.loads(out)["cases"]
    [value] = [o for o in case["obligations"] if o["kind"] == "value"]
    assert value["status"] == "refuted" and value["contract"] == "dims.N"
    assert value["what"] == "the value of N is one constant on the region (1 at the least point)"


@pytest.mark.slow
def test_a_guard_the_region_decides_is_a_proved_obligation(monkeypatch, tmp_path):
    """Under the region N % 4 == 0 the kernel's second guard N % 2 == 0 is true everywhere (torch's value
    ranges do not see it, z3 does): proved, not a finding; the first guard is refuted (SC001)."""
    monkeypatch.chdir(ROOT)
    k = tmp_path / "decided.py"
    k.write_text("def kernel(self, size):\n"
                 "    if size[0] % 4 == 0:\n"
                 "        if size[0] % 2 == 0:\n"
                 "            return self.new_empty(size)\n"
                 "        return self.new_empty([1])\n"
                 "    return self.new_empty(size)\n")
    code, out = verify("--meta", f"{k}:kernel", "--show-obligations", "--format", "json")
    assert code == 1
    [case] = json.loads(out)["cases"]
    guards = [(o["what"], o["status"], o["premises"]) for o in case["obligations"] if o["kind"] == "guard"]
    assert guards == [("guard N % 4 == 0 is decided by the region", "refuted", []),
                      ("guard N % 2 == 0 is decided by the region (it is true there)", "proved", ["N % 4 == 0"])]



@pytest.mark.slow
def test_a_fallback_that_sizes_from_2_settle_is_listed_proved_in_a_passing_case(monkeypatch):
    """hunt 53: max_unpool2d's ``C == 0`` (asked through guard_or_false at the decomposition's line), both sides
    of which are explored and which export's sizes from 2 settle, was listed ``[refuted]`` in a case that passes
    with no finding."""
    from shapecheck.cli.main import main

    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), pytest.raises(SystemExit) as e:
        main(["verify", "op", "aten::max_unpool2d", "--contract", "tests/kernels/unpool_from_zero.toml", "-j", "1",
              "--case", "dtype=float32,rank=3", "--show-obligations", "--format", "json", "--no-cache"])
    assert e.value.code == 0, out.getvalue()
    [case] = json.loads(out.getvalue())["cases"]
    guards = [(o["what"], o["status"]) for o in case["obligations"] if o["kind"] == "guard"]
    assert guards and all(status == "proved" for _, status in guards), guards
    assert any(what.startswith("guard C == 0: both sides explored") for what, _ in guards), guards
