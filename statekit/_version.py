"""The version of statekit, in one place (the package root, the CLI and the runner read it)."""

__version__ = "0.2.0"
