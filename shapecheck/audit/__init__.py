"""``audit``: every op's meta kernel explored on its own input sizes; drafts of contracts."""
