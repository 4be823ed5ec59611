"""A finding's in-process fields (``TRANSIENT``: expression trees, the replay's region of an SC002) are never
written: a field added so (``region``) made every verify report with an SC002 an internal error in JSON."""

from __future__ import annotations

import dataclasses
import json

from shapecheck.codec import is_transient
from shapecheck.findings import Finding
from shapecheck.logic import expr as E
from shapecheck.rules import RuleCode


def test_no_in_process_field_of_a_finding_is_written():
    n = E.parse("N + 1")
    v = Finding(code=RuleCode.OUTPUT_SHAPE_MISMATCH, case="c", expr="output 0 = (N + 1,)", counterexample={"N": 1},
                message="m", node=n, expected=n, fallback=n, region=(E.parse("N > 1"), "output 0", n, ""))
    doc = json.loads(json.dumps(v.to_json()))
    transient = {f.name for f in dataclasses.fields(Finding) if is_transient(f)}
    assert transient >= {"node", "expected", "fallback", "region"} and not transient & doc.keys()
