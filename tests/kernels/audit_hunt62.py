"""Hunt 62's findings (amd-quark 0.13), rebuilt: two dequantize ops with the same bug, the fake keeps x's layout
(``empty_like``) where the eager kernel returns a contiguous tensor; only x's dtype differs, float32 or float8
(quark's ``dequantize_fp8_per_block``). And a samples hook whose kwargs have a key that is no argument's name."""

import torch

lib = torch.library.Library("audit62", "DEF")


def _eager(x, scale):
    torch._check(x.dim() == 2, lambda: "x must be 2-D")
    return (x.to(torch.float32) * scale.to(torch.float32)).contiguous()


def _fake(x, scale):
    torch._check(x.dim() == 2, lambda: "x must be 2-D")
    return torch.empty_like(x, dtype=torch.float32)


for _name in ("deq_f32", "deq_f8"):
    lib.define(f"{_name}(Tensor x, Tensor scale) -> Tensor")
    lib.impl(_name, _eager, "CPU")
    torch.library.register_fake(f"audit62::{_name}", _fake, lib=lib)


def samples(op):
    x = torch.randn(4, 6)
    if op == "audit62::deq_f8.default":
        return [((x.to(torch.float8_e4m3fn), torch.ones(())), {}), ((x, torch.ones(())), {1: 2})]
    if op == "audit62::deq_f32.default":
        return [((x, torch.ones(())), {})]
    return []
