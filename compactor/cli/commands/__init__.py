"""One module per ``compactor`` subcommand (see ``compactor.cli``)."""
