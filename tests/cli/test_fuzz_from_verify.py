"""fuzz op --from-verify reads back a verify report: one of another op, a case the contract lacks, or a point
outside the dims' ranges (an edited or stale report) is bad input naming the file and key, never examples
dropped in silence."""

from __future__ import annotations

import json

import pytest

from shapecheck.contract.find import shipped_contracts_dir
from tests.conftest import invoke

CONTRACT = str(shipped_contracts_dir() / "aten" / "index_select.toml")


def _report(tmp_path, op="aten::index_select", case="rank=1,dim=0,index_rank=0,index_dtype=int64", point=None):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"op": op, "verdict": "fail", "violations": [
        {"code": "SC002", "case": case, "counterexample": point if point is not None else {"N": 2}}]}))
    return path


@pytest.mark.parametrize("kwargs, key", [
    ({"op": "aten::mm"}, "op: the report is of 'aten::mm'"),
    ({"case": "rank=7"}, "violations[0].case: 'rank=7' is not a case of the contract"),
    ({"point": {"N": -5}}, "violations[0].counterexample.N: -5 is outside the contract's range"),
    ({"point": {"N": 1.5}}, "a size must be an integer, not 1.5"),
    ({"point": {"N": 2, "Q": 3}}, "violations[0].counterexample.Q: not a dim of the contract"),
])
def test_a_report_of_another_op_case_or_range_is_bad_input(tmp_path, kwargs, key):
    path = _report(tmp_path, **kwargs)
    res = invoke("fuzz", "op", "aten::index_select", "--contract", CONTRACT, "--from-verify", path, "--examples", "1")
    assert res.returncode == 2, (res.stdout[-1000:], res.stderr)
    assert key in res.stderr and str(path) in res.stderr and "Traceback" not in res.stderr


def test_a_report_of_this_contract_is_taken(tmp_path):
    path = _report(tmp_path)
    res = invoke("fuzz", "op", "aten::index_select", "--contract", CONTRACT, "--from-verify", path, "--examples", "1")
    assert res.returncode == 0, (res.stdout[-1000:], res.stderr)
