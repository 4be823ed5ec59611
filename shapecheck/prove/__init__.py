"""Contract x Trace -> obligations -> findings: verify's stages and their orchestration (``verify``)."""
