"""`ShardedRunner`: one chart's instances spread over several databases by instance ID.

    runner = ShardedRunner.open(chart, ["postgresql://…/shard0", "postgresql://…/shard1"])
    runner.create("task-42")                 # in the shard `shard_of("task-42", 2)` names
    runner.apply("task-42", "evt-1", "TaskStarted", {...})

A router over `Runner`s rather than a `ShardedStore` under one: every call of a
runner names its instance (or is store-wide), so it can be routed whole, and each
shard keeps what makes a `Runner` correct: one database transaction per call,
with its row locks, its idempotent event IDs, its row cache and its group commit.
A `Store` cannot be routed that way: its transactions (`store.write()`) begin
before the statement that names an instance, mix instance rows with store-wide
ones (a claim of due timers, of outbox messages), and a transaction spanning two
databases would need a two-phase commit that no part of statekit asks for.

Routing is `shard_layout.shard_of` (the first 8 bytes of the SHA-256 of the
instance ID, modulo the number of shards), and the set is checked against the
layout its databases record (`shard_layout.ShardSet`): stores given in another
order, a missing one or a changed count are refused with a `ShardLayoutError`.

Instance calls (`create`, `load`, `history`, `apply`, `apply_batch`, `migrate`,
`rejections`, `snapshot`, `rebuild`, `verify`) go to the owning shard's runner,
unchanged. `apply_many` groups its commands by shard, one transaction per
shard, and answers in the order given; a store-wide failure of one shard
(`StoreFailure`, `StoreBusyError`) becomes the answer of that shard's commands
only (the other shards' groups commit and are answered: no line that committed
is left without its answer). `fire_due` and `instance_ids` visit every shard;
`fire_due` starts each call at the next shard, so a shard with more due timers
than `limit` does not starve the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from statekit.engine.chart import Chart
from statekit.runner.command_checks import check_instance_id
from statekit.runner.errors import StoreBusyError, StoreFailure
from statekit.runner.group_commit import Item
from statekit.runner.instance import Instance, RecordedEvent
from statekit.runner.migration import MigrationReport
from statekit.runner.outcome import Conflict, Outcome
from statekit.runner.runner import Runner
from statekit.runner.shard_layout import ShardSet, open_shard_set
from statekit.runner.snapshots import Rebuilt
from statekit.runner.timer_firing import TimerKey
from statekit.runner.transaction import Command
from statekit.runner.verify import VerifyReport


class ShardedRunner:
    """Durable instances of one chart over a shard set, each in the shard its ID routes to
    (see the module docstring). The arguments after `shards` are `Runner`'s, given to
    the runner of every shard. It holds one connection per shard: use one per thread
    or process."""

    def __init__(
        self,
        chart: Chart,
        shards: ShardSet,
        *,
        previous: Iterable[Chart] = (),
        snapshot_every: int | None = None,
        clock: Callable[[], int] | None = None,
    ) -> None:
        previous = tuple(previous)
        self.chart = chart
        self.shards = shards
        self.runners: tuple[Runner, ...] = tuple(
            Runner(chart, store, previous=previous, snapshot_every=snapshot_every, clock=clock)
            for store in shards.stores
        )
        """The runner of each shard, in the set's order."""
        self._first_to_fire = 0

    @classmethod
    def open(
        cls,
        chart: Chart,
        urls: Sequence[str],
        *,
        read_only: bool = False,
        previous: Iterable[Chart] = (),
        snapshot_every: int | None = None,
        clock: Callable[[], int] | None = None,
    ) -> ShardedRunner:
        """Open the stores at `urls` as a shard set (`open_shard_set`) and the runner over
        them; the stores are closed again when either is refused."""
        shards = open_shard_set(urls, read_only=read_only)
        try:
            return cls(chart, shards, previous=previous, snapshot_every=snapshot_every, clock=clock)
        except BaseException:
            shards.close()
            raise

    def runner_for(self, instance_id: str) -> Runner:
        """The runner of the shard owning `instance_id` (ValueError for a bad ID)."""
        check_instance_id(instance_id)
        return self.runners[self.shards.index_of(instance_id)]

    # ---- instance calls: the owning shard ----------------------------------------------
    def create(
        self,
        instance_id: str,
        context: Mapping[str, Any] | None = None,
        *,
        exist_ok: bool = False,
    ) -> Instance:
        """`Runner.create` in the owning shard."""
        return self.runner_for(instance_id).create(instance_id, context, exist_ok=exist_ok)

    def load(self, instance_id: str) -> Instance:
        """`Runner.load` from the owning shard."""
        return self.runner_for(instance_id).load(instance_id)

    def history(self, instance_id: str) -> list[RecordedEvent]:
        """`Runner.history` from the owning shard."""
        return self.runner_for(instance_id).history(instance_id)

    def apply(
        self,
        instance_id: str,
        event_id: str,
        type: str,
        payload: Mapping[str, Any] | None = None,
        expected_version: int | None = None,
        sequence: int | None = None,
        *,
        after_conflict: Conflict | None = None,
    ) -> Outcome:
        """`Runner.apply` in the owning shard."""
        return self.runner_for(instance_id).apply(
            instance_id,
            event_id,
            type,
            payload,
            expected_version,
            sequence,
            after_conflict=after_conflict,
        )

    def apply_batch(self, instance_id: str, commands: Iterable[Command]) -> list[Outcome]:
        """`Runner.apply_batch` in the owning shard (one instance, one transaction)."""
        return self.runner_for(instance_id).apply_batch(instance_id, commands)

    def migrate(self, instance_id: str, *, dry_run: bool = False) -> MigrationReport:
        """`Runner.migrate` in the owning shard."""
        return self.runner_for(instance_id).migrate(instance_id, dry_run=dry_run)

    def rejections(self, instance_id: str) -> list[dict[str, Any]]:
        """`Runner.rejections` from the owning shard."""
        return self.runner_for(instance_id).rejections(instance_id)

    def snapshot(self, instance_id: str) -> int:
        """`Runner.snapshot` in the owning shard."""
        return self.runner_for(instance_id).snapshot(instance_id)

    def rebuild(self, instance_id: str) -> Rebuilt:
        """`Runner.rebuild` from the owning shard."""
        return self.runner_for(instance_id).rebuild(instance_id)

    def verify(self, instance_id: str) -> VerifyReport:
        """`Runner.verify` in the owning shard."""
        return self.runner_for(instance_id).verify(instance_id)

    # ---- many instances ----------------------------------------------------------------
    def apply_many(self, commands: Iterable[tuple[str, Command]]) -> list[Item]:
        """`Runner.apply_many` per shard (one transaction each, in the set's order), the
        answers in the order given. A bad instance ID is that command's ValueError; a
        shard whose store fails as a whole (`StoreFailure`, `StoreBusyError`) answers its
        commands with that error, and the other shards' commands are applied."""
        given = list(commands)
        items: list[Item | None] = [None] * len(given)
        groups: dict[int, list[int]] = {}
        for position, (instance_id, _) in enumerate(given):
            try:
                check_instance_id(instance_id)
            except ValueError as exc:
                items[position] = exc
                continue
            groups.setdefault(self.shards.index_of(instance_id), []).append(position)
        for index in sorted(groups):
            positions = groups[index]
            try:
                answers = self.runners[index].apply_many([given[p] for p in positions])
            except (StoreFailure, StoreBusyError) as exc:
                answers = [exc] * len(positions)
            for position, answer in zip(positions, answers, strict=True):
                items[position] = answer
        return [item for item in items if item is not None]

    def fire_due(self, now_ms: int | None = None, limit: int = 1000) -> list[Outcome]:
        """`Runner.fire_due` over every shard, up to `limit` deliveries in all, starting at
        the shard after the one the previous call started at (one clock reading for all
        shards when `now_ms` is not given)."""
        at = self.now_ms() if now_ms is None else now_ms
        count = len(self.runners)
        start, self._first_to_fire = self._first_to_fire, (self._first_to_fire + 1) % count
        fired: list[Outcome] = []
        for step in range(count):
            if len(fired) >= limit:
                break
            runner = self.runners[(start + step) % count]
            fired.extend(runner.fire_due(at, limit - len(fired)))
        return fired

    def instance_ids(self) -> list[str]:
        """Every instance ID of every shard, sorted."""
        ids: list[str] = []
        for store in self.shards.stores:
            with store.read():
                ids.extend(store.instance_ids())
        return sorted(ids)

    @property
    def timer_problems(self) -> dict[TimerKey, str]:
        """The stored timer rows `fire_due` skipped, of every shard (`Runner.timer_problems`)."""
        merged: dict[TimerKey, str] = {}
        for runner in self.runners:
            merged.update(runner.timer_problems)
        return merged

    def now_ms(self) -> int:
        """The clock's reading (`Runner.now_ms`)."""
        return self.runners[0].now_ms()

    def close(self) -> None:
        """Close every shard's store."""
        self.shards.close()

    def __enter__(self) -> ShardedRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
