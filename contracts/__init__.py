"""The shipped shape contracts, one TOML file per op under <namespace>/ (package data: shapecheck.contracts)."""
