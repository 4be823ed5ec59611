"""CPU ports of the MPS attention paths behind ``aten._scaled_dot_product_attention_math_for_mps``.

One module per Metal kernel family (``vector_1pass``, ``vector_2pass``, ``prefill``) or MPSGraph path
(``general``, ``general_chunked``); each ``forward`` returns both outputs exactly as the runtime does.
``run`` dispatches like the runtime of an era, ``select_path`` names the path, ``math_reference`` is the
float64 oracle. Plain torch on CPU; imports nothing from ``shapecheck``.
"""

import warnings

# torch warns at import when numpy is absent; these ports never convert to numpy
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

from metal_ref import general, general_chunked, prefill, vector_1pass, vector_2pass  # noqa: E402
from metal_ref._common import RuntimeCheckError as RuntimeCheckError  # noqa: E402
from metal_ref._common import RuntimeNotImplementedError as RuntimeNotImplementedError  # noqa: E402
from metal_ref._common import math_reference as math_reference  # noqa: E402
from metal_ref.dispatch import ERAS as ERAS  # noqa: E402
from metal_ref.dispatch import PATHS as PATHS  # noqa: E402
from metal_ref.dispatch import run as run  # noqa: E402
from metal_ref.dispatch import select_path as select_path  # noqa: E402

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
