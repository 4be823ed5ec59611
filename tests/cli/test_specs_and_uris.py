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
