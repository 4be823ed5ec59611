"""What a run costs beyond its traces, each piece tested where it can silently come back: a report whose
unpickling imports torch (the supervised child's result read in a parent that never imported it: about 0.9 s of
every isolated command), the first case run in this process while the workers trace the rest, and a stride
equal to the contract's once the premises' equalities are put in."""

import pickle
import subprocess
import sys

import pytest

from shapecheck.logic import expr as E
from shapecheck.prove.outputs import _known_values, _product


@pytest.mark.slow  # a fresh interpreter
def test_a_report_unpickles_without_torch():
    from shapecheck.prove.verify import Options, verify_op
    from tests.conftest import SDPA_MPS

    report = verify_op(SDPA_MPS, options=Options(cases=("rank=3,mask=none,is_causal=false,dtype=float32",)))
    assert report.torch_version and type(report.torch_version) is str
    code = ("import pickle, sys; r = pickle.loads(sys.stdin.buffer.read()); "
            "print(r.verdict.value, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(report), capture_output=True, check=True)
    assert out.stdout.decode().split() == [report.verdict.value, "False"]


def cmp(op, a, b):
    return E.Cmp(op, a, b)


def test_known_values_follow_the_equalities_of_the_premises():
    E_, Ev, H, L = (E.Var(n) for n in ("E", "Ev", "H", "L"))
    premises = [E.And((cmp("==", E_, E.Const(64)), cmp("<=", L, E.Const(8)))), cmp("==", Ev, E_),
                cmp("==", H, L)]
    known = _known_values(premises)
    assert known == {"E": E.Const(64), "Ev": E.Const(64), "L": E.Var("H")}
    # L * Ev and 64 * L: equal as products once Ev is put in, not before
    have, want = E.Arith("*", L, Ev), E.Arith("*", E.Const(64), L)
    assert _product(have, {}) != _product(want, {})
    assert _product(E.bind(have, known), {}) == _product(E.bind(want, known), {}) == (64, ("H",))


@pytest.mark.parametrize("premises", [
    [cmp("==", E.Var("E"), E.Const(64)), cmp("==", E.Var("E"), E.Const(96))],  # contradictory: nothing taken
    [cmp("==", E.Var("E"), E.Const(64)), cmp("==", E.Var("Ev"), E.Const(96)), cmp("==", E.Var("E"), E.Var("Ev"))],
    [E.Or((cmp("==", E.Var("E"), E.Const(64)), cmp("==", E.Var("E"), E.Const(96))))],  # no conjunct fixes E
    [E.Not(cmp("==", E.Var("E"), E.Const(64)))],
])
def test_known_values_take_nothing_from_what_fixes_no_name(premises):
    assert _known_values(premises) == {}


@pytest.mark.slow
def test_the_first_case_runs_in_this_process_while_the_workers_trace_the_others(monkeypatch):
    import os

    from shapecheck.prove import verify as V
    from shapecheck.prove.verify import Options, verify_op
    from tests.conftest import KERNELS, SDPA_MPS
    from tests.unit.test_parallel import MIXED, comparable

    if not hasattr(os, "fork"):
        pytest.skip("--jobs > 1 needs os.fork (POSIX)")
    ran: list[str] = []
    real = V._first_here

    def spy(kernel, case, *args):
        ran.append((case.id, os.getpid()))
        return real(kernel, case, *args)

    monkeypatch.setattr(V, "_first_here", spy)
    meta = f"{KERNELS / 'sdpa_kernels.py'}:regressed"
    two = verify_op(SDPA_MPS, meta=meta, options=Options(cases=MIXED, jobs=2))
    assert ran == [(two.cases[0].case, os.getpid())]
    assert any(c.shared_with for c in two.cases)  # the cases after it shared its regions, as in one process
    assert comparable(two) == comparable(verify_op(SDPA_MPS, meta=meta, options=Options(cases=MIXED, jobs=1)))


def test_a_failure_of_torchs_constraint_check_is_not_given_as_its_reason(monkeypatch):
    """A hunt's finding: an IndexError inside torch's constraint check read as export's reason for rejecting the
    Dim range ("torch: list index out of range")."""
    from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

    from shapecheck._torch.backed import BackedRun
    from shapecheck._torch.core import Own

    run = BackedRun(Own.of(frozenset()))

    def raises(err):
        def produce(*args, **kwargs):
            raise err
        return produce

    monkeypatch.setattr(run.shape_env, "produce_guards_verbose", raises(IndexError("list index out of range")))
    said = run.export_verdict()
    assert said.startswith("the guard stays installed") and "(IndexError: list index out of range)" in said, said
    assert "itself raised" not in said  # no failure of torch's check is given as export's reason (hunt 67)
    monkeypatch.setattr(run.shape_env, "produce_guards_verbose", raises(ConstraintViolationError("Not all values")))
    assert run.export_verdict() == "Not all values"
