"""``prove.layouts_seen``: an SC018 of the symbolic trace that the kernel on concrete sizes confirms only at another
point moves there, and its message names both points, so that the counterexample shown and the words agree (hunt 32
L2: "at the counterexample the kernel keeps the layout" beside a counterexample where it did not)."""

from __future__ import annotations

import types

from shapecheck.findings import Finding, PathId
from shapecheck.logic import expr as E
from shapecheck.prove import layouts_seen as LS
from shapecheck.rules import RuleCode


def _case():
    spec = types.SimpleNamespace(strides=("contiguous",))
    path = types.SimpleNamespace(pid=PathId("p"), specs=[spec], when=E.TRUE)
    return types.SimpleNamespace(paths=[path], dims=[types.SimpleNamespace(name=n) for n in ("C", "H")],
                                 point_dims=["C", "H"])


def _finding(point):
    return Finding(code=RuleCode.OUTPUT_LAYOUT_MISMATCH, case="c", path=PathId("p"), expr="output 0 strides",
                   counterexample=point, message="output 0's strides are not the contract's")


def test_a_finding_moved_to_the_point_the_kernel_breaks_names_the_traces_point_too(monkeypatch):
    trace_point, wide = {"C": 1, "H": 5}, {"C": 2, "H": 2}
    monkeypatch.setattr(LS, "_points", lambda case, when, cex, dims, solver: [trace_point, wide])
    monkeypatch.setattr(LS, "_strides_at", lambda kernel, case, j, point: ((point["H"], 1) if point is wide
                                                                             else (1, 1), 4))
    monkeypatch.setattr(LS, "strides_differ", lambda spec, strides, numel, point: None if point is trace_point
                        else (2, 1))
    out = LS._confirmed(None, _case(), _finding(trace_point), None)
    assert out.code is RuleCode.OUTPUT_LAYOUT_MISMATCH and out.counterexample == wide
    assert "at the trace's counterexample (C=1, H=5) the kernel on concrete sizes keeps the contract's layout" in \
        out.message and "at C=2, H=2, the counterexample shown, it returns strides (2, 1)" in out.message
    # a trace's point too large to run is said so, not said to keep the layout
    monkeypatch.setattr(LS, "_points", lambda case, when, cex, dims, solver: [wide])
    out = LS._confirmed(None, _case(), _finding({"C": 1, "H": 2 ** 40}), None)
    assert "is too large to run on concrete sizes" in out.message and "keeps" not in out.message
