"""Every file shapecheck reads goes through ``limits.read_bounded`` (issue 20). The files read a second time
for a report (a contract for its line numbers, a kernel for source context) cost nothing when they have
become something else since: no context, never a hang. A ``--meta-source`` file is parsed once per run."""

import os
import re
import time

import pytest

from shapecheck import limits as L
from shapecheck.errors import UserError
from shapecheck.findings import SourceLoc


@pytest.fixture(params=["fifo", "dev-zero", "directory", "missing", "large"])
def not_a_file(request, tmp_path):
    path = tmp_path / "thing"
    if request.param == "fifo":
        os.mkfifo(path)
    elif request.param == "dev-zero":
        path.symlink_to("/dev/zero")
    elif request.param == "directory":
        path.mkdir()
    elif request.param == "large":
        with open(path, "wb") as f:
            f.truncate(L.SOURCE_BYTES + 1)
    return path


def test_a_contract_reread_for_line_numbers_is_empty_when_it_is_no_longer_a_file(not_a_file):
    from shapecheck.contract.suppressions import contract_text, header_lines

    start = time.monotonic()
    assert contract_text(str(not_a_file)) == "" and header_lines(str(not_a_file)) == []
    assert time.monotonic() - start < 5


def test_source_context_of_something_that_is_not_a_file_is_none(not_a_file):
    from shapecheck.render.text import _context

    assert _context(SourceLoc(str(not_a_file), 3, "f"), 2) == []


def test_source_context_and_suppress_lines_of_a_real_file(tmp_path):
    from shapecheck.contract.suppressions import header_lines
    from shapecheck.render.text import _context

    path = tmp_path / "c.toml"
    path.write_text("a = 1\n[[suppress]]\nrule = 'SC001'\n  [[ suppress ]]\n")
    assert header_lines(str(path)) == [2, 4]
    assert _context(SourceLoc(str(path), 2, "f"), 1)[1].startswith("    >    2 | [[suppress]]")


def test_read_input_names_the_option_and_the_file(not_a_file):
    with pytest.raises(UserError) as err:
        L.read_input(not_a_file, L.SOURCE_BYTES, f"--thing {not_a_file}")
    text = str(err.value)
    assert text.startswith(f"--thing {not_a_file}: ") and "\n" not in text
    assert any(w in text for w in ("not a regular file", "larger than the limit of 2 MiB", "cannot read")), text


def test_read_json_refuses_what_python_cannot_hold(tmp_path):
    for doc in ('{"version": ' + "9" * 5001 + "}", "[" * 100_000 + "]" * 100_000, '{"a": 1', "\udcff"):
        path = tmp_path / "b.json"
        path.write_bytes(doc.encode("utf-8", "surrogateescape"))
        with pytest.raises(UserError, match="^" + re.escape(f"--baseline {path}: not a baseline (")):
            L.read_json(path, L.BASELINE_BYTES, "--baseline", "a baseline")
    path.write_text('{"version": 1}')
    assert L.read_json(path, L.BASELINE_BYTES, "--baseline", "a baseline") == {"version": 1}


FILE = '''
import torch
from torch._meta_registrations import register_meta
aten = torch.ops.aten

def _rows(x):
    return x.size(0)

@register_meta(aten.mm.default)
def meta_mm(self, mat2):
    return self.new_empty((_rows(self), mat2.size(1)))
'''


def test_a_meta_source_file_is_parsed_once_and_its_tree_is_never_changed(tmp_path):
    from shapecheck.kernel.load import source_kernel
    from shapecheck.kernel.registrations import find_registration, read_python

    path = tmp_path / "regs.py"
    path.write_text(FILE)
    source, tree = read_python(str(path), "--meta-source")
    assert read_python(str(path), "--meta-source")[1] is tree  # the gate asks once per contract
    for _ in range(2):  # defining the kernel drops its registering decorator from a copy, not from the tree
        kernel = source_kernel(str(path), "aten::mm")
        assert kernel.name == "regs.py:meta_mm"
        assert find_registration(tree, "aten::mm") is not None
    path.write_text(FILE.replace("mat2.size(1)", "mat2.size(0)"))
    assert read_python(str(path), "--meta-source")[1] is not tree  # another file: parsed again
