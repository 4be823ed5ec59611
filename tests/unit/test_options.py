"""Options are one object (issue 21 item 4): the click options of every command, the project file's keys, the
run-options objects and the result cache's key all derive from ``shapecheck/options.py``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click
import pytest

from shapecheck import config
from shapecheck import options as O
from shapecheck.cache import store as R
from shapecheck.ci.gate import GateOptions
from shapecheck.cli import cli
from shapecheck.cli.options import option
from shapecheck.limits import DEFAULT_MAX_CASES, case_limit
from shapecheck.options import Option, VerifyOptions, result_options
from shapecheck.render.ci import FORMATS

SDPA_MPS = "aten::_scaled_dot_product_attention_math_for_mps"
PATHS = {"verify": ("verify", "op"), "gate": ("gate",), "fuzz": ("fuzz", "op"), "ref": ("ref", "check"),
         "audit": ("audit",), "contract check": ("contract", "check"), "contract draft": ("contract", "draft")}


def _command(path: tuple[str, ...]) -> click.Command:
    node = cli
    for part in path:
        node = node.commands[part]
    return node


@pytest.mark.parametrize("command", O.COMMANDS)
def test_each_command_has_exactly_its_declared_options(command):
    """Every option a command takes is declared for it, with the declared flag and default, and nothing declared
    for it is missing: an option added by hand to a command fails here until it is declared (and classified)."""
    params = {p.name: p for p in _command(PATHS[command]).params if isinstance(p, click.Option)}
    declared = O.of_command(command)
    assert set(params) == set(declared)
    for name, p in params.items():
        o = declared[name]
        assert o.flag.split("/")[0] in p.opts, name
        assert p.default == (o.default if p.multiple or o.default is not None else p.default), name
        assert bool(p.multiple) == o.multiple and bool(p.is_flag) == (o.is_flag or "/" in o.flag), name


def test_the_config_keys_are_the_declared_ones():
    assert config.OPTIONS == O.config_keys()
    assert set(config.OPTIONS) >= {"jobs", "cache", "timeout-ms", "max-traces", "format", "era", "max-cases"}
    reading = {c for c in O.COMMANDS if c.split()[0] in config.COMMANDS or c.startswith("contract")}
    for key, name in config.OPTIONS.items():  # every key reaches an option of a command that reads the file
        assert any(name in O.of_command(c) for c in reading), key


def test_an_option_changes_results_for_every_command_or_for_none():
    for o in O.DECLARED:
        assert O.changes_result(o.name) == o.result
        assert {d.config for d in O.DECLARED if d.name == o.name} == {o.config}, o.name
    assert O._FORMATS == tuple(FORMATS)  # --format's choices, in the order --help shows them


def test_the_run_options_fields_are_all_classified():
    """verify's and the gate's options: each field is a declared option or says whether it changes a result."""
    assert result_options(VerifyOptions()) == {"max_traces": 64, "timeout_ms": 10_000, "eras": [], "cases": [],
                                               "full": False, "explore": False, "confirm_export": False,
                                               "both_modes": False, "export_sample": 2, "max_cases": None,
                                               "budget": [], "show_obligations": False}
    result_options(GateOptions())  # raises for an unclassified field
    from shapecheck.audit.run import AuditOptions

    assert result_options(AuditOptions(cache=False)) == {"max_traces": 12, "seconds_per_op": None, "timeout_ms": 2000,
                                                         "device": "cpu", "differential": True, "variants": 6,
                                                         "samples": None, "both_modes": False}
    gate = GateOptions(explore=True, max_traces=9, timeout_ms=500, jobs=3)
    assert gate.verify_options() == VerifyOptions(max_traces=9, timeout_ms=500, full=True, explore=True, jobs=3,
                                                  max_cases=DEFAULT_MAX_CASES)


#: result-changing options that cache/store.verify_key keys by what they name (files, digests), not by value
KEYED_BY_STORE = {"imports", "contract", "meta", "meta_source"}


@pytest.mark.parametrize("command", ["verify", "gate"])
def test_every_result_option_of_a_cached_command_reaches_the_key(command):
    """A declared option that changes verify's or the gate's result is a field of ``VerifyOptions`` (so in the
    key) or one the store keys by its files: declaring a new one without a way into the key fails here."""
    fields = {f.name for f in dataclasses.fields(VerifyOptions)}
    for name, o in O.of_command(command).items():
        if o.result and name not in KEYED_BY_STORE:
            assert name in fields, f"{command} --{o.flag[2:]}: changes a result but cannot reach the cache key"


def test_the_case_limit_is_in_the_key():
    """A contract past --max-cases is refused: a result stored under a larger limit must not answer."""
    with case_limit(5):
        small = GateOptions().verify_options().key()
    assert small["max_cases"] == 5 and small != GateOptions().verify_options().key()


def test_jobs_and_presentation_do_not_change_the_key():
    assert VerifyOptions(jobs=1).key() == VerifyOptions(jobs=8).key()
    for name in ("jobs", "cache", "fmt", "outputs", "quiet", "context", "shard", "baseline"):
        assert not O.changes_result(name), name
    for name in ("max_traces", "timeout_ms", "eras", "cases", "full", "explore", "confirm_export", "imports",
                 "max_cases"):
        assert O.changes_result(name), name


def test_a_new_result_option_changes_the_cache_key(monkeypatch, cache_dir):
    """A dummy option, declared once as changing results: the verify command's click option and the project
    file's key come from the declaration, and the cache key (through ``cache/store.verify_key``) changes with
    its value, with no other edit; a field added without a declaration is refused rather than left out."""
    dummy = Option("dummy_depth", "--dummy-depth", ("verify",), True, 0, config="dummy-depth",
                   type=click.IntRange(0, 9), help="A dummy.")
    monkeypatch.setattr(O, "DECLARED", (*O.DECLARED, dummy))
    Extended = dataclasses.make_dataclass("Extended", [("dummy_depth", int, 0)], bases=(VerifyOptions,),
                                          frozen=True)

    def key(opts):
        return R.verify_key(SDPA_MPS, None, _installed(), (), opts.key(), cwd=Path(__file__).parents[2])

    base = key(Extended())
    assert base is not None and base["options"]["dummy_depth"] == 0
    assert key(Extended(dummy_depth=3)) != base
    assert key(Extended(jobs=4)) == base  # --jobs: same result, same entry
    assert key(Extended(timeout_ms=9000)) != base

    cmd = option("verify", "dummy_depth")(click.command("x")(lambda dummy_depth: None))
    (param,) = cmd.params
    assert param.opts == ["--dummy-depth"] and param.default == 0
    assert O.config_keys()["dummy-depth"] == "dummy_depth"

    class Unclassified(VerifyOptions):
        pass

    Forgot = dataclasses.make_dataclass("Forgot", [("forgotten", int, 0)], bases=(Unclassified,), frozen=True)
    with pytest.raises(TypeError, match="Forgot.forgotten"):
        Forgot().key()


def _installed():
    from shapecheck.kernel.sources import INSTALLED

    return INSTALLED


@pytest.mark.slow
def test_a_cached_result_does_not_answer_a_run_past_the_case_limit(cache_dir, capsys, monkeypatch):
    """verify stores a result; the same run answers from the cache; with --max-cases below the contract's
    case count the run is refused (exit 2) as it is without a cache, not answered by the stored pass."""
    from shapecheck.cli.main import main

    monkeypatch.chdir(Path(__file__).parents[2])
    args = ["verify", "op", "aten::new_empty", "--contract", "tests/kernels/hidden_case.toml", "-j", "1",
            "--format", "json"]

    def run(*extra):
        with pytest.raises(SystemExit) as e:
            main([*args, *extra])
        return e.value.code, capsys.readouterr()

    assert run()[0] == 0
    code, out = run()
    assert code == 0 and '"hit": true' in out.out
    code, out = run("--max-cases", "1")
    assert code == 2 and "over the limit of 1 cases" in out.err
