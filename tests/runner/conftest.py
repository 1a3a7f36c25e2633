"""Registers the runner's fixtures (defined, type-checked, in `runner_fixtures.py`; this
file is only a shim, since mypy cannot hold two modules named `conftest`)."""

from runner_fixtures import pg_server, pg_url, store_url

__all__ = ["pg_server", "pg_url", "store_url"]
