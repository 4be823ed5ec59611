"""The only door into torch internals (ShapeEnv, FakeTensorMode, symbolic contexts, schemas, sympy <-> expressions).

Whichever of its modules loads torch first, torch's warning about a missing NumPy (which shapecheck does not use)
is silenced before it: here, not in one module, since the import order of the modules is the caller's.

sympy's caches (``SYMPY_CACHE_SIZE``, read once when sympy is first imported; torch imports it only with its
symbolic shapes) keep 1000 entries a function by default. Each trace has a ShapeEnv of its own, but the same
symbol names and expressions recur from trace to trace, so a larger cache answers torch's symbolic arithmetic
(sympy's assumptions above all) from the traces before: 14% less CPU for im2col's 32 cases. A value the caller
set, or a sympy already imported, is left alone."""

import os
import sys
import warnings

if "sympy" not in sys.modules:
    os.environ.setdefault("SYMPY_CACHE_SIZE", "20000")

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
