"""``audit --draft DIR``: a draft contract per audited op, from what the audit inferred: its dims (one per
input axis), its arguments as the example passed them, the inferred ``requires`` that are expressions, and
a path per finished trace with its region and output shapes. A draft is a starting point to review, not a
proof: its dims' ranges are the audit's, and its paths are the traces the audit made.

The format is the contract format (docs/contracts.md); every draft is loaded back before it is kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..logic import expr as E
from .explore import MAX_SIZE, MIN_SIZE


def _q(text: str) -> str:
    return json.dumps(text)  # a TOML basic string


def _arg(name: str, keyword: bool, tree: tuple) -> list[str] | None:
    """The ``[[args]]`` table of one argument, or None when the contract format cannot say it."""
    head = ["[[args]]", f"name = {_q(name)}"]
    kind = tree[0]
    value = tree[1] if kind in ("const", "list") else None
    if kind == "tensor":
        shape = "(" + ", ".join(tree[1]) + ("," if len(tree[1]) == 1 else "") + ")"
        body = ['kind = "tensor"', f"dtype = {_q(tree[3])}", f"shape = {_q(shape)}"]
    elif kind == "sym":
        body = ['kind = "int"', f"value = {_q(tree[1])}"]
    elif kind == "list" and all(t[0] == "sym" for t in tree[1]):
        body = ['kind = "ints"', f"value = {_q('(' + ', '.join(t[1] for t in tree[1]) + ',)')}"]
    elif value is None:
        body = ['kind = "none"']
    elif isinstance(value, bool):
        body = ['kind = "bool"', f"value = {'true' if value else 'false'}"]
    elif isinstance(value, int):
        body = ['kind = "int"', f"value = {value}"]
    elif isinstance(value, float):
        body = ['kind = "float"', f"value = {value!r}"]
    elif isinstance(value, str):
        body = ['kind = "str"', f"value = {_q(value)}"]
    elif isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        body = ['kind = "ints"', f"value = {json.dumps(value)}"]
    else:
        return None
    return head + body + (["keyword = true"] if keyword else []) + [""]


def draft_text(rec: dict[str, Any], inputs: Any) -> str | None:
    """The draft contract of one audited op; None when its arguments or outputs are outside the format."""
    args = [_arg(name, kw, tree) for name, kw, tree in inputs.args]
    paths = [p for p in rec.get("paths") or [] if p["outputs"] and all(o is not None for o in p["outputs"])]
    if any(a is None for a in args) or not paths:
        return None
    requires = []
    for r in rec["requires"]:
        try:
            E.parse(r["expr"])
        except Exception:  # noqa: BLE001 - evidence text such as "(raised) ...": not a precondition
            continue
        requires.append(r["expr"])
    lines = [f"# A draft contract written by shapecheck audit --draft: {rec['status']}; review it before use.",
             f"# example: {rec['example']}", "schema = 1", f"op = {_q(rec['op'])}", "", "[dims]"]
    lines += [f"{d} = {{ min = {MIN_SIZE}, max = {MAX_SIZE} }}" for d, _ in inputs.dims()]
    if requires:
        lines += ["", "[domain]", "requires = [" + ", ".join(_q(r) for r in requires) + "]"]
    lines.append("")
    for a in args:
        lines += a
    for i, p in enumerate(paths, 1):
        lines += ["[[paths]]", f'id = "trace{i}"', f"when = {_q(p['when'])}",
                  "outputs = [" + ", ".join(_q(o) for o in p["outputs"]) + "]", ""]
    return "\n".join(lines)


def write_drafts(run: Any, source: Any, directory: str) -> int:
    """One ``DIR/<ns>/<name>.<overload>.toml`` per op with a draft that loads back; the number written."""
    from .._torch import core as C
    from ..contract.load import load_contract
    from ..errors import ShapecheckError, UserError
    from .inputs import from_opinfo, from_schema
    from .run import audit_kernel

    written = 0
    for rec in run.records:
        if rec["status"] in ("no-inputs", "not-run"):
            continue
        kernel = audit_kernel(rec["op"], source)
        inputs = from_opinfo(rec["op"], kernel.fn) or from_schema(rec["op"], C.resolve_op(rec["op"]), kernel.fn)
        text = draft_text(rec, inputs) if inputs is not None else None
        if text is None:
            continue
        ns, _, rest = rec["op"].partition("::")
        path = Path(directory) / ns / f"{rest}.toml"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as err:
            raise UserError(f"--draft {directory}: cannot write {path} ({err.strerror})") from None
        try:
            load_contract(str(path))
        except ShapecheckError:
            path.unlink()  # the format cannot say this op's example: no draft rather than a broken one
            continue
        written += 1
    return written
