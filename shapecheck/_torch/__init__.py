"""The only door into torch internals (ShapeEnv, FakeTensorMode, symbolic contexts, schemas, sympy <-> expressions).

Whichever of its modules loads torch first, torch's warning about a missing NumPy (which shapecheck does not use)
is silenced before it: here, not in one module, since the import order of the modules is the caller's."""

import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
