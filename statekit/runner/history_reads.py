"""The stored history and audit rows of an instance, read back as `Runner.history` and
`Runner.rejections` return them (moved here from `runner.runner`): accepted events
after the snapshot they were pruned to, if any (`runner.retention`), and the audited
rejections, history conflicts and duplicates, each parsed with a positioned
CorruptRowError for a damaged column."""

from __future__ import annotations

from typing import Any

from statekit.runner.errors import UnknownInstanceError
from statekit.runner.evidence import stored_evidence
from statekit.runner.instance import RecordedEvent
from statekit.runner.store.base import Store
from statekit.runner.store.retention_queries import NOTHING_PRUNED, watermarks
from statekit.runner.stored_state import loads


def recorded_history(store: Store, instance_id: str) -> list[RecordedEvent]:
    """The accepted events of an instance, in order; after the snapshot its events were
    pruned to, when they were (UnknownInstanceError for an instance not stored)."""
    with store.read():
        if store.instance(instance_id) is None:
            raise UnknownInstanceError(f"unknown instance {instance_id!r}")
        marks = watermarks(store, instance_id).get(instance_id, NOTHING_PRUNED)
        rows = store.events(instance_id, after=marks.events_through)
    where = f"instance {instance_id!r} event"
    return [
        RecordedEvent(
            sequence=r.sequence,
            event_id=r.event_id,
            type=r.type,
            payload=loads(r.payload, f"{where} #{r.sequence} payload"),
            payload_sha256=r.payload_sha256,
            status=r.status,
            chart_version=r.chart_version,
            evidence=stored_evidence(r.evidence, r.event_id, f"{where} #{r.sequence} evidence"),
            recorded_at=r.recorded_at,
            idempotency_key=r.idempotency_key,
            clock_ms=r.clock_ms,
        )
        for r in rows
    ]


def recorded_rejections(store: Store, instance_id: str) -> list[dict[str, Any]]:
    """The audited rejections, history conflicts and duplicates of a fact (by
    idempotency key) of an instance, oldest first."""
    return [
        {
            "event_id": r.event_id,
            "type": r.type,
            "payload": loads(r.payload, f"rejection payload of {r.event_id!r}"),
            "status": r.status,
            "reason": r.reason,
            "message": r.message,
            "version": r.version,
            "detail": loads(r.detail, f"rejection detail of {r.event_id!r}"),
            "recorded_at": r.recorded_at,
        }
        for r in store.rejections(instance_id)
    ]
