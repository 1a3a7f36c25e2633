"""Registers the store fixtures (a store of each kind, for the runner's and the CLI's
tests), defined and type-checked in `store_fixtures.py`, and Hypothesis's profiles.

Hypothesis runs with the `ci` profile when `CI` is set (`.ci/run` runs with `CI=true`):
derandomized (each test's examples follow from the test itself, the same on every run
and every machine), without the example database and without deadlines (a loaded
machine must not fail a test by its speed). Locally it explores: the `dev` profile is
Hypothesis's default (random examples, failures remembered in `.hypothesis/`), with
`derandomize` off also where Hypothesis would take its own `ci` defaults.
`HYPOTHESIS_PROFILE=ci` or `=dev` chooses one whatever `CI` says. The profile is loaded
here, before the test modules are imported, so that their `@settings(...)` inherit it.
"""

import os

from hypothesis import settings
from store_fixtures import (
    pg_server,
    pg_url,
    restartable_server,
    restartable_url,
    shard_urls,
    store_url,
)

__all__ = [
    "pg_server",
    "pg_url",
    "restartable_server",
    "restartable_url",
    "shard_urls",
    "store_url",
]

# `pytester` runs pytest inside pytest (the coverage plugin's tests, tests/testing/).
pytest_plugins = ["pytester"]

settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("dev", derandomize=False)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)
