"""The kernel under test: where it comes from (``sources``) and how it is loaded."""
