"""The one writer of draft contracts (TOML text in the contract format, docs/contracts.md): ``contract draft OP``
(``schema_text``, from the schema plan of ``schema_draft``) and ``audit --draft DIR`` (``audit_text``, from what
the audit inferred: its dims, one per input axis; its arguments as the example passed them; the inferred
``requires`` that are expressions; a path per finished trace with its region and output shapes), and the
``audit --draft`` run (``write_drafts``). A draft is a starting point to review, not a proof. Both load back
before they are kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..logic import expr as E


def toml_value(value: Any) -> str:
    """A value as TOML: a basic string, true/false, an array, a number."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def arg_table(name: str, kind: str, fields: list[str], *, keyword: bool, tail: list[str] = ()) -> list[str]:
    """The lines of one ``[[args]]`` table: name, kind, the kind's ``fields`` (written lines), ``keyword``, then
    ``tail`` (comments, doc)."""
    return ["[[args]]", f"name = {toml_value(name)}", f"kind = {toml_value(kind)}", *fields] + \
        (["keyword = true"] if keyword else []) + list(tail)


# ---------------------------------------------------------------------------------------------------------
# contract draft OP: from the schema plan (schema_draft.Arg, its dim names and the trace)


def schema_text(op_name: str, args: list[Any], names: Any, head: str, traced: Any) -> str:
    """The contract text of ``contract draft``: ``args`` are ``schema_draft.Arg``s, ``names`` its dim names
    and choices, ``traced`` what the trace found."""
    lines = [head.rstrip("\n"), "# Every `# TODO` marks a decision for a person. Next: shapecheck contract check "
             "FILE, then shapecheck verify op " + op_name + " --contract FILE.", ""]
    lines += ["schema = 1", f"op = {toml_value(op_name)}", "",
              "[dims]  # TODO: each dim's range (min = 0 where empty tensors are allowed; a max where the op has one)"]
    for a in args:
        for i, d in enumerate(a.dims):
            lines.append(f"{d} = {{ min = 1, doc = {toml_value(_dim_doc(a, i))} }}")
    if names.choices:
        lines += ["", "[choices]"]
        for n, values in names.choices.items():
            todo = "  # TODO: the dtypes the op supports" if n.startswith("dtype") else \
                "  # TODO: the values to check" if any(a.value == n and a.todo for a in args) else ""
            lines.append(f"{n} = {toml_value(list(values))}{todo}")
    if traced.requires:
        lines += ["", "[domain]", "requires = ["]
        lines += [f"    {toml_value(r)},  # {why}" for r, why in traced.requires]
        lines.append("]")
    for a in args:
        lines += ["", *_render_arg(a)]
    lines += ["", "[[paths]]", 'id = "sample"',
              'when = "True"  # TODO: one [[paths]] per runtime code path, each with its precondition']
    for todo in traced.todos:
        lines.append(f"# TODO: {todo}")
    outputs = [o if o is not None else "unspecified" for o in traced.outputs] or ["unspecified"]
    lines.append(f"outputs = {toml_value(outputs)}  # what the meta kernel returns at a sample point, traced "
                 "symbolically")
    return "\n".join(lines) + "\n"


def _dim_doc(a: Any, i: int) -> str:
    if a.kind == "tensor":
        return f"{a.name}.size({i})"
    if a.kind == "tensors":
        return f"{a.name}[{i // a.rank}].size({i % a.rank})"
    return f"{a.name}[{i}]" if a.kind == "ints" else a.name


def _render_arg(a: Any) -> list[str]:
    fields = []
    rank_note = f"  # rank from {a.rank_from}" if a.rank_from else ""
    if a.kind == "tensor":
        fields += [f"dtype = {toml_value(a.dtype)}",
                   f"shape = {toml_value('(' + ', '.join(a.dims) + (',' if a.rank == 1 else '') + ')')}" + rank_note]
        if a.optional:
            fields.append(f"present = {toml_value(a.value)}")
    elif a.kind == "tensors":
        fields += [f"length = {toml_value(a.value)}                 # a choice",
                   f"shapes = {toml_value(a.shapes)}{rank_note}", f"dtype = {toml_value(a.dtype)}"]
    elif a.kind == "ints" and a.symbolic:
        fields.append(f"value = {toml_value(a.dims)}{rank_note}")
    elif a.kind == "int" and a.symbolic:
        fields.append(f"value = {toml_value(a.dims[0])}")
    elif a.kind == "str":
        fields.append(f"value = {toml_value(repr(a.value))}")  # a string literal in the expression language
    elif a.kind != "none":
        fields.append(f"value = {toml_value(a.value)}")
    tail = []
    if a.todo and not (a.choice is not None and a.kind == "int"):  # a choice's TODO is on the choice's line
        tail.append(f"# TODO: {a.todo}")
    tail.append(f"doc = {toml_value('schema: ' + a.type + ' ' + a.name)}")
    return arg_table(a.name, a.kind, fields, keyword=a.keyword_only, tail=tail)


# ---------------------------------------------------------------------------------------------------------
# audit --draft DIR: from an audit record


def _arg(name: str, keyword: bool, tree: tuple) -> list[str] | None:
    """The ``[[args]]`` table of one argument, or None when the contract format cannot say it."""
    kind = tree[0]
    value = tree[1] if kind in ("const", "list") else None
    if kind == "tensor":
        shape = "(" + ", ".join(tree[1]) + ("," if len(tree[1]) == 1 else "") + ")"
        kind, fields = "tensor", [f"dtype = {toml_value(tree[3])}", f"shape = {toml_value(shape)}"]
    elif kind == "sym":
        kind, fields = "int", [f"value = {toml_value(tree[1])}"]
    elif kind == "list" and all(t[0] == "sym" for t in tree[1]):
        kind, fields = "ints", [f"value = {toml_value('(' + ', '.join(t[1] for t in tree[1]) + ',)')}"]
    elif value is None:
        kind, fields = "none", []
    elif isinstance(value, bool):
        kind, fields = "bool", [f"value = {toml_value(value)}"]
    elif isinstance(value, int):
        kind, fields = "int", [f"value = {value}"]
    elif isinstance(value, float):
        kind, fields = "float", [f"value = {value!r}"]
    elif isinstance(value, str):
        kind, fields = "str", [f"value = {toml_value(value)}"]
    elif isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        kind, fields = "ints", [f"value = {json.dumps(value)}"]
    else:
        return None
    return arg_table(name, kind, fields, keyword=keyword, tail=[""])


def audit_text(rec: dict[str, Any], inputs: Any) -> str | None:
    """The draft contract of one audited op; None when its arguments or outputs are outside the format."""
    from .explore import MAX_SIZE, MIN_SIZE  # loads torch: only once there is an audit

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
             f"# example: {rec['example']}", "schema = 1", f"op = {toml_value(rec['op'])}", "", "[dims]"]
    lines += [f"{d} = {{ min = {MIN_SIZE}, max = {MAX_SIZE} }}" for d, _ in inputs.dims()]
    if requires:
        lines += ["", "[domain]", "requires = [" + ", ".join(toml_value(r) for r in requires) + "]"]
    lines.append("")
    for a in args:
        lines += a
    for i, p in enumerate(paths, 1):
        lines += ["[[paths]]", f'id = "trace{i}"', f"when = {toml_value(p['when'])}",
                  "outputs = [" + ", ".join(toml_value(o) for o in p["outputs"]) + "]", ""]
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
        text = audit_text(rec, inputs) if inputs is not None else None
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
