"""The installed statekit's version (one place, imported without importing the package's names)."""

__version__ = "0.1.0"
