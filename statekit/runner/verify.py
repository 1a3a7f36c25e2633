"""`verify`: rebuild an instance from its events alone and compare with what is stored.

It compares everything the store keeps that the history determines, and
reports every difference, never choosing a side: neither the stored row nor
the replay is "corrected". Per instance (`verify`): the instance row (chart
version and digest, version, configuration, context, history), each event
(its payload against its sha256 and canonical form, its status and evidence
against the replay: a timer delivery consumed because its event repeated a
recorded fact replays so only when an earlier accepted event holds that fact,
with the reason and the holder its evidence names; its idempotency key against
the key its chart version gives its payload, and no fact recorded twice), the
outbox (each message, its order, and whether its delivery state is
self-consistent), the armed timers (the instance row's
`timers` and the rows of `statekit_timers`, each column, against the
replayed state; each event replayed with the clock reading it records, so
the due times are recomputed; a cancelled child has none armed, its timers
cancelled with it), the snapshots, and the audited
rejections (a rejection must replay as the same rejection at its version; a
history conflict, or a duplicate of a fact by idempotency key, must name what
the history holds). For the whole store
(`verify_store`): the database's own integrity check, the recorded
migrations, each stored chart source against its digest, name and version
(and each version against one digest),
and rows naming instances or messages that do not exist.

What cannot be compared, and why: wall-clock times (`created_at`,
`recorded_at`, ...; nothing derives them), a dispatcher's lease
(`claimed_by`, `claimed_until`: it only delays or repeats a delivery, which
is at least once anyway), the conflict an event was re-decided after (the
`race` in its evidence: known only to its writer; its form is checked), an
event ID that emitted nothing (nothing else records it), and row keys beyond
their order.

An instance whose early events were thinned by retention
(`statekit.runner.retention`) is checked from the snapshot they were thinned to
(`pruned_start`): that snapshot against its stored sha256, chart and engine, the
thinned rows as a whole prefix each keeping its whole hash, and everything after
it as above; the report says where the check started (`checked_from`). What
cannot be checked then: the snapshot's state against the events before it, the
audited rejections before it, the messages of those events beyond their
delivery state, and the arming sequence of a timer armed before it. A delivered
message of an event at or before the instance's `outbox_through` that is not
stored was removed by retention, and an inbox row naming a message of such an
instance is not reported as unknown.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.runner.chart_versions import ChartSet
from statekit.runner.errors import UnknownInstanceError
from statekit.runner.history import created_under, fold, initial_state
from statekit.runner.json_text import parse_json
from statekit.runner.pruned_start import is_thinned, pruned_start, thinned_keys
from statekit.runner.row_differences import (
    STATUSES,
    delivery_differences,
    event_differences,
    key_differences,
    outbox_differences,
    rejection_differences,
    timer_differences,
)
from statekit.runner.snapshots import snapshot_state
from statekit.runner.store.base import Store
from statekit.runner.store.family_rows import CANCELLED
from statekit.runner.store.retention_queries import NOTHING_PRUNED, watermarks
from statekit.runner.store.rows import SnapshotRow
from statekit.runner.timers import expected_rows, timers_text


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The comparison of one instance with the replay of its history."""

    instance_id: str
    version: int
    replayed_version: int
    events: int
    differences: tuple[str, ...]
    snapshot_problems: tuple[str, ...]
    checked_from: int = 0
    """The snapshot the check started from (its events before it were pruned); 0: the
    instance's creation, every event replayed."""

    @property
    def ok(self) -> bool:
        """Whether everything stored about the instance equals the replay."""
        return not self.differences and not self.snapshot_problems

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form (`statekit verify --format json`)."""
        return {
            "instance": self.instance_id,
            "ok": self.ok,
            "version": self.version,
            "replayed_version": self.replayed_version,
            "events": self.events,
            "differences": list(self.differences),
            "snapshot_problems": list(self.snapshot_problems),
            "checked_from": self.checked_from,
        }


def verify(store: Store, charts: ChartSet, instance_id: str) -> VerifyReport:
    """Replay every event of the instance and compare (see the module docstring)."""
    with store.read():
        row = store.instance(instance_id)
        if row is None:
            raise UnknownInstanceError(f"unknown instance {instance_id!r}")
        events = store.events(instance_id)
        outbox = store.outbox(list(STATUSES), instance_id)
        snapshots = store.snapshots(instance_id)
        rejections = store.rejections(instance_id)
        timers = store.timers(instance_id)
        marks = watermarks(store, instance_id).get(instance_id, NOTHING_PRUNED)
        link = store.link(instance_id)
    # a cancelled child's timers were cancelled with it: none is expected armed (a row left
    # is reported by the family check, `family_verify`)
    cancelled = link is not None and link.status == CANCELLED
    differences: list[str] = []
    name = charts.current.name
    chart = charts.get(row.chart_version)
    if chart is None:
        differences.append(
            f"chart_version: stored {row.chart_version}, not a version of chart {name!r} "
            "available to replay"
        )
    elif chart.digest != row.chart_digest:
        differences.append(
            f"chart_digest: stored {row.chart_digest}, chart {name!r} version "
            f"{row.chart_version} has {chart.digest}"
        )
    if events and events[-1].chart_version != row.chart_version:
        differences.append(
            f"chart_version: stored {row.chart_version}, the last event was applied under "
            f"version {events[-1].chart_version}"
        )
    through = marks.events_through
    prefix = [e for e in events if e.sequence <= through]
    later = events[len(prefix) :] if through else events
    keep = frozenset(s.through_sequence for s in snapshots if isinstance(s.through_sequence, int))
    rejected_at = frozenset(r.version for r in rejections if isinstance(r.version, int))
    if through:  # the early events were pruned: from the snapshot they were pruned to
        pruned = pruned_start(charts, through, prefix, snapshots)
        differences.extend(pruned.problems)
        start = pruned.replayed(timers)
        lookup = thinned_keys(prefix)
        replayed = fold(
            charts, start, later, keep | rejected_at, with_evidence=True, recorded_key=lookup,
            instance_id=row.instance_id,
        )  # fmt: skip
        rejections = [r for r in rejections if type(r.version) is not int or r.version >= through]
    else:
        first = created_under(events, row.chart_version)
        start = initial_state(
            charts, first, row.initial_context, row.start_clock_ms, instance_id=row.instance_id
        )
        replayed = fold(
            charts, start, events, keep | rejected_at, with_evidence=True,
            instance_id=row.instance_id,
        )  # fmt: skip
    differences.extend(replayed.problems)
    if replayed.version != row.version:
        differences.append(f"version: stored {row.version}, replayed {replayed.version}")
    for event in events:
        if event.sequence <= through and is_thinned(event):
            continue  # its hash is checked by `pruned_start`, its payload is gone
        differences.extend(event_differences(event, replayed.evidence.get(event.sequence)))
    differences.extend(key_differences(charts, events, through))
    if replayed.state is not None and not replayed.problems:
        stored = {}
        for key, text in (
            ("configuration", row.columns.configuration),
            ("context", row.columns.context),
            ("history", row.columns.history),
        ):
            try:
                stored[key] = parse_json(text)
            except ValueError:
                stored[key] = f"<not JSON: {str(text)[:60]!r}>"
        differences.extend(_compare(stored, replayed.state.to_data()))
        expected = [
            (seq, m.message_id, m.type, canonical_json(dict(m.payload)))
            for seq, messages in sorted(replayed.emitted.items())
            for m in messages
        ]
        have = {(r.sequence, r.message_id) for r in outbox}
        expected = [  # a message of an event at or before `outbox_through` may be pruned
            m for m in expected if m[0] > marks.outbox_through or (m[0], m[1]) in have
        ]
        replayable = [r for r in outbox if r.sequence > through] if through else outbox
        differences.extend(outbox_differences(expected, replayable))
        armed_text = timers_text(replayed.state)
        if row.columns.timers != armed_text:
            differences.append(f"timers: stored {row.columns.timers}, replayed {armed_text}")
        if not cancelled:
            armed = expected_rows(instance_id, replayed.state, replayed.armed_at)
            differences.extend(timer_differences(armed, timers))
        states = {**replayed.states, through: start.state} if start.state is not None else {}
        for rejection in rejections:
            differences.extend(rejection_differences(rejection, charts, states, events))
    for message in outbox:
        differences.extend(delivery_differences(message))
    problems: list[str] = []
    for snap in sorted(snapshots, key=_order):
        checked = snapshot_state(charts, snap)
        state = checked.state
        if state is None:
            problems.append(f"refused {checked.refused}")
            continue
        at = snap.through_sequence
        if type(at) is int and at < through:
            continue  # before the events the check starts after: checked for itself only
        truth = replayed.states.get(at) if at != through else start.state
        if truth is None:
            problems.append(f"snapshot at {at}: the replay did not reach that sequence")
        elif truth != state:
            found = "; ".join(_compare(state.to_data(), truth.to_data(), "snapshot", "replayed"))
            problems.append(f"snapshot at {at} differs from the replay: {found}")
    return VerifyReport(
        instance_id=instance_id,
        version=row.version,
        replayed_version=replayed.version,
        events=len(events),
        differences=tuple(differences),
        snapshot_problems=tuple(problems),
        checked_from=through,
    )


def _order(row: SnapshotRow) -> tuple[bool, int, str]:
    """Snapshots by through-sequence (a damaged, non-integer one last)."""
    at = row.through_sequence
    return (True, 0, repr(at)) if type(at) is not int else (False, at, "")


def _compare(
    left: Mapping[str, Any], right: Mapping[str, Any], a: str = "stored", b: str = "replayed"
) -> Iterator[str]:
    """Differences in configuration, context (per field) and history, in words."""
    lconf, rconf = left.get("configuration", []), right.get("configuration", [])
    if not isinstance(lconf, list) or sorted(map(str, lconf)) != sorted(map(str, rconf)):
        yield f"configuration: {a} {lconf}, {b} {rconf}"
    lc, rc = left.get("context", {}), right.get("context", {})
    if isinstance(lc, dict) and isinstance(rc, dict):
        for key in sorted(set(lc) | set(rc)):
            if lc.get(key, "<absent>") != rc.get(key, "<absent>"):
                yield (
                    f"context.{key}: {a} {lc.get(key, '<absent>')!r}, "
                    f"{b} {rc.get(key, '<absent>')!r}"
                )
    elif lc != rc:
        yield f"context: {a} {lc!r}, {b} {rc!r}"
    if left.get("history") != right.get("history"):
        yield f"history: {a} {left.get('history')}, {b} {right.get('history')}"
