"""shapecheck's version: read by the public facade, the cache key and the SARIF reports, none of which may import
the package ``__init__`` (it sits above them)."""

__version__ = "0.1.0"
