"""The seed's reproduction (issue #177603) as torch.export runs it: one export with a dynamic query length,
or a sweep of static exports. Used by bench_verify.py and by the export-agreement tests."""

import sys
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
from torch.export import Dim, export  # noqa: E402


class SeedModule(torch.nn.Module):
    def __init__(self, dtype=torch.bfloat16):
        super().__init__()
        self.register_buffer("k", torch.zeros(1, 4, 64, 128, dtype=dtype))
        self.register_buffer("v", torch.zeros(1, 4, 64, 128, dtype=dtype))

    def forward(self, q, mask):
        out, _ = torch.ops.aten._scaled_dot_product_attention_math_for_mps(q, self.k, self.v, mask, 0.0, False, None)
        return out


def export_dynamic(lo=1, hi=64, seq_len=4):
    model = SeedModule().eval()
    q = torch.randn(1, 4, seq_len, 128, dtype=torch.bfloat16)
    mask = torch.zeros(seq_len, 64, dtype=torch.bfloat16)
    seq = Dim("seq", min=lo, max=hi)
    return export(model, (q, mask), dynamic_shapes={"q": {2: seq}, "mask": {0: seq}}, strict=True)


def export_static(seq_len):
    model = SeedModule().eval()
    q = torch.randn(1, 4, seq_len, 128, dtype=torch.bfloat16)
    mask = torch.zeros(seq_len, 64, dtype=torch.bfloat16)
    return export(model, (q, mask), strict=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["dynamic"]:
        export_dynamic()
    elif sys.argv[1:] == ["sweep"]:
        for n in range(1, 65):
            export_static(n)
    elif len(sys.argv) == 3 and sys.argv[1] == "static" and sys.argv[2].isdigit():
        export_static(int(sys.argv[2]))
    else:
        sys.exit("usage: seed_export.py dynamic|sweep|static L")
