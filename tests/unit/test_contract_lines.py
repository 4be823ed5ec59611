"""contract.lines: the line of each table of an array of tables, read once at load and carried by the loaded
paths, regions and suppressions (no report reads the contract file again)."""

from __future__ import annotations

from shapecheck.contract.lines import line_of, table_lines
from shapecheck.findings import PathId

TEXT = '''\
[domain]
n = { min = 1, max = 8 }

[[paths]]
doc = """a multi-line string
[[paths]]
id = "not a key"
"""
id = "first"
when = "n > 1"

[[paths.outputs]]
shape = "(n,)"

[[paths]]
# no id key: the header's line
when = "n == 1"

[[suppress]]
rule = "SC001"
reason = "known"

[other]
id = "belongs to no array"
'''


def test_each_table_has_the_line_of_its_id_key_or_its_header():
    lines = table_lines(TEXT)
    assert lines == {"paths": [9, 15], "suppress": [19]}


def test_a_count_that_differs_from_the_scan_gives_no_line():
    lines = table_lines(TEXT)
    assert line_of(lines, "paths", 1, 2) == 15
    assert line_of(lines, "paths", 0, 3) == 0  # e.g. tables written inline: positions unknown
    assert line_of(lines, "rejects", 0, 1) == 0


def test_the_loaded_paths_and_suppressions_carry_their_lines():
    from shapecheck.contract.find import shipped_contracts_dir
    from shapecheck.contract.load import load_contract
    from shapecheck.contract.suppressions import matches
    from shapecheck.findings import Finding
    from shapecheck.rules import RuleCode

    shipped = shipped_contracts_dir() / "aten" / "index_select.toml"
    text = shipped.read_text(encoding="utf-8")
    contract = load_contract(shipped)
    lines = text.splitlines()
    assert contract.paths
    for p in contract.paths:
        assert p.line > 0 and f'"{p.id}"' in lines[p.line - 1]
        assert p.pid == PathId(p.id, p.era) and p.pid.line == p.line
    f = Finding(code=RuleCode.KERNEL_ERROR, case="", path=PathId("x", "new"), expr="e", counterexample={}, message="m")
    assert str(f.path) == "x@new" and f.to_json()["path"] == "x@new"
    assert PathId.parse("x@new") == f.path and str(PathId.parse("x")) == "x"
    s = type("S", (), {"rule": RuleCode.KERNEL_ERROR, "case": "", "path": "x", "dims": ()})()
    assert matches(s, f)  # a path named without its era covers it in every era
