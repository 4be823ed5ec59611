"""Confirm audit findings with torch.export: for each of the top findings of an audit report, export the op
on its example inputs with the guard's dims as ``torch.export.Dim`` (min 2, as export treats sizes) and say
what export did (for a kernel error or a data-dependent finding, every tensor dim is dynamic): it failed (the error's first line), it specialised a dim, it narrowed a dim's range (a
guard), or it kept every dim dynamic over the full range (not confirmed).

    .venv/bin/python bench/export_confirm.py AUDIT.json [--top N] [--per-class K]

Sizes: the finding's counterexample where a size is at least 2, else the example's 3 (export specialises 0
and 1). Each export runs in this process after ``torch._dynamo.reset()``.
"""

from __future__ import annotations

import argparse
import json
import re
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")


def confirm(op_name: str, finding: dict) -> str:
    import torch
    from torch.export import Dim, export

    from shapecheck._torch import core as C
    from shapecheck.audit.inputs import at_point, from_schema
    from shapecheck.audit.run import audit_kernel

    kernel = audit_kernel(op_name, None)
    inputs = from_schema(op_name, C.resolve_op(op_name), kernel.fn)
    example = dict(inputs.dims())
    point = {d: (v if v >= 2 else example[d]) for d, v in finding["counterexample"].items()}
    guard_dims = [d for d in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", finding["expr"]) if d in example]
    tensors, sizes = [], {}
    for name, _, tree in inputs.args:
        if tree[0] == "tensor":
            tensors.append((name, tree))
    if finding["class"] in ("kernel-error", "data-dependent"):  # no guard expression: every tensor dim dynamic
        guard_dims = [d for _, t in tensors for d in t[1]]
    if not guard_dims or not all(any(d in t[1] for _, t in tensors) for d in guard_dims):
        return "not tried (the guard's dims are not tensor dims)"
    args, kwargs = at_point(inputs, point)
    real_args = [torch.zeros(a.shape, dtype=a.dtype) if isinstance(a, torch.Tensor) else a for a in args]
    tensor_positions = [i for i, a in enumerate(real_args) if isinstance(a, torch.Tensor)]
    op = C.resolve_op(op_name)

    class M(torch.nn.Module):
        def forward(self, *xs):
            full = list(real_args)
            for i, x in zip(tensor_positions, xs, strict=True):
                full[i] = x
            return op(*full, **kwargs)

    shapes = []
    for _name, tree in tensors:
        spec = {axis: sizes.setdefault(d, Dim(d, min=2)) for axis, d in enumerate(tree[1]) if d in guard_dims}
        shapes.append(spec or None)
    C.reset_dynamo()
    try:
        with C.quiet_torch_logging():
                ep = export(M(), tuple(real_args[i] for i in tensor_positions), dynamic_shapes=(tuple(shapes),),
                        strict=False)
    except Exception as err:  # noqa: BLE001 - export's failure is the confirmation
        first = (str(err).strip().splitlines() or [""])[0]
        return f"export fails: {type(err).__name__}: {first[:160]}"
    ranges = {str(k): (v.lower, v.upper) for k, v in ep.range_constraints.items()}
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    dynamic = {str(s) for n in placeholders for s in n.meta["val"].shape if not isinstance(s, int)}
    if len(dynamic) < len(guard_dims):
        return f"export specialises (dynamic symbols kept: {sorted(dynamic)} of {guard_dims})"
    narrowed = {k: r for k, r in ranges.items() if r[0] > 2 or str(r[1]) not in ("int_oo", "oo")}
    return f"export narrows the range: {narrowed}" if narrowed else "not confirmed (export keeps the dims dynamic)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("audit")
    ap.add_argument("--per-class", type=int, default=2, help="findings tried per class, in ranked order")
    args = ap.parse_args()
    doc = json.loads(Path(args.audit).read_text(encoding="utf-8"))
    taken: dict[str, int] = {}
    for f in doc["findings"]:
        if taken.get(f["class"], 0) >= args.per_class or f["op"].startswith("aten::_test"):
            continue
        taken[f["class"]] = taken.get(f["class"], 0) + 1
        try:
            outcome = confirm(f["op"], f)
        except Exception as err:  # noqa: BLE001 - the repro itself could not be built
            outcome = f"not tried ({type(err).__name__}: {str(err)[:120]})"
        print(f"{f['code']} {f['class']:<20} {f['op']:<40} {f['expr'][:50]:<50} -> {outcome}", flush=True)


if __name__ == "__main__":
    main()
