"""Runtime references (metal_ref, the op's eager kernel), ``fuzz op`` and ``ref check``."""
