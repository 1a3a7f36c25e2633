"""The statekit command line (see `statekit.cli.main`)."""
