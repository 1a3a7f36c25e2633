"""Which database of a shard set owns an instance, and the check that the set is the one laid out.

An instance lives in exactly one shard, chosen by `shard_of(instance_id, count)`:
the first 8 bytes of the SHA-256 of the instance ID (its UTF-8 text), read as a
big-endian unsigned 64-bit integer, modulo the number of shards (`ROUTING`).
It depends on nothing but the ID and the count (never on Python's `hash()`,
which is salted per process, nor on the URLs), so every process, language and
version routes alike; tests/runner/test_sharding.py fixes a table of IDs and
their shards forever.

Since the route depends on the count and on the order of the databases, each
database records its place (`statekit_shard`, schema version 8): the identity
of the set (a random ID chosen when the set is first laid out), its index and
the count. `ShardSet` reads the records of the stores it is given and refuses
(`ShardLayoutError`) when they disagree with what was given: another order, a
count that changed (a shard missing or added), databases of two sets, one
database given twice. A writer lays a new set out on first use: shard 0 first
(whoever records it first wins, and every other opener adopts its identity, so
processes starting together agree), then the others. A database without a
record joins only at the index all of its instances route to (an empty one
always can), so a store used alone can become shard 0 of a set of one, and a
set whose first opening was interrupted is completed. A reader
(`open_read_only_store`) records nothing: a set must have been laid out.

Changing the count is a resharding, an explicit operation this module does not
perform (see docs/operations.md: copy each instance's rows to its new shard
with the writers stopped, then record the new layout).
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from statekit.runner.errors import ShardLayoutError
from statekit.runner.store import open_read_only_store, open_store
from statekit.runner.store.base import Store
from statekit.runner.store.migrations import SHARD_TABLE

ROUTING = "sha256-64-mod-n"
"""The name of the routing rule (`shard_of`), as the docs and errors cite it."""


def shard_of(instance_id: str, count: int) -> int:
    """The index (0 to `count` - 1) of the shard owning `instance_id`: the first 8 bytes of
    the SHA-256 of its UTF-8 text as a big-endian unsigned integer, modulo `count`.
    Fixed forever: changing it would strand every stored instance."""
    if count < 1:
        raise ValueError("a shard set has at least one shard")
    digest = hashlib.sha256(instance_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True, slots=True)
class ShardPlace:
    """What one database records of its place: the set's identity, its index, the count."""

    layout_id: str
    index: int
    count: int

    def describe(self) -> str:
        return f"shard {self.index + 1} of {self.count} of shard set {self.layout_id}"


def recorded_place(store: Store) -> ShardPlace | None:
    """The place `store`'s database records (None: it was never laid out as a shard)."""
    with store.read():
        return recorded_place_in(store)


class ShardSet:
    """Stores checked to be the shard set their databases record, in its order (see the
    module docstring); `ShardLayoutError` otherwise. Holds their connections: one per
    thread or process, as a `Store` is."""

    def __init__(self, stores: Sequence[Store]) -> None:
        self.stores: tuple[Store, ...] = tuple(stores)
        if not self.stores:
            raise ShardLayoutError("a shard set needs at least one store")
        self.layout_id = _checked_layout(self.stores)
        """The identity every database of the set records."""

    @property
    def count(self) -> int:
        return len(self.stores)

    def index_of(self, instance_id: str) -> int:
        """The index of the shard owning `instance_id` (`shard_of`)."""
        return shard_of(instance_id, len(self.stores))

    def store_for(self, instance_id: str) -> Store:
        """The store of the shard owning `instance_id`."""
        return self.stores[self.index_of(instance_id)]

    def misrouted(self) -> list[str]:
        """A line per stored instance that lives in a shard other than its own (a database
        written by something that did not route, such as a `Runner` over one shard)."""
        return [line for index in range(self.count) for line in self.misrouted_in(index)]

    def misrouted_in(self, index: int) -> list[str]:
        """`misrouted` for the shard at `index` alone."""
        store = self.stores[index]
        with store.read():
            ids = store.instance_ids()
        return [
            f"instance {instance_id!r} is stored in shard {index + 1} but routes to shard "
            f"{owner + 1} of {self.count} ({ROUTING}): the router will not find it there"
            for instance_id in ids
            if (owner := self.index_of(instance_id)) != index
        ]

    def close(self) -> None:
        """Close every store."""
        for store in self.stores:
            store.close()

    def __enter__(self) -> ShardSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_shard_set(urls: Sequence[str], *, read_only: bool = False, **options: Any) -> ShardSet:
    """Open the stores at `urls`, in order, as one shard set (`open_store`, or
    `open_read_only_store` when `read_only`, with `options`), laid out on first use and
    checked (`ShardSet`); every store is closed again when the set is refused."""
    repeated = sorted({u for u in urls if list(urls).count(u) > 1})
    if repeated:
        raise ShardLayoutError(
            f"{repeated[0]!r} is given more than once: each shard is a database of its own"
        )
    opener = open_read_only_store if read_only else open_store
    stores: list[Store] = []
    try:
        for url in urls:
            stores.append(opener(url, **options))
        return ShardSet(stores)
    except BaseException:
        for store in stores:
            store.close()
        raise


