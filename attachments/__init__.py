"""attachments package (being built)."""
