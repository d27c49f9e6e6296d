"""The ``memory`` subcommands, one module each."""
