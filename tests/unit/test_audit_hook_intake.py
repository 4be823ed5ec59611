"""What the audit does with samples-hook calls it cannot use (hunt 48): a meta tensor's sample is left out with a
note and the next sample runs; samples neither kernel takes are said to be refused; an internal error of an op
keeps its traceback in the record and prints it with --debug. Kernels: tests/kernels/audit_hook_intake.py."""

from __future__ import annotations

import json

import pytest

LIBRARY = "tests.kernels.audit_hook_intake"


@pytest.mark.slow  # an audit
def test_a_meta_sample_is_left_out_with_a_note_and_a_refused_one_is_said():
    from shapecheck.audit.run import AuditOptions, run_audit

    run = run_audit(("audithook::*",), (LIBRARY,), jobs=1, options=AuditOptions(samples=f"{LIBRARY}:samples"))
    recs = {r["op"]: r for r in run.records}
    double = recs["audithook::double.default"]
    assert double.get("failure") is None and double["inputs"] == "samples", double
    assert any(n.startswith("sample 1 of the samples hook not used: a tensor on meta holds no data")
               for n in double["notes"]), double["notes"]
    same = recs["audithook::same.default"]
    assert any("1 sample(s) of the samples hook refused by the fake and the eager kernel" in n
               for n in same["notes"]), same["notes"]
    # an int argument's own check the fake lacks ("num_heads must be positive, got 0"): not the made-up data's
    (finding,) = [f for f in recs["audithook::heads.default"]["findings"] if f["class"] == "fake-accepts"]
    assert "num_heads must be positive, got 0" in finding["message"], finding
    assert run.exit_code == 1, [r["notes"] for r in run.records]


def test_an_ops_internal_error_keeps_its_traceback_and_debug_prints_it(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from shapecheck.audit import op as audit_op
    from shapecheck.cli import cli

    def broken(self, given):
        raise KeyError("a shapecheck bug")

    monkeypatch.setattr(audit_op.OpRun, "run", broken)
    monkeypatch.setenv("SHAPECHECK_ISOLATE", "0")
    args = ["audit", "--import", LIBRARY, "--ops", "audithook::same*", "-j", "1", "--no-cache", "--format", "json"]
    plain = CliRunner().invoke(cli, args)
    assert plain.exit_code == 4, plain.output
    (rec,) = json.loads(plain.stdout)["ops"]
    assert rec["failure"] == "internal error" and "KeyError: 'a shapecheck bug'" in rec["traceback"]
    assert "Traceback" not in plain.stderr
    debug = CliRunner().invoke(cli, ["--debug", *args])
    assert "internal error in audithook::same.default" in debug.stderr and "in broken" in debug.stderr


@pytest.mark.parametrize(("hook", "said", "kept"), [
    ("hook_raises", "raised ValueError for audithook::double.default (a typo in the project's hook): no samples", 0),
    ("hook_returns_a_number", "returned 7 for audithook::double.default, not a list of sample calls", 0),
    ("hook_raises_after_one", "raised RuntimeError for audithook::double.default (the generator died); the 1 sample(s) "
                              "it gave before are used", 1),
])
def test_a_hook_that_fails_is_said_and_keeps_what_it_gave(hook, said, kept):
    """hunt 52: a hook that raised, exited or returned no list gave the op no samples with no note (a typo in the
    hook looked like a hook that worked), and a generator's sample before its error was thrown away."""
    from shapecheck.audit.inputs import from_samples_hook

    notes: list[str] = []
    got = from_samples_hook("audithook::double.default", f"{LIBRARY}:{hook}", notes=notes)
    assert len(got) == kept and [n for n in notes if said in n], notes


def test_malformed_calls_are_left_out_with_a_note_and_the_valid_one_kept():
    from shapecheck.audit.inputs import from_samples_hook

    notes: list[str] = []
    got = from_samples_hook("audithook::double.default", f"{LIBRARY}:hook_malformed_after_one", notes=notes)
    assert len(got) == 1 and got[0].origin == "samples"
    assert [n for n in notes if n.startswith("sample 2 of the samples hook not used: its args are of type 'Tensor'")]
    assert [n for n in notes if n.startswith("sample 3 of the samples hook not used: its args are of type 'int'")]


@pytest.mark.parametrize("spec", ["tests.kernels.hook_exits.stops:samples", ""])
def test_a_hook_module_that_exits_at_import_or_an_empty_hook_is_bad_input(spec):
    """hunt 60: ``sys.exit(0)`` in the hook's module made the audit exit 0 with no output; ``samples = ""`` was no
    hook at all, while ``lib:`` was an error."""
    from tests.conftest import invoke

    res = invoke("audit", "--ops", "audithook::double*", "--import", LIBRARY, "--samples", spec, "-j", "1",
                 "--no-cache")
    assert res.returncode == 2 and res.stderr.count("\n") == 1, (res.returncode, res.stdout, res.stderr)
    assert "the samples hook" in res.stderr and "Traceback" not in res.stderr
    if spec:
        assert "SystemExit" in res.stderr and "stopped before it was imported" in res.stderr
