"""Registers the store fixtures (a store of each kind, for the runner's and the CLI's
tests), defined and type-checked in `store_fixtures.py`."""

from store_fixtures import pg_server, pg_url, store_url

__all__ = ["pg_server", "pg_url", "store_url"]

# `pytester` runs pytest inside pytest (the coverage plugin's tests, tests/testing/).
pytest_plugins = ["pytester"]
