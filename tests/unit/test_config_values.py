"""``[tool.shapecheck]`` values are checked against the click option each one sets, before click sees them
(issue 20): a wrong type or value is exit 2 naming pyproject.toml and the key, never exit 4 and never an
option the user did not pass. Run in-process (``cli.main`` under click's stream isolation)."""

from pathlib import Path

import click
import pytest

from shapecheck import config
from shapecheck.cli.main import cli
from shapecheck.errors import UserError
from tests.conftest import invoke


def shapecheck(cwd: Path, *args: str) -> tuple[int, str, str]:
    """``shapecheck ARGS`` in this process, in ``cwd``: (exit code, stdout, stderr)."""
    res = invoke(*args, cwd=cwd)
    return res.returncode, res.stdout, res.stderr


def with_config(tmp_path: Path, text: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("text,key,words", [
    ("tool = 5\n", "[tool]", "expected a table, found an integer 5"),
    ("[tool]\nshapecheck = [1]\n", "[tool.shapecheck]", "expected a table, found an array"),
    ("[tool.shapecheck]\ncache = 7\n", "[tool.shapecheck] cache", "expected true or false, found an integer 7"),
    ("[tool.shapecheck]\nseed = [1, 2]\n", "[tool.shapecheck] seed", "expected an integer, found an array"),
    ('[tool.shapecheck]\nbaseline = ["a.json"]\n', "[tool.shapecheck] baseline", "expected a string, found an array"),
    ("[tool.shapecheck]\noutput = [5]\n", "[tool.shapecheck] output[0]", "expected a string, found an integer 5"),
    ("[tool.shapecheck]\nmax-cases = inf\n", "[tool.shapecheck] max-cases", "expected an integer, found a number inf"),
    ('[tool.shapecheck]\njobs = "many"\n', "[tool.shapecheck] jobs", "expected an integer, found a string 'many'"),
    ("[tool.shapecheck]\njobs = 1000\n", "[tool.shapecheck] jobs", "1000 is not in the range 0<=x<=64"),
    ("[tool.shapecheck]\njobs = true\n", "[tool.shapecheck] jobs", "expected an integer, found a boolean true"),
    ("[tool.shapecheck]\ntimeout-ms = 1.5\n", "[tool.shapecheck] timeout-ms", "expected an integer, found a number"),
    ('[tool.shapecheck]\nimports = "mylib"\n', "[tool.shapecheck] imports", "expected an array"),
    ('[tool.shapecheck]\noutput = ["jsn=r.json"]\n', "[tool.shapecheck] output[0]", "expected FORMAT=FILE"),
    ('[tool.shapecheck]\nformat = "yaml"\n', "[tool.shapecheck] format", "'yaml' is not one of"),
    ('[tool.shapecheck]\nquiet = "yes"\n', "[tool.shapecheck] quiet", "expected true or false"),
    ("[tool.shapecheck.gate]\nmax-traces = 0\n", "[tool.shapecheck.gate] max-traces", "not in the range"),
    ('[tool.shapecheck.gate]\nera = ["x"]\n', "[tool.shapecheck.gate] era", "the command has no option --era"),
    ("[tool.shapecheck.fuzz]\nexamples = {a = 1}\n", "[tool.shapecheck.fuzz] examples", "expected an integer, found a table"),
    ("[tool.shapecheck]\nverify = 3\n", "[tool.shapecheck.verify]", "expected a table, found an integer"),
    ('[tool.shapecheck]\nbaseline = "a\\u0000b"\n', "[tool.shapecheck] baseline", "a NUL character"),
    ('[tool.shapecheck]\noutput = ["json=a\\u0000b"]\n', "[tool.shapecheck] output[0]", "a NUL character"),
    # a key with a character str.splitlines breaks at (found by the fuzzer: two lines on stderr)
    ('[tool.shapecheck]\n"\\u001e" = 1\n', '[tool.shapecheck] "\\x1e"', "not an option"),
    ('[tool.shapecheck]\n"a\\u2028b" = 1\n', '[tool.shapecheck] "a\\u2028b"', "not an option"),
])
def test_a_config_value_of_the_wrong_type_names_the_file_and_the_key(tmp_path, text, key, words):
    code, out, err = shapecheck(with_config(tmp_path, text), "contract", "check", "nothing.toml")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, (code, out, err)
    assert f"{tmp_path / 'pyproject.toml'}: {key}" in lines[0] and words in lines[0], lines[0]
    assert "--jobs" not in lines[0] and "Traceback" not in err


def test_good_values_of_every_kind_pass(tmp_path):
    text = ('[tool.shapecheck]\njobs = 1\ntimeout-ms = 2000\ncache = false\nmax-cases = 64\nimports = []\n'
            '[tool.shapecheck.gate]\nformat = "json"\noutput = ["sarif=r.sarif"]\nquiet = true\nbaseline = "b.json"\n'
            '[tool.shapecheck.fuzz]\nseed = 3\nexamples = 5\nera = ["default"]\n')
    found = config.default_map(cli, with_config(tmp_path, text))
    assert found["gate"]["outputs"] == [f"sarif={tmp_path / 'r.sarif'}"]
    assert found["gate"]["baseline"] == str(tmp_path / "b.json")
    assert found["fuzz"]["op"]["eras"] == ["default"] and found["fuzz"]["op"]["seed"] == 3
    assert found["verify"]["op"]["cache"] is False and found["contract"]["check"]["max_cases"] == 64


def test_the_expected_types_come_from_the_click_options():
    """Every key a project file may set reaches an option of some command, and each option's own kind of value
    passes the check while a value of another kind does not: a new option, or a new type, is checked the same
    way with no table to update."""
    params = [p for path in config.COMMANDS.values() for p in config._options_of(cli, path).values()]
    for key, name in config.OPTIONS.items():
        mine = [p for p in params if p.name == name]
        assert mine, f"{key}: no command has the option {name}"
        for p in mine:
            good, bad = _sample(p)
            config.check_value(f"pyproject.toml: {key}", good, p)
            with pytest.raises(UserError, match=f"pyproject.toml: {key}"):
                config.check_value(f"pyproject.toml: {key}", bad, p)


def _sample(p: click.Parameter):
    """A value of the option's kind (from its click type) and one of another kind."""
    kind = p.type
    if isinstance(kind, click.types.BoolParamType):
        one, other = True, 1
    elif isinstance(kind, click.types.IntParamType):
        one, other = kind.min if getattr(kind, "min", None) is not None else 1, "1"
    elif isinstance(kind, click.Choice):
        one, other = kind.choices[0], 0
    elif p.name == "outputs":
        one, other = "json=r.json", 0
    else:
        one, other = "x", 0
    return ([one], [other]) if p.multiple else (one, other)


def test_a_new_option_is_checked_by_its_click_type():
    option = click.Option(["--ratio"], type=click.FloatRange(0, 1))
    config.check_value("p.toml: ratio", 0.5, option)
    config.check_value("p.toml: ratio", 1, option)
    for bad, words in ((True, "expected a number"), ("0.5", "expected a number"), (2.0, "not in the range")):
        with pytest.raises(UserError, match=words):
            config.check_value("p.toml: ratio", bad, option)
    many = click.Option(["--tag"], multiple=True, type=click.Choice(["a", "b"]))
    config.check_value("p.toml: tag", ["a", "b"], many)
    with pytest.raises(UserError, match=r"tag\[1\]: 'c' is not one of"):
        config.check_value("p.toml: tag", ["a", "c"], many)


def test_contract_directories_with_a_nul_character_are_bad_input(tmp_path):
    code, out, err = shapecheck(with_config(tmp_path, '[tool.shapecheck]\ncontracts = ["a\\u0000b"]\n'), "gate")
    assert code == 2 and "[tool.shapecheck] contracts: expected a list of paths" in err, (code, out, err)


def test_an_error_message_is_one_line_whatever_it_quotes():
    from shapecheck.cli.main import _one_line

    for text in ("a\nb", "a\x1eb", "a\u2028b", "a\x0bb\x0cc\x1cd\x1de\x85f\u2029g\rh"):
        assert len(_one_line(f"file {text}: bad").splitlines()) == 1


def test_arguments_given_as_paths_are_read_as_their_text(tmp_path):
    """``main`` takes argv from a caller that passes ``Path`` objects (an embedding tool, the hostile harness)."""
    with_config(tmp_path, '[tool.shapecheck]\nformat = "junit"\n')
    found = config.default_map(cli, tmp_path, argv=["verify", "op", "aten::mm", "--contract", tmp_path / "c.toml",
                                                    Path("--format=text")])
    assert found["verify"]["op"].get("fmt") is None  # the command line's --format wins
