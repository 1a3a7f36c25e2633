"""`Inspector`: what every page of `statekit inspect` reads from, as one frozen value.

It names the store (opened read-only, one connection per server thread, never created,
upgraded or written: `open_read_only_store`), the charts given with `--chart` (by name
and version), the token a request must carry (None: none asked) and the clock the pages
use for "time left" (epoch seconds; a test passes a fixed one).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from types import MappingProxyType

from statekit.engine.chart import Chart
from statekit.runner.store import open_read_only_store
from statekit.runner.store.base import Store
from statekit.runner.store.postgres_connect import safe_url


def charts_by_version(charts: Iterable[Chart]) -> Mapping[tuple[str, int], Chart]:
    """`charts` keyed by (name, version); a later chart of the same key replaces an earlier."""
    return MappingProxyType({(chart.name, chart.version): chart for chart in charts})


@dataclass(frozen=True)
class Inspector:
    """The inspector's configuration and its read-only store connections."""

    store_url: str
    charts: Mapping[tuple[str, int], Chart] = field(default_factory=lambda: MappingProxyType({}))
    token: str | None = None
    clock: Callable[[], float] = time.time
    _local: threading.local = field(default_factory=threading.local, compare=False, repr=False)
    _opened: list[Store] = field(default_factory=list, compare=False, repr=False)
    _generation: list[int] = field(default_factory=lambda: [0], compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def store(self) -> Store:
        """This thread's read-only store (opened on first use, kept for the next request:
        a PostgreSQL connection costs a round trip or three, a SQLite one a file open).
        The integrity check is skipped: it reads the whole file, and the inspector
        reports what it can read rather than refusing a damaged store."""
        store: Store | None = getattr(self._local, "store", None)
        if store is None or self._local.generation != self._generation[0]:
            store = open_read_only_store(self.store_url, check_integrity=False)
            self._local.store, self._local.generation = store, self._generation[0]
            with self._lock:
                self._opened.append(store)
        return store

    def forget_stores(self) -> None:
        """After a failed read (a lost connection): every thread opens its store again on
        its next request (a connection is closed by the thread that opened it, or when
        it is dropped)."""
        with self._lock:
            self._generation[0] += 1
            self._opened.clear()

    def close(self) -> None:
        """Close the stores this inspector opened (when the server stops); a connection
        that belongs to another thread is left to be dropped."""
        with self._lock:
            opened, self._opened[:] = list(self._opened), []
        for store in opened:
            with suppress(Exception):  # SQLite refuses a close from another thread
                store.close()

    def chart(self, name: str, version: int) -> Chart | None:
        """The chart `name` at `version` given with `--chart`, or None."""
        return self.charts.get((name, version))

    @property
    def display_url(self) -> str:
        """The store's URL as pages and messages show it (without a password)."""
        return safe_url(self.store_url)
