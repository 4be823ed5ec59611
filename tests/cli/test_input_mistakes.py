"""Mistakes in what a user names: a --meta-source that registers nothing (audit and gate as verify), an --ops pattern
that matches nothing beside one that does, a configured contracts path that is not there (named with the project
file and key), and ``shapecheck`` alone (its help, as it reads)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, invoke


def test_audit_refuses_a_meta_source_that_registers_nothing(tmp_path):
    (tmp_path / "nothing.py").write_text("import torch\n\n\ndef helper(x):\n    return x\n")
    res = invoke("audit", "--meta-source", tmp_path / "nothing.py", "--ops", "aten::pixel_shuffle.default", "-j", "1",
                 "--no-cache")
    assert res.returncode == 2 and "registers no function for any op" in res.stderr, res.stderr


@pytest.mark.slow
def test_gate_refuses_a_meta_source_that_registers_nothing_and_names_fake_tensor_rules(tmp_path):
    """A gate of such a file passed every contract on the installed kernels (hunt 21: an empty file, and an old
    ``fake_impls.py``, whose ``register_op_impl`` rules --meta-source does not check)."""
    (tmp_path / "fake_impls.py").write_text("from torch._subclasses.fake_impls import register_op_impl\n\n\n"
                                           "@register_op_impl(lambda func: False)\ndef rule(fake_mode, func):\n"
                                           "    return None\n")
    res = invoke("gate", "--meta-source", tmp_path / "fake_impls.py", "-j", "1", "--no-cache")
    assert res.returncode == 2 and "registers no function for any op" in res.stderr, res.stderr
    assert "register_op_impl" in res.stderr and "Traceback" not in res.stderr


def test_an_ops_pattern_that_matches_nothing_is_named_though_another_matches():
    res = invoke("audit", "--ops", "aten::pixel_shuffle.default", "--ops", "aten::pixle_shuffle*", "-j", "1",
                 "--no-cache")
    assert res.returncode == 2 and "--ops aten::pixle_shuffle*" in res.stderr and "pixel_shuffle.default" not in \
        res.stderr.partition(":")[2].partition(":")[0], res.stderr


def test_a_configured_contracts_path_that_is_not_there_names_the_project_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.shapecheck]\ncontracts = ["nope/"]\n')
    res = invoke("gate", "-j", "1", cwd=tmp_path)
    assert res.returncode == 2 and "pyproject.toml [tool.shapecheck] contracts" in res.stderr, res.stderr


def test_shapecheck_alone_prints_its_help_as_it_reads():
    res = invoke()
    assert res.returncode == 2 and res.stderr.startswith("Usage: shapecheck") and "\\n" not in res.stderr
    assert len(res.stderr.splitlines()) > 5


def test_an_era_name_with_a_control_character_is_bad_input(tmp_path):
    text = (ROOT / "contracts" / "aten" / "index_select.toml").read_text()
    contract = tmp_path / "c.toml"
    contract.write_text(text.replace('[[paths]]\n', '[[paths]]\nera = "x\\u001b[31m"\n', 1))
    res = invoke("contract", "check", contract)
    assert res.returncode == 2 and ".era" in res.stderr and "\x1b" not in res.stderr, res.stderr


@pytest.mark.slow
def test_a_kernels_control_characters_are_shown_in_text_not_sent(tmp_path):
    (tmp_path / "k.py").write_text("def kernel(self, dim, index):\n    raise RuntimeError('red \\x1b[31m bell \\x07')\n")
    res = invoke("verify", "op", "aten::index_select", "--contract", ROOT / "contracts" / "aten" / "index_select.toml",
                 "--meta", f"{tmp_path / 'k.py'}:kernel", "-j", "1", "--no-cache")
    assert res.returncode == 1 and "\\x1b[31m" in res.stdout and "\x1b" not in res.stdout and "\x07" not in res.stdout


def test_text_escapes_c1_controls_and_carriage_returns():
    from shapecheck.render.ci import terminal_safe

    assert terminal_safe("a\x9b31m b\rc\x85d\u2028e\tf\ng") == "a\\x9b31m b\\x0dc\\x85d\\u2028e\tf\ng"


DEFINES_BADLY = '''import torch
from torch._meta_registrations import register_meta

aten = torch.ops.aten


@register_meta(aten.pixel_shuffle.default)
def meta_pixel_shuffle(self, upscale_factor: NoSuchType = 2):
    return self
'''


@pytest.mark.slow
def test_audit_of_a_meta_source_function_that_fails_to_define_is_bad_input_with_its_report(tmp_path):
    """verify and gate said exit 2 for this file; the audit said not run and exit 3, inconclusive: an input the
    user can fix read as a coverage gap."""
    import json

    (tmp_path / "defbad.py").write_text(DEFINES_BADLY)
    res = invoke("audit", "--meta-source", tmp_path / "defbad.py", "--ops", "aten::pixel_shuffle.default", "-j", "1",
                 "--no-cache", "--format", "json")
    doc = json.loads(res.stdout)  # one report on stdout, the error line on stderr
    assert res.returncode == 2 and doc["exit_code"] == 2 and doc["ops"][0]["failure"] == "bad input", doc
    lines = [x for x in res.stderr.splitlines() if x.startswith("shapecheck: error:")]
    assert len(lines) == 1 and "defbad.py:8: defining meta_pixel_shuffle failed: NameError" in lines[0], res.stderr


@pytest.mark.slow
def test_an_internal_error_on_one_op_is_exit_4_and_the_other_ops_records_stand(monkeypatch):
    import shapecheck.audit.run as R

    fill = R._fill

    def broken(rec, name, *args, **kwargs):
        if name == "aten::pixel_shuffle.default":
            raise RuntimeError("a bug in shapecheck")
        return fill(rec, name, *args, **kwargs)

    monkeypatch.setattr(R, "_fill", broken)
    run = R.run_audit(("aten::pixel_shuffle.default", "aten::pixel_unshuffle.default"), jobs=1)
    by_op = {r["op"]: r for r in run.records}
    assert by_op["aten::pixel_shuffle.default"]["failure"] == "internal error"
    assert by_op["aten::pixel_unshuffle.default"]["status"] not in ("not-run", "no-inputs"), by_op
    assert run.exit_code == 4 and run.verdict.value == "error"


NEW_OP = '''import torch
from torch._meta_registrations import register_meta

aten = torch.ops.aten


@register_meta(aten.pixel_shuffle.default)
def meta_pixel_shuffle(self, upscale_factor):
    n = self.shape[-3] // (upscale_factor * upscale_factor)
    return self.new_empty(self.shape[:-3] + (n, self.shape[-2] * upscale_factor, self.shape[-1] * upscale_factor))


@register_meta(aten.pixel_shuffle_v2.default)
def meta_pixel_shuffle_v2(self, upscale_factor):  # a PR's new op: this torch has none such
    return self
'''


@pytest.mark.slow
def test_a_meta_source_function_for_an_op_this_torch_lacks_is_not_run_never_a_pass(tmp_path):
    """Its function was left out in silence: an audit of the file (or of `--ops 'aten::pixel_shuffle*'`) passed."""
    import json

    (tmp_path / "newop.py").write_text(NEW_OP)
    res = invoke("audit", "--meta-source", tmp_path / "newop.py", "--ops", "aten::pixel_shuffle*", "--variants", "0",
                 "-j", "1", "--no-cache", "--format", "json")
    doc = json.loads(res.stdout)
    lacking = [r for r in doc["ops"] if r["op"] == "aten::pixel_shuffle_v2.default"]
    assert lacking and lacking[0]["status"] == "not-run" and "lacks" in lacking[0]["notes"][0], doc["ops"]
    assert res.returncode in (1, 3) and "aten::pixel_shuffle_v2.default" in doc["coverage"]["not_run"], res.stderr
    assert any(r["op"] == "aten::pixel_shuffle.default" and r["traces"] for r in doc["ops"])


@pytest.mark.slow
def test_an_internal_error_in_one_variant_keeps_the_ops_other_results(monkeypatch):
    """An uncaught error in one argument variant (hunt 24: linalg_pinv's AssumptionRejected) lost the op's whole
    record, its first inputs' findings included: the variant is noted, the run exits 4, the rest stands."""
    import shapecheck.audit.op as O
    import shapecheck.audit.run as R

    one = O.OpRun._variant

    def broken(self, search, base, out, base_ok, v, varied):
        if "upscale_factor" in v.label:
            raise RuntimeError("a bug in shapecheck")
        return one(self, search, base, out, base_ok, v, varied)

    monkeypatch.setattr(O.OpRun, "_variant", broken)
    run = R.run_audit(("aten::pixel_shuffle.default",), jobs=1)
    (rec,) = run.records
    assert rec["failure"] == "internal error" and rec["traces"] and rec["partial"], rec
    assert any(n.startswith("not run: the variant upscale_factor") for n in rec["notes"]), rec["notes"]
    assert run.exit_code == 4
