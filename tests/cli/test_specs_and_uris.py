"""Option values and report locations that a hostile-input hunt (2026-12-05) found taken or written loosely:
``--shard`` in non-ASCII digits, and a SARIF location whose file name holds ``%`` or a space."""

import click
import pytest

from shapecheck.cli.options import RankSpec, ShardSpec
from shapecheck.render.ci import _artifact


@pytest.mark.parametrize("value", ["١/٢", "1/٢", " 1/2", "+1/2", "1_0/20", "1/2 "])
def test_a_shard_is_plain_ascii_digits(value):
    with pytest.raises(click.BadParameter):
        ShardSpec().convert(value, None, None)
    assert ShardSpec().convert("2/4", None, None) == (2, 4)


def test_a_rank_is_plain_ascii_digits():
    with pytest.raises(click.BadParameter):
        RankSpec().convert("self=٤", None, None)
    assert RankSpec().convert("self=4", None, None) == ("self", 4)


def test_a_sarif_location_is_a_uri_reference(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    kernel = tmp_path / "my kernel%41.py"
    kernel.write_text("")
    loc = _artifact(str(kernel), tmp_path)
    assert loc["uri"] == "my%20kernel%2541.py" and loc["uriBaseId"] == "SRCROOT"


@pytest.mark.slow
def test_the_command_lines_meta_wins_over_the_project_files_meta_source(tmp_path, monkeypatch, capsys):
    """docs/cli.md: the command line wins over [tool.shapecheck]; --meta beside a project's meta-source was
    refused as "exclusive" (exit 2). Both on the command line stay exclusive."""
    from shapecheck.cli.main import main
    from tests.conftest import KERNELS

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.shapecheck]\nmeta-source = "not_this.py"\n')
    base = ["verify", "op", "sctest::attend_rows", "--contract", str(KERNELS / "empty_batch.toml"), "--meta",
            f"{KERNELS / 'empty_batch.py'}:fallback_right", "-j", "1", "--no-cache"]
    with pytest.raises(SystemExit) as done:
        main(base)
    assert done.value.code == 0 and "kernel: empty_batch.py:fallback_right" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        main([*base, "--meta-source", "x.py"])
    assert done.value.code == 2 and "exclusive" in capsys.readouterr().err
