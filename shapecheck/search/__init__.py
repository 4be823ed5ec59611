"""The Hypothesis search over a contract's domain: plans, strategies, examples, boundary values, repair of drawn points."""
