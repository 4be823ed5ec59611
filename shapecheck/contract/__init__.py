"""Contracts: TOML -> ``Contract`` -> ``BoundCase`` (one combination of choices). Nothing here traces or proves."""
