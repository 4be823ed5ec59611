"""The docs hold: every command in a shell block of README.md and docs/*.md runs as documented, or the block
is marked illustrative; README.md stays short and shows the command .ci/run runs; relative links resolve.

Markers are HTML comments on the lines right above a fence: ``<!-- illustrative -->`` (not run) and
``<!-- exit: N -->`` (the documented exit code; 0 when absent). In a ``console`` block, ``$ `` starts a
command and the lines after it are its output; in an ``sh`` block every line is a command.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli

README = ROOT / "README.md"
DOCS = (README, *sorted((ROOT / "docs").glob("*.md")))
README_MAX_LINES = 150
PROMPT_LANGS = {"console", ""}  # `$ ` marks a command, other lines are output
SCRIPT_LANGS = {"sh", "shell", "bash"}  # every line is a command
FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")
MARKER = re.compile(r"^\s*<!--\s*(.*?)\s*-->\s*$")
VERDICT = re.compile(r"^(?:(PASS|FAIL|INCONCLUSIVE)\b|gate: (\w+))")
SHELL_OPERATORS = set("();<>|&")


@dataclass
class Command:
    text: str
    output: list[str] = field(default_factory=list)


@dataclass
class Block:
    file: Path
    line: int  # of the opening fence, 1-based
    lang: str
    body: list[str]
    illustrative: bool
    exit: int

    @property
    def where(self) -> str:
        return f"{self.file.relative_to(ROOT)}:{self.line}"

    def commands(self) -> list[Command]:
        """The commands of a shell block, each with the output lines shown after it."""
        if self.lang not in PROMPT_LANGS | SCRIPT_LANGS:
            return []
        out: list[Command] = []
        lines = iter(self.body)
        for raw in lines:
            line = raw.strip()
            if self.lang in SCRIPT_LANGS and (not line or line.startswith("#")):
                continue
            if self.lang in PROMPT_LANGS and not line.startswith("$ "):
                if out:
                    out[-1].output.append(raw)
                continue
            text = line[2:] if line.startswith("$ ") else line
            while text.endswith("\\"):
                text = text[:-1].rstrip() + " " + next(lines, "").strip()
            out.append(Command(text))
        return out


def closes(line: str, fence: str) -> bool:
    s = line.strip()
    return len(s) >= len(fence) and set(s) == {fence[0]}


def fenced_blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        markers = []
        j = i - 1
        while j >= 0 and MARKER.match(lines[j]):
            markers.append(MARKER.match(lines[j]).group(1))
            j -= 1
        end = i + 1
        while end < len(lines) and not closes(lines[end], fence):
            end += 1
        assert end < len(lines), f"{path.relative_to(ROOT)}:{i + 1}: unclosed code fence"
        exits = [int(m.group(1)) for m in map(re.compile(r"^exit:\s*(\d+)$").match, markers) if m]
        blocks.append(Block(path, i + 1, lang, lines[i + 1:end], "illustrative" in markers, exits[0] if exits else 0))
        i = end + 1
    return blocks


def all_blocks() -> list[Block]:
    return [b for path in DOCS for b in fenced_blocks(path)]


def is_plain_shapecheck(text: str) -> bool:
    """A single `shapecheck ...` command: no pipes, redirections or command lists."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens = list(lexer)
    return bool(tokens) and tokens[0] == "shapecheck" and not any(set(t) <= SHELL_OPERATORS for t in tokens)


def runnable() -> list[tuple[Block, Command]]:
    return [(b, c) for b in all_blocks() if not b.illustrative for c in b.commands()]


RUNNABLE = runnable()


def test_the_docs_have_commands_that_run():
    # guards against a parser change that silently runs nothing
    assert len(RUNNABLE) >= 3, [b.where for b, _ in RUNNABLE]


def test_every_shell_block_runs_or_is_marked_illustrative():
    bad = []
    for b in all_blocks():
        if b.illustrative or b.lang not in PROMPT_LANGS | SCRIPT_LANGS:
            continue
        cmds = b.commands()
        if not cmds:
            bad.append(f"{b.where}: a {b.lang or 'plain'} block with no command to run")
        bad += [f"{b.where}: {c.text!r} is not a plain shapecheck command" for c in cmds
                if not is_plain_shapecheck(c.text)]
    assert not bad, "mark these blocks <!-- illustrative --> or make them runnable:\n" + "\n".join(bad)


@pytest.mark.parametrize(("block", "command"), RUNNABLE, ids=[b.where for b, _ in RUNNABLE])
def test_documented_command(block: Block, command: Command):
    if not is_plain_shapecheck(command.text):
        pytest.fail(f"{block.where}: {command.text!r} is not a plain shapecheck command")
    res = run_cli(*shlex.split(command.text)[1:], timeout=120)
    assert res.returncode == block.exit, (
        f"{block.where}: {command.text}\nexit {res.returncode}, documented {block.exit}\n{res.stderr[-2000:]}")
    shown = first_verdict(command.output)
    if shown is not None:
        assert first_verdict(res.stdout.splitlines()) == shown, f"{block.where}: {command.text}\n{res.stdout[:2000]}"


def first_verdict(lines: list[str]) -> str | None:
    for line in lines:
        m = VERDICT.match(line.strip())
        if m:
            return m.group(1) or m.group(2)
    return None


def test_readme_is_short():
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines; move reference material to docs/"


def test_readme_shows_the_test_command_ci_runs():
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    marks = [i for i, line in enumerate(lines) if "README's test command" in line]
    assert marks and marks[-1] + 1 < len(lines), ".ci/run: no line after the \"README's test command\" comment"
    command = lines[marks[-1] + 1].strip()
    assert command and command in README.read_text(encoding="utf-8").splitlines(), command


# ---- links ------------------------------------------------------------------------------------------------

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def prose(path: Path) -> str:
    """The file without its fenced blocks, where brackets are code, not links."""
    lines = path.read_text(encoding="utf-8").splitlines()
    fenced = set()
    for b in fenced_blocks(path):
        fenced.update(range(b.line - 1, b.line + len(b.body) + 1))
    return "\n".join(line for i, line in enumerate(lines) if i not in fenced)


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation other than - and _ dropped, spaces to -."""
    seen: dict[str, int] = {}
    for line in prose(path).splitlines():
        m = HEADING.match(line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).replace("`", "").lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        if n:
            seen[f"{slug}-{n}"] = 1
    return set(seen)


def test_relative_links_point_to_existing_files():
    bad = []
    for path in DOCS + (ROOT / "bench" / "README.md",):
        for target in LINK.findall(prose(path)):
            if re.match(r"^[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            if not dest.exists():
                bad.append(f"{path.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    assert not bad, "\n".join(bad)
