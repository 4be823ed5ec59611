"""The only door into torch internals (ShapeEnv, FakeTensorMode, symbolic contexts, schemas, sympy <-> expressions)."""
