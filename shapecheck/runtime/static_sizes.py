"""A fuzz example's kernel run on plain sizes, against its run with backed sizes.

fuzz checks the fake as torch.export runs it: backed sizes at the example (``trace.fake_run``). FakeTensorMode
without a ShapeEnv, as meta-device model init, ``torch.library.opcheck`` and ``torch.compile``'s first (static)
compile run it, gives the fake plain ints; a fake that asks whether a size is concrete (``statically_known_true(L ==
5)``, ``isinstance(L, int)``) takes another branch there. Its outputs must be the backed run's (which fuzz compares
with the contract): the same shapes, dtypes and strides in every dim of size greater than 1 (a size-1 dim's stride
is no layout: torch computes it differently at plain and symbolic sizes). A raise only plain sizes show is the
kernel's error, but not a data-dependent output, which needs a ShapeEnv.
"""

from __future__ import annotations

from typing import Any

from ..rules import RuleCode

HOW = "on plain sizes (FakeTensorMode without a ShapeEnv, as opcheck, meta-device init and a static torch.compile run it)"


def differences(static: list[Any], backed: list[Any]) -> list[tuple[RuleCode, str, str, str]]:
    """(rule, expected, got, message) for each way the plain-size outputs differ from the backed run's."""
    import torch

    out: list[tuple[RuleCode, str, str, str]] = []
    if len(static) != len(backed):
        return [(RuleCode.OUTPUT_SHAPE_MISMATCH, f"{len(backed)} outputs", f"{len(static)} outputs",
                 f"{HOW}, the kernel returns {len(static)} outputs; with backed sizes {len(backed)}")]
    for j, (s, b) in enumerate(zip(static, backed)):
        if not isinstance(s, torch.Tensor) or not isinstance(b, torch.Tensor):
            continue  # a data-dependent size (the backed run's DataDependent), an int, None: fuzz's other checks
        if tuple(s.shape) != tuple(b.shape):
            out.append((RuleCode.OUTPUT_SHAPE_MISMATCH, str(tuple(b.shape)), str(tuple(s.shape)),
                        f"{HOW}, output {j} is {tuple(s.shape)}; with backed sizes {tuple(b.shape)}"))
        elif s.dtype != b.dtype:
            out.append((RuleCode.OUTPUT_DTYPE_MISMATCH, str(b.dtype), str(s.dtype),
                        f"{HOW}, output {j} has dtype {s.dtype}; with backed sizes {b.dtype}"))
        elif s.layout == b.layout == torch.strided and s.numel() > 0 and any(
                n > 1 and x != y for n, x, y in zip(s.shape, s.stride(), b.stride())):
            out.append((RuleCode.OUTPUT_LAYOUT_MISMATCH, str(tuple(b.stride())), str(tuple(s.stride())),
                        f"{HOW}, output {j} has strides {tuple(s.stride())}; with backed sizes {tuple(b.stride())} "
                        f"(shape {tuple(s.shape)})"))
    return out
