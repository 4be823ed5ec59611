"""CPU ports of the MPS attention paths behind ``aten._scaled_dot_product_attention_math_for_mps``.

One module per Metal kernel family (``vector_1pass``, ``vector_2pass``, ``prefill``) or MPSGraph path
(``general``, ``general_chunked``); each ``forward`` returns both outputs exactly as the runtime does.
``run`` dispatches like the runtime of an era, ``select_path`` names the path, ``math_reference`` is the
float64 oracle. Plain torch on CPU; imports nothing from ``shapecheck``.
"""

from metal_ref import general, general_chunked, prefill, vector_1pass, vector_2pass
from metal_ref._common import RuntimeCheckError as RuntimeCheckError
from metal_ref._common import RuntimeNotImplementedError as RuntimeNotImplementedError
from metal_ref._common import math_reference as math_reference
from metal_ref.dispatch import ERAS as ERAS
from metal_ref.dispatch import PATHS as PATHS
from metal_ref.dispatch import run as run
from metal_ref.dispatch import select_path as select_path

__all__ = [
    "ERAS",
    "PATHS",
    "RuntimeCheckError",
    "RuntimeNotImplementedError",
    "general",
    "general_chunked",
    "math_reference",
    "prefill",
    "run",
    "select_path",
    "vector_1pass",
    "vector_2pass",
]
