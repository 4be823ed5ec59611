"""Files that are not files, for every file shapecheck reads (issue 20): a FIFO, a symlink to ``/dev/zero``, a
directory, a symlink to itself and a file over its limit, as a contract, a contracts directory, a ``--meta``,
``--meta-source`` and ``--import`` kernel file, ``pyproject.toml``, a gate and an audit baseline and a
``--from-verify`` report. Each is refused before anything is read (one line naming the file, exit 2) and
quickly: a FIFO never hangs a run and ``/dev/zero`` never fills memory (``harness`` forks each run under a
deadline and a memory cap)."""

import os

import pytest

from tests.acceptance.hostile.harness import judge, run
from tests.acceptance.hostile.inputs import BASES

ROWS, MM = BASES[:2]
FAST = 10.0  # CPU seconds: a refusal is never slow

KINDS = ("fifo", "dev-zero", "directory", "self-symlink", "over-the-limit")


def special(path, kind: str):
    """Make ``path`` a thing of ``kind``; the path."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "self-symlink":
        path.symlink_to(path)
    else:
        with open(path, "wb") as f:  # sparse: over every limit of limits.py (64 MiB the largest)
            f.truncate((64 << 20) + 1)
    return path


#: reader -> (the name of the thing, the command line that reads it, the working directory)
READERS = {
    "--contract": ("c.toml", lambda f: ["verify", "op", ROWS.op, "--contract", f, *ROWS.kernel, "--jobs", "1"]),
    "contract check": ("c.toml", lambda f: ["contract", "check", f]),
    "gate CONTRACT_PATHS": ("contracts.toml", lambda f: ["gate", f, "--no-cache"]),
    "--meta": ("k.py", lambda f: ["verify", "op", ROWS.op, "--contract", ROWS.file, "--meta", f"{f}:rows"]),
    "--meta-source": ("k.py", lambda f: ["verify", "op", MM.op, "--contract", MM.file, "--meta-source", f]),
    "gate --meta-source": ("k.py", lambda f: ["gate", MM.file, "--meta-source", f, "--no-cache"]),
    "--import": ("lib.py", lambda f: ["contract", "check", ROWS.file, "--import", f]),
    "gate --baseline": ("b.json", lambda f: ["gate", MM.file, "--baseline", f, "--no-cache"]),
    "audit --baseline": ("b.json", lambda f: ["audit", "--ops", "aten::mm", "--baseline", f, "--no-cache"]),
    "--from-verify": ("r.json", lambda f: ["fuzz", "op", MM.op, "--contract", MM.file, "--from-verify", f,
                                           "--examples", "1"]),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reader_refuses_what_is_not_a_regular_file(warm, tmp_path, reader, kind):
    name, argv = READERS[reader]
    path = special(tmp_path / name, kind)
    o = run([str(a) for a in argv(path)], seconds=60)
    judge(o, names=str(path))
    assert o.code == 2 and o.cpu < FAST, o
    if kind == "fifo" or kind == "dev-zero":
        assert "not a regular file" in o.stderr or "no contract" in o.stderr, o


@pytest.mark.parametrize("kind", KINDS)
def test_a_pyproject_toml_that_is_not_a_regular_file_is_refused(warm, tmp_path, kind):
    path = special(tmp_path / "pyproject.toml", kind)
    o = run(["contract", "check", str(ROWS.file)], cwd=tmp_path)
    judge(o, names=str(path))
    assert o.code == 2 and o.cpu < FAST, o


@pytest.mark.parametrize("how", ["itself", "its parent", "pyproject contracts"])
def test_a_contracts_directory_that_links_to_itself_is_bad_input(warm, tmp_path, how):
    loop = tmp_path / "shape_contracts"
    if how == "itself":
        loop.symlink_to(loop)
        argv = ["gate", str(loop), "--no-cache"]
    elif how == "its parent":  # a directory holding a .toml symlink to itself (and a link back to itself)
        loop.mkdir()
        (loop / "back").symlink_to(loop)
        (loop / "self.toml").symlink_to(loop / "self.toml")
        argv = ["gate", str(loop), "--no-cache"]
    else:
        loop.symlink_to(loop)
        (tmp_path / "pyproject.toml").write_text('[tool.shapecheck]\ncontracts = ["shape_contracts"]\n')
        argv = ["gate", "--no-cache"]
    for args in (argv, ["contract", "check", str(loop)]):
        o = run(args, cwd=tmp_path)
        judge(o, names="shape_contracts")
        assert o.code == 2 and o.cpu < FAST, o


def test_a_meta_source_file_of_many_registrations_is_bounded(warm, tmp_path):
    """The 15.8 MB file of 148,000 registrations took 52 s and 2.7 GB: over the kernel-file limit it is refused
    at once; a file just under the limit (about 17,000 registrations) gets its verdict under the memory cap."""
    one = ("@register_meta(aten.foo{i}.default)\ndef meta_foo{i}(self, other, alpha=1):\n"
           "    return self.new_empty(self.shape)\n\n")
    head = "import torch\nfrom torch._meta_registrations import register_meta\naten = torch.ops.aten\n\n"
    mm = ("@register_meta(aten.mm.default)\ndef meta_mm(self, mat2):\n"
          "    return self.new_empty((self.size(0), mat2.size(1)))\n")
    body = head + "".join(one.format(i=i) for i in range(148_000))  # 15.8 MB
    big = tmp_path / "big.py"
    big.write_text(body + mm)
    o = run(["verify", "op", MM.op, "--contract", str(MM.file), "--meta-source", str(big), "--no-cache"], seconds=60)
    judge(o, names=str(big))
    assert o.code == 2 and "larger than the limit of 2 MiB" in o.stderr and o.cpu < FAST, o
    limit = 2 << 20
    under = tmp_path / "under.py"
    text = body[:limit - len(mm) - 1000]
    under.write_text(text[:text.rindex("\n@")] + "\n" + mm)
    o = run(["verify", "op", MM.op, "--contract", str(MM.file), "--meta-source", str(under), "--no-cache",
             "--jobs", "1"], seconds=120)
    judge(o)
    assert o.code == 0 and o.stdout.startswith("PASS"), o
