"""`python -m statekit`: the `statekit` command line."""

from statekit.cli.main import main

main()
