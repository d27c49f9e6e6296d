"""One module per ``ccr`` subcommand (see ``ccr.cli``)."""
