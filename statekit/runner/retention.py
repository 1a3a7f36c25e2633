"""Retention: remove what a store no longer needs, in short batches (`statekit prune`).

What goes, and what stays so that every guarantee keeps holding
(docs/retention.md is the user's account):

- **delivered outbox messages** delivered before the cut-off, when no earlier
  message of their instance is still pending. Pending (claimed or not) and dead
  messages are never touched. Each instance records the last event sequence
  whose messages were removed (`statekit_retention.outbox_through`), so that
  `verify` takes a message of an event at or before it as pruned, not lost.
- **inbox rows** (a consumer's dedupe records) processed before the window the
  caller states: a message redelivered after its row went is processed again.
  The window is the dedupe window; nothing is removed without one.
- **audited rejections** recorded before the cut-off, when asked: they answer
  nothing (a rejected event ID is decided again when it comes back) and are
  checked by `verify` only while they are there.
- **events before a snapshot**, when asked: for an instance that `verify` finds
  clean, the event rows at or before its newest snapshot are *thinned*, not
  deleted: the row keeps its event ID, sequence, type, status, chart version,
  idempotency key and its whole payload hash, and loses its payload and
  evidence. A redelivery of a thinned event ID is still ALREADY_APPLIED (same
  payload) or a payload conflict (another), and a business key still finds
  its fact. The instance records the sequence it was thinned through
  (`events_through`, raised in the same transaction as the first rows
  thinned); `verify`, `rebuild` and `Runner.history` start from the snapshot
  at that sequence and say so.

Every batch is its own transaction of at most `batch` rows. On PostgreSQL the
tables rows went from are vacuumed at the end (`retention_queries.reclaim`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from statekit.engine.chart import Chart
from statekit.runner.chart_versions import chart_sets
from statekit.runner.errors import RunnerError
from statekit.runner.store import retention_queries as q
from statekit.runner.store.base import Store
from statekit.runner.verify import verify

DAY = 86_400.0
DEFAULT_DELIVERED_AGE = 7 * DAY
"""How old a delivered message must be to go when the caller does not say (7 days)."""
DEFAULT_BATCH = 1000
MAX_BATCH = 100_000
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": DAY, "w": 7 * DAY}
_T = TypeVar("_T")
_DURATION = re.compile(r"([0-9]+)([smhdw])")


class RetentionError(RunnerError, ValueError):
    """A retention setting that cannot be used (a duration or batch size out of form)."""


def parse_age(text: str, what: str = "age") -> float:
    """Seconds in a duration such as `7d`, `12h`, `30m`, `45s`, `2w`, or a sum (`1d12h`);
    a RetentionError naming `what` otherwise."""
    compact = text.strip().lower()
    parts = _DURATION.findall(compact)
    if not compact or "".join(n + u for n, u in parts) != compact:
        raise RetentionError(
            f"{what}: {text!r} is not a duration: write a whole number and a unit, "
            "s (seconds), m (minutes), h (hours), d (days) or w (weeks), e.g. 7d or 1d12h"
        )
    seconds = sum(int(n) * _UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise RetentionError(f"{what}: {text!r} is no time at all: give a positive duration")
    return seconds


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """What `prune` removes. Ages in seconds (None: that kind is kept);
    `events_before_snapshot`: thin the events of clean instances up to their newest
    snapshot; `batch`: rows per transaction; `dry_run`: count, change nothing."""

    delivered_age: float | None = DEFAULT_DELIVERED_AGE
    inbox_age: float | None = None
    rejections_age: float | None = None
    events_before_snapshot: bool = False
    batch: int = DEFAULT_BATCH
    dry_run: bool = False

    def __post_init__(self) -> None:
        if type(self.batch) is not int or not 1 <= self.batch <= MAX_BATCH:
            raise RetentionError(f"batch: {self.batch!r} is not a row count from 1 to {MAX_BATCH}")
        for name in ("delivered_age", "inbox_age", "rejections_age"):
            age = getattr(self, name)
            if age is not None and not age > 0:
                raise RetentionError(f"{name}: {age!r} is not a positive number of seconds")


@dataclass(frozen=True, slots=True)
class SkippedInstance:
    """An instance whose events were not thinned, and why."""

    instance_id: str
    reason: str
    damaged: bool


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What `prune` removed (or, in a dry run, would remove): rows per kind, the
    instances thinned and skipped, the batches run and the longest one's seconds."""

    dry_run: bool
    outbox_messages: int = 0
    inbox_rows: int = 0
    rejections: int = 0
    events_thinned: int = 0
    instances_thinned: tuple[tuple[str, int], ...] = ()
    skipped: tuple[SkippedInstance, ...] = ()
    batches: int = 0
    longest_batch_seconds: float = 0.0

    @property
    def damaged(self) -> bool:
        """Whether an instance was skipped because `verify` finds it damaged."""
        return any(s.damaged for s in self.skipped)

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form (`statekit prune --format json`)."""
        return {
            "dry_run": self.dry_run,
            "outbox_messages": self.outbox_messages,
            "inbox_rows": self.inbox_rows,
            "rejections": self.rejections,
            "events_thinned": self.events_thinned,
            "instances_thinned": [
                {"instance": i, "through": through} for i, through in self.instances_thinned
            ],
            "skipped": [
                {"instance": s.instance_id, "reason": s.reason, "damaged": s.damaged}
                for s in self.skipped
            ],
            "batches": self.batches,
            "longest_batch_seconds": round(self.longest_batch_seconds, 6),
        }


@dataclass
class _Batches:
    """Runs batches, each its own write transaction, and times them (from the lock taken
    to the COMMIT done).

    SQLite has one write lock, and a writer waiting for it sleeps and retries (its busy
    handler's sleeps grow to 100 ms): batches run back to back would take the lock again
    before a waiting writer wakes, so that it waits for many batches (bench/retention.py:
    979 ms at 100,000 messages, batches of about 50 ms). After each batch the lock is
    left free for as long as the batch held it, so a writer gets in within about one
    batch. PostgreSQL needs no pause: a batch locks no row a writer needs."""

    store: Store
    count: int = 0
    longest: float = 0.0
    clock: Callable[[], float] = field(default=time.perf_counter)
    pause: Callable[[float], None] = field(default=time.sleep)

    def run(self, batch: Callable[[], _T]) -> _T:
        with self.store.write():
            started = self.clock()
            done = batch()
        held = self.clock() - started
        self.count += 1
        self.longest = max(self.longest, held)
        if self.store.dialect == "sqlite":
            self.pause(held)
        return done

    def until_empty(self, batch: Callable[[], int]) -> int:
        total = 0
        while (done := self.run(batch)) > 0:
            total += done
        return total


def prune(
    store: Store,
    policy: RetentionPolicy = RetentionPolicy(),
    charts: Iterable[Chart] = (),
    *,
    now: float | None = None,
) -> PruneReport:
    """Remove (or count, in a dry run) what `policy` says may go, batch by batch (see the
    module docstring). `charts`: chart files for the events' check (the store's stored
    sources are used too); `now`: the wall clock the ages count back from. Call it
    outside any transaction of `store`: each batch is one of its own."""
    at = time.time() if now is None else now
    batches = _Batches(store)
    size = policy.batch
    outbox = inbox = rejections = 0
    if policy.delivered_age is not None:
        before = at - policy.delivered_age
        if policy.dry_run:
            with store.read():
                outbox = q.count_outbox(store, before)
        else:
            outbox = batches.until_empty(lambda: q.delete_outbox(store, before, size, at))
    if policy.inbox_age is not None:
        cut = at - policy.inbox_age
        if policy.dry_run:
            with store.read():
                inbox = q.count_inbox(store, cut)
        else:
            inbox = batches.until_empty(lambda: q.delete_inbox(store, cut, size))
    if policy.rejections_age is not None:
        old = at - policy.rejections_age
        if policy.dry_run:
            with store.read():
                rejections = q.count_rejections(store, old)
        else:
            rejections = batches.until_empty(lambda: q.delete_rejections(store, old, size))
    thinned: list[tuple[str, int]] = []
    skipped: list[SkippedInstance] = []
    events = 0
    if policy.events_before_snapshot:
        events = _thin_all(store, policy, list(charts), batches, at, thinned, skipped)
    if not policy.dry_run:
        changed = {
            "statekit_outbox": outbox,
            "statekit_inbox": inbox,
            "statekit_rejections": rejections,
            "statekit_events": events,
        }
        q.reclaim(store, [table for table, count in changed.items() if count])
    return PruneReport(
        dry_run=policy.dry_run,
        outbox_messages=outbox,
        inbox_rows=inbox,
        rejections=rejections,
        events_thinned=events,
        instances_thinned=tuple(thinned),
        skipped=tuple(skipped),
        batches=batches.count,
        longest_batch_seconds=batches.longest,
    )


def _thin_all(
    store: Store,
    policy: RetentionPolicy,
    given: list[Chart],
    batches: _Batches,
    now: float,
    thinned: list[tuple[str, int]],
    skipped: list[SkippedInstance],
) -> int:
    """Thin each clean instance up to its newest snapshot; return the rows thinned."""
    with store.read():
        sets = chart_sets(store, given)
        instances = store.instance_charts()
        marks = q.watermarks(store)
    total = 0
    for instance in instances:
        instance_id = instance.instance_id
        charts = sets.get(instance.chart_name)
        if charts is None:
            why = f"chart {instance.chart_name!r} is not available: pass it with --chart"
            skipped.append(SkippedInstance(instance_id, why, damaged=False))
            continue
        report = verify(store, charts, instance_id)
        if not report.ok:
            problems = [*report.differences, *report.snapshot_problems]
            why = f"verify finds it damaged ({problems[0]}); nothing of it was thinned"
            skipped.append(SkippedInstance(instance_id, why, damaged=True))
            continue
        with store.read():
            shots = [s.through_sequence for s in store.snapshots(instance_id)]
        done = marks.get(instance_id, q.NOTHING_PRUNED).events_through
        through = max((s for s in shots if s <= report.version), default=0)
        if through <= done:
            continue
        if policy.dry_run:
            with store.read():
                count = q.count_unthinned(store, instance_id, through)
        else:
            count = _thin(store, instance_id, through, batches, policy.batch, now)
        total += count
        thinned.append((instance_id, through))
    return total


def _thin(
    store: Store, instance_id: str, through: int, batches: _Batches, size: int, now: float
) -> int:
    """Thin the instance's rows through `through`, `size` rows per transaction."""
    after, count = 0, 0
    while True:
        rows, after = batches.run(
            partial(q.thin_events, store, instance_id, through, after, size, now)
        )
        if rows == 0:
            return count
        count += rows
