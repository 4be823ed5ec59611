"""Compare an audit report with PyTorch's own dynamic-shape xfail list (``bench/xfail_lists.json``, read
from pytorch/pytorch's test/test_proxy_tensor.py; the installed wheel ships no test files).

    .venv/bin/python bench/xfail_compare.py AUDIT.json

An OpInfo name maps to the aten ops named like it (``nn.functional.adaptive_max_pool2d`` -> every overload of
``aten::adaptive_max_pool2d``; ``fft.rfft`` -> ``aten::fft_rfft``; ``linalg.eig`` -> ``aten::linalg_eig``). A
listed op is *explained* when the audit reports a finding or a note on one of its overloads (a finding, or a note: the trace bound, z3); *only relations* when it infers requires and nothing
else; *clean* when the audit found nothing there; *not audited* when no overload was audited (no meta
kernel, or no schema-derived input). Ops with findings that the list does not name are *beyond* it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def aten_name(opinfo: str) -> str:
    name = opinfo.removeprefix("nn.functional.").removeprefix("special.") if opinfo.startswith("nn.functional.") \
        else opinfo
    return "aten::" + name.replace(".", "_")


def main() -> None:
    audit = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    listed = json.loads((HERE / "xfail_lists.json").read_text(encoding="utf-8"))["symbolic_tensor_failures"]
    by_packet: dict[str, list[dict]] = {}
    for rec in audit["ops"]:
        by_packet.setdefault(rec["op"].split(".")[0], []).append(rec)
    explained, relations, clean, missing, names = [], [], [], [], set()
    for e in listed:
        packet = aten_name(e["opinfo"])
        names.add(packet)
        recs = [r for r in by_packet.get(packet, []) if r["status"] not in ("no-inputs", "not-run")]
        label = e["opinfo"] + (f".{e['variant']}" if e["variant"] else "")
        if not recs:
            missing.append(label)
        elif any(r["findings"] or r["notes"] for r in recs):
            kinds = sorted({f["class"] for r in recs for f in r["findings"]}) or ["inconclusive"]
            explained.append(f"{label} ({', '.join(kinds)})")
        elif any(r["requires"] for r in recs):
            relations.append(label)
        else:
            clean.append(label)
    beyond = sorted({r["op"].split(".")[0] for r in audit["ops"] if r["findings"]} - names)
    print(f"listed: {len(listed)}; explained by a finding: {len(explained)}; only relations (inferred requires, "
          f"no finding): {len(relations)}; audited clean: {len(clean)}; "
          f"not audited: {len(missing)}; packets with findings beyond the list: {len(beyond)}")
    print("explained:", "; ".join(explained))
    print("only relations:", "; ".join(relations))
    print("clean:", "; ".join(clean))
    print("not audited:", "; ".join(missing))


if __name__ == "__main__":
    main()
