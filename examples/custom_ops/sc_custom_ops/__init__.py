"""Example custom ops: importing the package registers them with torch.library (real and fake kernels)."""

from . import attention, moe  # noqa: F401 - importing registers the ops

__all__ = ["attention", "moe"]
