"""The docs hold: every command in a shell block of README.md and docs/*.md runs as documented, or the block
is marked illustrative; README.md stays short and shows the command .ci/run runs; relative links resolve.

Markers are HTML comments on the lines right above a fence: ``<!-- illustrative -->`` (not run) and
``<!-- exit: N -->`` (the documented exit code; 0 when absent). In a ``console`` block, ``$ `` starts a
command and the lines after it are its output; in an ``sh`` block every line is a command.

A documented output is an excerpt: ``...`` lines stand for lines left out. Every other line it shows must be
printed, in the order shown, with the same stable fields (``stable``): its first word, the verdict, the
counts (``6 violations``, ``272 cases``), the rule ids, the ``file:line`` places and the names of the dims a
counterexample assigns. Timings and the values z3 picks for a counterexample are not compared; a line that
holds ``...`` itself shows a part of its fields.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, invoke

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
    # in this process, as the console script's main runs it (``invoke``): what is compared is the output and the
    # exit code, not the process; a fresh interpreter per command cost about 3 s of imports each
    res = invoke(*shlex.split(command.text)[1:])
    assert res.returncode == block.exit, (
        f"{block.where}: {command.text}\nexit {res.returncode}, documented {block.exit}\n{res.stderr[-2000:]}")
    shown = first_verdict(command.output)
    if shown is not None:
        assert first_verdict(res.stdout.splitlines()) == shown, f"{block.where}: {command.text}\n{res.stdout[:2000]}"
    missing = unmatched(command.output, res.stdout.splitlines())
    assert missing is None, (f"{block.where}: {command.text}\nthe documented line {missing!r} is not printed (with "
                             f"these stable fields, in this order); the output is:\n{res.stdout[:6000]}")


def first_verdict(lines: list[str]) -> str | None:
    for line in lines:
        m = VERDICT.match(line.strip())
        if m:
            return m.group(1) or m.group(2)
    return None


# ---- stable fields of an output line -------------------------------------------------------------------------

ELLIPSIS = "..."
COUNT = re.compile(r"(?<![\w.])(\d+) ([A-Za-z][\w-]*)")  # 6 violations, 272 cases (not 0.99s, 44.5 examples/s)
RULE = re.compile(r"\bSC\d{3}\b")
PLACE = re.compile(r"[\w./-]+\.(?:py|toml|md|json):\d+")  # file:line
ASSIGNED = re.compile(r"\b([A-Za-z_]\w*)=-?\d")  # the dims a counterexample assigns, not the values


def stable(line: str) -> dict[str, list[str]]:
    """What of an output line a doc may show and the program must keep: its first word, the verdict, counts,
    rule ids, file:line places and the names a counterexample assigns."""
    text = line.strip()
    verdict = VERDICT.match(text)
    return {"first word": text.split()[:1],
            "verdict": [verdict.group(1) or verdict.group(2)] if verdict else [],
            "counts": [" ".join(m) for m in COUNT.findall(text)],
            "rules": RULE.findall(text),
            "lines": PLACE.findall(text),
            "dims": ASSIGNED.findall(text)}


def shows(documented: str, printed: str) -> bool:
    """Whether ``printed`` is the line ``documented`` shows: the same stable fields, or, where the documented
    line elides part of itself (``...``), a part of them (its first word and verdict still the same)."""
    want, got = stable(documented), stable(printed)
    if want["first word"] != got["first word"] or want["verdict"] != got["verdict"]:
        return False
    if ELLIPSIS in documented:
        return all(not Counter(want[k]) - Counter(got[k]) for k in want)
    return want == got


def unmatched(documented: list[str], printed: list[str]) -> str | None:
    """The first documented output line not printed, in order, with its stable fields; None when all are."""
    rest = iter(printed)
    for line in documented:
        if not line.strip() or line.strip() == ELLIPSIS:
            continue
        if not any(shows(line, p) for p in rest):
            return line
    return None


@pytest.mark.parametrize("documented, printed, ok", [
    ("FAIL: op (1 cases checked, 6 violations, 0.99s)", "FAIL: op (1 cases checked, 6 violations, 2.5s)", True),
    ("FAIL: op (1 cases checked, 6 violations, 0.99s)", "FAIL: op (1 cases checked, 5 violations, 0.99s)", False),
    ("FAIL: op (1 cases checked)", "PASS: op (1 cases checked)", False),
    ("  at:   k.py:64 in f", "  at:   k.py:65 in f", False),
    ("SC001 guard-on-dynamic-dim: L <= 8", "SC016 guard-on-dynamic-dim: L <= 8", False),
    ("  counterexample: B=1, L=9", "  counterexample: B=2, L=12", True),
    ("  counterexample: B=1, L=9", "  counterexample: B=1, S=9", False),
    ("  other side: q_0=0, q_1=0, ...", "  other side: q_0=0, q_1=0, q_2=64", True),
    ("  fix:      return that shape", "  counterexample: N=9", False),
    ("gate: PASS (12 contracts, 272 cases)", "gate: PASS (12 contracts, 193 cases)", False),
])
def test_stable_fields_tell_a_drift_from_a_timing(documented, printed, ok):
    assert shows(documented, printed) is ok


def test_documented_lines_are_matched_in_order_and_an_ellipsis_skips():
    printed = ["FAIL: op (1 cases checked)", "x", "  fix: y", "SC001 a: b"]
    assert unmatched(["FAIL: op (1 cases checked)", "...", "SC001 a: b"], printed) is None
    assert unmatched(["SC001 a: b", "  fix: y"], printed) == "  fix: y"  # out of order
    assert unmatched(["FAIL: op (1 cases checked)", "  what to change:"], printed) == "  what to change:"


# ---- facts the prose states -------------------------------------------------------------------------------

FAMILY = re.compile(r"shipped family \((\d+) contracts, (\d+) cases\)")


def test_wherever_the_docs_count_the_shipped_family_the_count_is_right(shipped_gate):
    """As the gate's summary line counts them (``gate: PASS (12 contracts: ...; 272 cases; ...)``)."""
    want = (len(shipped_gate.runs), sum(len(r.report.cases) for r in shipped_gate.runs))
    found = [(path.relative_to(ROOT), (int(m[1]), int(m[2])))
             for path in (*DOCS, ROOT / "bench" / "README.md")
             for m in FAMILY.finditer(" ".join(path.read_text(encoding="utf-8").split()))]
    assert found, "no doc says 'shipped family (N contracts, M cases)' any more: the guard checks nothing"
    assert [f for f in found if f[1] != want] == [], f"the shipped family is {want[0]} contracts, {want[1]} cases"


def rule_ids(text: str) -> set[str]:
    """The rule ids a text names, ranges (``SC001-SC008``) spelled out over the registry."""
    from shapecheck.rules import RULES

    out: set[str] = set()
    for first, last in re.findall(r"\b(SC\d{3})(?:-(SC\d{3}))?\b", text):
        out |= {c for c in RULES if first <= c <= (last or first)}
    return out


def test_the_pre_commit_hook_names_the_rules_the_gate_reports():
    from shapecheck.rules import rules_of

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert rule_ids(hook["description"]) == set(rules_of("gate")), hook["description"]


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
