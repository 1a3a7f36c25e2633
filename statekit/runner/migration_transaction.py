"""`Runner.migrate`'s write transaction: an instance moved to the runner's chart version.

One transaction (a read-only one for a dry run): the instance row read and locked, its
state mapped (`migration.map_state`, at the runner's clock reading, which the entry
records as its `clock_ms` so a replay arms the timers of the states it enters alike),
then the migration's history entry, the version-guarded move of the instance, the timer
rows of renamed, re-timed, dropped and newly armed timers and the snapshot due at the
new version written, and the moved row remembered
(`write_stages`: the runner's chart, its versions and its row cache).
"""

from __future__ import annotations

import time
from dataclasses import replace

from statekit.engine.state import State
from statekit.runner.errors import UnknownInstanceError
from statekit.runner.hashes import encode_payload
from statekit.runner.migration import (
    MIGRATE_TYPE,
    Mapped,
    MigrationReport,
    Stranded,
    entry_evidence,
    entry_payload,
    map_state,
    migration_event_id,
    state_sha256,
)
from statekit.runner.snapshots import snapshot_row
from statekit.runner.store.base import Store
from statekit.runner.store.rows import EventRow
from statekit.runner.stored_state import state_columns
from statekit.runner.timers import timer_row
from statekit.runner.write_stages import WriteStages


def migrate_instance(stages: WriteStages, instance_id: str, *, dry_run: bool) -> MigrationReport:
    """See `Runner.migrate` (`instance_id` checked by the caller)."""
    store, chart = stages.store, stages.chart
    now_ms = stages.now_ms()
    with store.read() if dry_run else store.write():
        row = store.instance(instance_id, lock=not dry_run)
        if row is None:
            raise UnknownInstanceError(f"unknown instance {instance_id!r}")
        old = stages.chart_of(row)
        before = stages.state_of(row)
        configuration = tuple(before.to_data()["configuration"])
        report = MigrationReport(
            instance_id=instance_id,
            status="CURRENT",
            from_version=old.version,
            to_version=chart.version,
            configuration=configuration,
        )
        if old.digest == chart.digest:
            return report
        try:
            mapped = map_state(before, old, chart, now_ms)
        except Stranded as exc:
            return replace(report, status="STRANDED", reason=str(exc))
        after = mapped.state
        report = replace(
            report,
            status="WOULD_MIGRATE" if dry_run else "MIGRATED",
            mapped_configuration=tuple(after.to_data()["configuration"]),
            mapping=mapped.mapping,
            state_sha256_before=state_sha256(before),
            state_sha256_after=state_sha256(after),
        )
        if dry_run:
            return report
        now = time.time()
        version = row.version + 1
        payload = entry_payload(old.version, chart.version, mapped.mapping)
        encoded = encode_payload(MIGRATE_TYPE, payload)
        store.insert_events(
            [
                EventRow(
                    instance_id=instance_id,
                    sequence=version,
                    event_id=migration_event_id(old.version, chart.version),
                    type=MIGRATE_TYPE,
                    payload=encoded.text,
                    payload_sha256=encoded.sha256,
                    status="APPLIED",
                    chart_version=chart.version,
                    evidence=entry_evidence(before, after, old, chart, mapped),
                    recorded_at=now,
                    clock_ms=now_ms,
                )
            ]
        )
        columns = state_columns(after)
        moved = store.update_instance(
            instance_id,
            read_version=row.version,
            new_version=version,
            chart=stages.chart_key(chart),
            columns=columns,
            now=now,
        )
        if not moved:
            raise RuntimeError(f"instance {instance_id!r} moved during its own migration")
        if mapped.timer_ids or mapped.retimed or mapped.dropped_timers or mapped.armed_timers:
            _move_timer_rows(store, instance_id, after, mapped, version)
        if stages.snapshot_every and version % stages.snapshot_every == 0:
            store.insert_snapshot(snapshot_row(instance_id, version, after, now))
    stages.rows.put(
        replace(
            row,
            chart_name=chart.name,
            chart_version=chart.version,
            chart_digest=chart.digest,
            version=version,
            columns=columns,
            recorded=None,
        ),
        after,
    )
    return replace(report, sequence=version)


def _move_timer_rows(
    store: Store, instance_id: str, after: State, mapped: Mapped, sequence: int
) -> None:
    """Replace the rows of the timers a migration renamed (old ID → new ID) or re-timed
    with rows of the mapped state's timers, keeping the sequence that armed them (and
    their generation), delete the rows of the timers it dropped, and insert those of the
    timers the states it entered armed (armed by the entry at `sequence`)."""
    timer_ids = {**{t: t for t in mapped.retimed}, **mapped.timer_ids}
    gone = sorted({*timer_ids, *mapped.dropped_timers})
    armed_by = {
        r.timer_id: r.sequence
        for r in store.timers(instance_id)
        if r.timer_id in timer_ids and type(r.sequence) is int
    }
    store.delete_timers(instance_id, gone)
    moved = {new: armed_by.get(old, 0) for old, new in timer_ids.items()}
    moved.update(dict.fromkeys(mapped.armed_timers, sequence))
    store.insert_timers(
        [timer_row(instance_id, t, moved[t.id]) for t in after.timers if t.id in moved]
    )
