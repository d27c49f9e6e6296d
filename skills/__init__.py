"""skills package (being built)."""
