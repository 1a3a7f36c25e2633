"""The `statekit` click group and exit codes; command modules register on it."""

from __future__ import annotations

import click

from statekit import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="statekit")
def cli() -> None:
    """statekit: declarative statecharts: compile, lint, render and run YAML charts."""
