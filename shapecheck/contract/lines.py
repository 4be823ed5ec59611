"""Where the tables of a contract file stand: the line of each table of an array of tables (``[[paths]]``,
``[[rejects]]``, ``[[suppress]]``), read from the file's text once, when it loads (``contract.load``). A path, a
region and a suppression keep their line (``PathSpec.line``, ...), so a report points at the table a finding is
about without reading the file again.

TOML parsers give no positions; this scan reads only what it needs: table headers at the start of a line and
``id = ...`` keys, skipping the insides of multi-line strings. A table written inline (``paths = [{...}]``) has
no line (0).
"""

from __future__ import annotations

import re

_ARRAY = re.compile(r"\s*\[\[\s*([A-Za-z0-9_\-]+)\s*\]\]\s*(#.*)?$")  # [[paths]]
_HEADER = re.compile(r"\s*\[\[?\s*([A-Za-z0-9_.\-]+)\s*\]\]?\s*(#.*)?$")  # [domain], [[paths]], [paths.x]
_ID = re.compile(r"\s*id\s*=")
_QUOTES = ('"""', "'''")


def table_lines(text: str) -> dict[str, list[int]]:
    """Per array of tables, the line of each of its tables in file order: the line of its ``id`` key when it
    has one (where a person looks for a path), else the line of its header."""
    out: dict[str, list[int]] = {}
    current: str | None = None  # the array whose last table the lines below belong to
    has_id = False
    quote = ""  # the delimiter of the multi-line string being skipped
    for n, line in enumerate(text.splitlines(), 1):
        if quote:
            if line.count(quote) % 2:
                quote = ""
            continue
        array, header = _ARRAY.match(line), _HEADER.match(line)
        if array:
            current, has_id = array.group(1), False
            out.setdefault(current, []).append(n)
        elif header and not header.group(1).startswith(f"{current}."):  # another table; a sub-table stays
            current = None
        elif current is not None and not has_id and _ID.match(line):
            out[current][-1], has_id = n, True
        quote = next((q for q in _QUOTES if line.count(q) % 2), "")
    return out


def line_of(lines: dict[str, list[int]], array: str, index: int, count: int) -> int:
    """The line of table ``index`` of ``array`` (of ``count`` loaded), or 0 when the scan did not see exactly
    ``count`` tables there (an inline array)."""
    found = lines.get(array, [])
    return found[index] if len(found) == count and index < count else 0
