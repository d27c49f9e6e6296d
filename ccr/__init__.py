"""ccr package (being built)."""
