"""`--db URL`, repeatable: the one option of the commands that take a store or a shard set.

One URL is a store (as it always was); several, in order, are a shard set
(`statekit.runner.shard_layout`): instances routed by the SHA-256 of their ID,
each database's place in the set recorded by the first writer and checked at
every opening, so a set given in another order, with a shard missing or added,
is a usage error (exit 2) before anything is read or written. `run`, `worker`,
`verify`, `outbox` and `prune` take it; a command opens the set with `open_cli_shards`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from statekit.runner.errors import RunnerError
from statekit.runner.shard_layout import ShardSet, open_shard_set, recorded_place
from statekit.runner.store.base import Store

F = TypeVar("F", bound=Callable[..., Any])

DB_HELP = (
    "Store URL: sqlite:///path.db or postgresql://…; repeat it for a shard set (every "
    "database of the set, in the order it was laid out)."
)


def db_option(command: F) -> F:
    """The `--db` option (repeatable; at least one), passed as `urls`, a tuple of URLs."""
    option = click.option("--db", "urls", multiple=True, required=True, metavar="URL", help=DB_HELP)
    return option(command)


def open_cli_shards(urls: Sequence[str], *, read_only: bool = False, **options: Any) -> ShardSet:
    """The stores at `urls` opened and checked as one shard set (`open_shard_set`; a reader
    when `read_only`), or a usage error (exit 2) saying why not."""
    try:
        return open_shard_set(urls, read_only=read_only, **options)
    except RunnerError as exc:
        raise click.UsageError(str(exc)) from exc


def refuse_lone_shard(store: Store) -> None:
    """A usage error when `store` is one shard of a set of several: a command that routes
    instances (`run`) must be given the whole set, or it would create and look for
    instances where the router never does."""
    try:
        place = recorded_place(store)
    except RunnerError as exc:
        raise click.UsageError(str(exc)) from exc
    if place is not None and place.count > 1:
        store.close()
        raise click.UsageError(
            f"the store is {place.describe()}: give every database of the set with --db, "
            "in its order, so that instances are routed to their shard"
        )
