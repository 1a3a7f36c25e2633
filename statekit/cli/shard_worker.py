"""`statekit worker` over a shard set: one loop that delivers the due timers of every shard.

Each shard gets the `Worker` it would get alone (its store, one runner per chart,
its reports of rows it skips); `ShardedWorker` runs their rounds one after the
other, in the set's order, until a round of all of them delivers nothing, then
sleeps until the earliest due time of any shard (at most `--max-sleep`), with
the same backoff as one worker when that time has come but the timer could not
be claimed. One process for all shards rather than one per shard: the shards'
timers come due in one order, and one signal stops them all between two
transactions. Several such workers over one set share the work as they do over
one store (a claimed timer is skipped by the others).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

from statekit.runner.runner import Runner
from statekit.runner.store.base import Store
from statekit.runner.timer_firing import key_of


class ShardLoop(Protocol):
    """What `ShardedWorker` uses of one shard's `timer_commands.Worker` (named here so that
    the command module can import this one, not the other way round)."""

    store: Store
    runners: list[Runner]
    stop: threading.Event
    until_ms: int | None
    deliveries: dict[str, int]
    problems: int

    def round(self) -> int: ...

    def orphans(self) -> None: ...


class ShardedWorker:
    """The loop of `statekit worker` given several `--db` (see the module docstring);
    `backoff`: the first and the last sleep before looking again at a due timer that
    could not be claimed (`timer_commands.BACKOFF_FIRST`, `BACKOFF_LAST`)."""

    def __init__(self, workers: Sequence[ShardLoop], backoff: tuple[float, float]) -> None:
        self.workers = list(workers)
        self.stop = threading.Event()
        self.backoff = 0.0
        self._first, self._last = backoff

    @property
    def problems(self) -> int:
        """The timer rows the shards' workers reported and skipped."""
        return sum(w.problems for w in self.workers)

    def run(self, *, once: bool, max_sleep: float) -> None:
        """`Worker.run` over every shard: report orphan rows, then deliver until stopped
        (`once`: until no shard has anything due at the clock read when it started)."""
        for worker in self.workers:
            worker.stop = self.stop
        if once:
            at = self.workers[0].runners[0].now_ms()
            for worker in self.workers:
                worker.until_ms = at
        if not self.stop.is_set():
            for worker in self.workers:
                worker.orphans()
        while not self.stop.is_set():
            fired = sum(worker.round() for worker in self.workers)
            if once and fired == 0:
                break
            if fired == 0:
                for worker in self.workers:
                    worker.deliveries.clear()
                    worker.orphans()
                self.wait(max_sleep)
            else:
                self.backoff = 0.0

    def wait(self, max_sleep: float) -> None:
        """`Worker.wait` with the earliest due time of every shard."""
        due: list[int] = []
        for worker in self.workers:
            names = [r.chart.name for r in worker.runners]
            skipped = set().union(*(r.timer_problems for r in worker.runners))
            with worker.store.read():
                upcoming = worker.store.upcoming_timers(names, len(skipped) + 1)
            due.extend(
                r.due_ms for r in upcoming if key_of(r) not in skipped and type(r.due_ms) is int
            )
        delay = max_sleep
        if due:
            now = self.workers[0].runners[0].now_ms()
            delay = min(max_sleep, max(0.0, (min(due) - now) / 1000))
        if due and delay == 0:
            self.backoff = min(max(self._first, self.backoff * 2), self._last, max_sleep)
            delay = self.backoff
        else:
            self.backoff = 0.0
        if delay > 0:
            self.stop.wait(delay)
