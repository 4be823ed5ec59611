"""The one writer of draft contracts (TOML text in the contract format, docs/contracts.md): ``contract draft OP``
(``schema_text``, from the schema plan of ``schema_draft``), and ``audit --draft DIR`` (``draft_dir.write_drafts``), which
writes the same draft for each audited op with the audit's findings and inferred relations as comments. A draft
is a starting point to review, not a proof; it loads back before it is kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


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
                "  # TODO: the values to check" if any(a.value == n and a.todo and a.kind != "tensor" for a in args) else ""
            lines.append(f"{n} = {toml_value(list(values))}{todo}")
    if traced.requires:
        lines += ["", "[domain]", "requires = ["]
        lines += [f"    {toml_value(r)},  # {why}" for r, why in traced.requires]
        lines.append("]")
    for r in getattr(traced, "rejects", []):
        lines += ["", "[[rejects]]", f"id = {toml_value(r.id)}", f"when = {toml_value(r.when)}",
                  *([f"message = {toml_value(r.message)}"] if r.message else []), f"source = {toml_value(r.source)}"]
    for a in args:
        lines += ["", *_render_arg(a)]
    paths = list(getattr(traced, "paths", []) or [])
    if len(paths) < 2:
        lines += ["", "[[paths]]", 'id = "sample"',
                  'when = "True"  # TODO: one [[paths]] per runtime code path, each with its precondition']
        for todo in traced.todos:
            lines.append(f"# TODO: {todo}")
        lines.append(f"outputs = [{_outputs(traced.outputs, getattr(traced, 'tables', []), names)}]  # what the "
                     "meta kernel returns at a sample point, traced symbolically")
        return "\n".join(lines) + "\n"
    for i, path in enumerate(paths):
        shown = ", ".join(path.cases[:4]) + (f", ... ({len(path.cases)} cases)" if len(path.cases) > 4 else "")
        lines += ["", "[[paths]]", f'id = "sample_{i + 1}"',
                  f"when = {toml_value(path.when)}  # the cases traced with these outputs: {shown}"]
        if i == 0:
            lines.append("# TODO: the paths follow the choices the traced outputs differ by; a runtime code path of "
                         "its own (its precondition over the dims) is a person's decision")
        lines += [f"# TODO: {todo}" for todo in path.todos]
        lines.append(f"outputs = [{_outputs(path.outputs, path.tables, names)}]  # what the meta kernel returns at a "
                     "sample point of these cases, traced symbolically")
    return "\n".join(lines) + "\n"


def _outputs(outputs: list[str | None], tables: list[dict[str, Any] | None] | None, names: Any) -> str:
    tables = list(tables or [])
    return ", ".join(output_entry(o, tables[i] if i < len(tables) else None, names)
                     for i, o in enumerate(outputs)) or '"unspecified"'


def output_entry(shape: str | None, table: dict[str, Any] | None, names: Any = None) -> str:
    """One entry of a path's ``outputs``: ``"unspecified"``, a shape, or a table with the trace's dtype (the
    tensors' dtype choice where it is the sample's), layout or strides, and data-dependent ``sizes``."""
    if shape is None:
        return '"unspecified"'
    if not table:
        return toml_value(shape)
    fields = [f"shape = {toml_value(shape)}"]
    dtype = table.get("dtype")
    if dtype:
        choice = next((n for n, v in (getattr(names, "choices", {}) or {}).items()
                       if n.startswith("dtype") and tuple(v) == (dtype,)), None)
        fields.append(f"dtype = {toml_value(choice or dtype)}")
    if table.get("layout"):
        fields.append(f"layout = {toml_value(table['layout'])}")
    elif table.get("strides"):
        fields.append(f"strides = {toml_value(table['strides'])}")
    if table.get("sizes"):
        sizes = ", ".join(f"{n} = {{ min = {toml_value(lo)}, max = {toml_value(hi)} }}"
                          for n, (lo, hi) in table["sizes"].items())
        fields.append(f"sizes = {{ {sizes} }}")
    return "{ " + ", ".join(fields) + " }"


#: the dtypes whose tensors' values a contract draws between ``low`` and ``high``
INTEGER_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})


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
        if a.dtype in INTEGER_DTYPES:  # runtime checks draw its values in [-8, 9) by default: an index out of range
            fields.append("low = 0\nhigh = 1  # TODO: the values the op accepts (low <= v < high); zeros make every "
                          "index and offset valid")
    elif a.kind == "tensors":
        fields += [f"length = {toml_value(a.value)}                 # a choice",
                   f"shapes = {toml_value(a.shapes)}{rank_note}", f"dtype = {toml_value(a.dtype)}"]
    elif a.kind == "ints" and a.symbolic:
        fields.append(f"value = {toml_value(a.dims)}{rank_note}")
    elif a.kind == "int" and a.symbolic:
        fields.append(f"value = {toml_value(a.dims[0])}")
    elif a.kind == "str":
        fields.append(f"value = {toml_value(repr(a.value))}")  # a string literal in the expression language
    elif a.kind == "dtype":
        fields.append(f"value = {toml_value(a.value)}")
    elif a.kind != "none":
        fields.append(f"value = {toml_value(a.value)}")
    tail = []
    if a.todo and not (a.choice is not None and a.kind == "int"):  # a choice's TODO is on the choice's line
        tail.append(f"# TODO: {a.todo}")
    tail.append(f"doc = {toml_value('schema: ' + a.type + ' ' + a.name)}")
    return arg_table(a.name, a.kind, fields, keyword=a.keyword_only, tail=tail)


# ---------------------------------------------------------------------------------------------------------
# audit --draft DIR: contract draft's text for each audited op, with the audit's findings as comments


def audit_notes(rec: dict[str, Any]) -> list[str]:
    """The audit's word on one op, as comment lines of its draft: its status, each finding (rule, class, guard,
    line, counterexample), each inferred requires (in the audit's dim names: self_0 is axis 0 of self)."""
    lines = [f"shapecheck audit: {rec['status']}; example {rec['example'] or '(none)'}"]
    for f in rec["findings"]:
        loc = f.get("location")
        where = f" at {Path(loc['file']).name}:{loc['line']}" if loc else ""
        point = ", ".join(f"{k}={v}" for k, v in (f.get("counterexample") or {}).items())
        lines.append(f"audit finding {f['code']} {f['class']}: {f['expr']}{where}" + (f" ({point})" if point else ""))
    for r in rec["requires"]:
        lines.append(f"audit inferred requires (audit dim names): {r['expr']}")
    return lines
