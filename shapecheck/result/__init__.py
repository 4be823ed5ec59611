"""What the commands produce, as data (no rendering)."""
