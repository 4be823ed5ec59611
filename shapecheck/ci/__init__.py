"""The gate over many contracts, and baselines."""
