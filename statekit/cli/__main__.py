"""`python -m statekit.cli`."""

from statekit.cli.main import main

main()
