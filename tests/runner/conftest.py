"""Registers the runner's fixtures, defined and type-checked in `runner_fixtures.py`."""

from runner_fixtures import pg_server, pg_url, store_url

__all__ = ["pg_server", "pg_url", "store_url"]
