"""The dim-expression language and how it is decided: expressions, simplification, the z3 solver, compiled closures. Torch-free."""