def _checked_layout(stores: tuple[Store, ...]) -> str:
    """The identity of the set `stores` are, recording it where a writer may."""
    count = len(stores)
    places = [recorded_place(s) for s in stores]
    known = {p.layout_id for p in places if p is not None}
    if len(known) > 1:
        first, second = sorted(known)[:2]
        raise ShardLayoutError(
            f"the stores given belong to two shard sets ({first} and {second}): give the "
            "databases of one set, all of them, in their order"
        )
    for index, (store, place) in enumerate(zip(stores, places, strict=True)):
        if place is not None:
            _check_place(store, place, index, count)
    if all(p is not None for p in places):
        return known.pop()
    unrecorded = [stores[i] for i, p in enumerate(places) if p is None]
    if any(s.read_only for s in unrecorded):
        raise ShardLayoutError(
            f"{_shown(unrecorded[0])} records no place in a shard set and is opened to be "
            "read: a set is laid out by its first writer (`statekit run` or `statekit worker` "
            "with the same --db list, or `ShardedRunner`); to read a store used on its own, "
            "give only its URL"
        )
    layout_id = known.pop() if known else uuid.uuid4().hex
    for index, (store, place) in enumerate(zip(stores, places, strict=True)):
        if place is None:  # shard 0 first: whoever lays a new set out first names it
            got = _join(store, ShardPlace(layout_id, index, count))
            _check_place(store, got, index, count)
            layout_id = got.layout_id if index == 0 else layout_id
            if got.layout_id != layout_id:
                raise ShardLayoutError(
                    f"{_shown(store)} is {got.describe()}, but shard 1 given is of shard set "
                    f"{layout_id}: give the databases of one set, all of them, in their order"
                )
    return layout_id


def _join(store: Store, place: ShardPlace) -> ShardPlace:
    """Record `place` in `store` unless another opener recorded one first; what it records.
    Refused when the database holds instances that route to another index."""
    with store.write():
        ids = store.instance_ids()
        strays = [i for i in ids if shard_of(i, place.count) != place.index]
        if strays and recorded_place_in(store) is None:
            raise ShardLayoutError(
                f"{_shown(store)} holds {len(strays)} instance(s) that route to another "
                f"shard of {place.count} ({ROUTING}; {strays[0]!r} to shard "
                f"{shard_of(strays[0], place.count) + 1}), so it cannot join the set as shard "
                f"{place.index + 1}: a store used on its own becomes a set by a resharding "
                "(docs/operations.md)"
            )
        store.execute(
            f"INSERT INTO {SHARD_TABLE} (singleton, layout_id, shard_index, shard_count, "
            "recorded_at) VALUES (1, ?, ?, ?, ?) ON CONFLICT (singleton) DO NOTHING",
            (place.layout_id, place.index, place.count, time.time()),
        )
        got = recorded_place_in(store)
    assert got is not None  # inserted, or there already
    return got


def recorded_place_in(store: Store) -> ShardPlace | None:
    """`recorded_place` inside the caller's transaction."""
    row = store.execute(f"SELECT layout_id, shard_index, shard_count FROM {SHARD_TABLE}").fetchone()
    return None if row is None else ShardPlace(str(row[0]), int(row[1]), int(row[2]))


def _check_place(store: Store, place: ShardPlace, index: int, count: int) -> None:
    """Refuse a database whose recorded place is not where it was given."""
    if place.count != count:
        what = (
            f"a shard is missing: give all {place.count}, in their order"
            if count < place.count
            else f"a shard was added: give the {place.count} of the set, in their order"
        )
        raise ShardLayoutError(
            f"{_shown(store)} is {place.describe()}, but {count} store(s) were given: {what}; "
            "changing the number of shards is a resharding (docs/operations.md)"
        )
    if place.index != index:
        raise ShardLayoutError(
            f"{_shown(store)} is {place.describe()} but was given as shard {index + 1}: give "
            "the URLs in the order the set was laid out (or one database was given twice)"
        )


def _shown(store: Store) -> str:
    """The store's URL as messages show it (without a password)."""
    parts = urlsplit(store.url)
    if parts.password is None:
        return store.url
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}@{host}"))
