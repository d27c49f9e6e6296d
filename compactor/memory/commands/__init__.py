"""The ``compactor memory`` subcommands, one module each."""
